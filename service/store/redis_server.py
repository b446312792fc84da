"""The Redis to use when REDIS_URL is not set.

With ``redis-server`` on PATH: a private server for this data directory (default ``./.hearts/``),
listening only on a unix socket there, with the append-only file on and fsync every second
(``--appendonly yes --appendfsync everysec``), so games survive a restart of the service (and a
crash, losing at most the last second). If a server from an earlier run still answers on that
socket (the service was killed), it is reused. Without the binary: fakeredis inside the process,
with a loud warning, because then nothing survives a restart.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import redis

log = logging.getLogger(__name__)

FAKE_URL = "fakeredis://"
WARNING = (
    "\n"
    + "!" * 78
    + "\n!! No REDIS_URL and no redis-server on PATH: using fakeredis inside this process.\n"
    "!! NOTHING SURVIVES A RESTART, and only one worker can run. Install redis-server\n"
    "!! (apt-get install redis-server) or set REDIS_URL for real use.\n" + "!" * 78 + "\n"
)


@dataclass
class EmbeddedRedis:
    url: str
    process: subprocess.Popen | None = None  # None: reused, or fakeredis

    def stop(self, timeout: float = 10.0) -> None:
        """Stop a server this object started (SIGTERM: Redis fsyncs the AOF and exits)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(data_dir: str | Path = ".hearts", *, binary: str | None = None) -> EmbeddedRedis:
    """A Redis URL for the embedded default: a private redis-server, else ``fakeredis://``."""
    binary = binary or shutil.which("redis-server")
    if binary is None:
        print(WARNING, file=sys.stderr, flush=True)
        log.warning("using fakeredis: nothing survives a restart")
        return EmbeddedRedis(FAKE_URL)
    directory = Path(data_dir).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    socket = directory / "redis.sock"
    url = f"unix://{socket}"
    if socket.exists() and _answers(url):
        log.info("reusing the embedded redis-server at %s", socket)
        return EmbeddedRedis(url)
    socket.unlink(missing_ok=True)
    args = [
        binary,
        "--port",
        "0",
        "--unixsocket",
        str(socket),
        "--unixsocketperm",
        "700",
        "--dir",
        str(directory),
        "--appendonly",
        "yes",
        "--appendfsync",
        "everysec",
        "--save",
        "",
        "--daemonize",
        "no",
        "--logfile",
        str(directory / "redis.log"),
    ]
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited; see {directory / 'redis.log'}")
        if socket.exists() and _answers(url):
            log.info("started the embedded redis-server (AOF on) in %s", directory)
            return EmbeddedRedis(url, process)
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"redis-server did not answer; see {directory / 'redis.log'}")


def _answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        return bool(client.ping())
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
        return False
    finally:
        client.close()


def client_for(url: str) -> redis.Redis:
    """A client for a Redis URL, or an in-process fakeredis for ``fakeredis://``."""
    if url == FAKE_URL:
        import fakeredis

        return fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return redis.Redis.from_url(url, health_check_interval=30)
