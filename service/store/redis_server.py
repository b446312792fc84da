"""The Redis to use: a client for REDIS_URL, or the embedded server when REDIS_URL is not set.

URLs: ``redis://``, ``rediss://`` and ``unix://`` are one Redis server (redis-py's
``Redis.from_url``); ``redis+cluster://host:port`` (``rediss+cluster://`` with TLS) is a Redis
Cluster reached through any of its nodes (redis-py's ``RedisCluster``, which learns the other
nodes and follows MOVED/ASK redirections); ``fakeredis://`` is an in-process store that holds
nothing after the process ends (``hearts serve --ephemeral`` only).

Embedded: with ``redis-server`` on PATH, a private server for this data directory (default: the
user's data directory, ``service.settings.data_directory``), listening only on a unix socket
there, with the append-only file on and fsync every second (``--appendonly yes --appendfsync
everysec``), so games survive a restart of the service (and a crash, losing at most the last
second). If a server from an earlier run still answers on that socket, it is reused. The server
is started to end with the process that started it, even one killed with SIGKILL
(``service.lifeline``). Without the binary :func:`start` raises :class:`NoRedis`: the service
never falls back to memory on its own.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
import redis.cluster

from service.lifeline import die_with_parent
from service.settings import data_directory

log = logging.getLogger(__name__)

FAKE_URL = "fakeredis://"
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
WARNING = (
    "\n" + "!" * 78 + "\n!! --ephemeral: every game lives in this process's memory (fakeredis).\n"
    "!! NOTHING SURVIVES A RESTART, and only one worker can run. Install redis-server\n"
    "!! (apt-get install redis-server) or set REDIS_URL for real use.\n" + "!" * 78 + "\n"
)
NO_REDIS = (
    "no Redis to use: REDIS_URL is not set and there is no redis-server on PATH. "
    "Install redis-server (apt-get install redis-server), or set REDIS_URL "
    "(redis://host:port/0, or redis+cluster://host:port for a Redis Cluster); "
    "`hearts serve --ephemeral` keeps games in memory only, and loses them all when it stops."
)


class NoRedis(RuntimeError):
    """Neither REDIS_URL nor redis-server: nowhere durable to keep games."""

    def __init__(self) -> None:
        super().__init__(NO_REDIS)


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


def start(data_dir: str | Path | None = None, *, binary: str | None = None) -> EmbeddedRedis:
    """The URL of the embedded default, a private redis-server; :class:`NoRedis` without one.
    ``data_dir`` None: the default data directory (see ``service.settings.data_directory``)."""
    binary = binary or shutil.which("redis-server")
    if binary is None:
        raise NoRedis()
    if data_dir is None:
        data_dir, note = data_directory(None)
        if note:
            log.warning("%s", note)
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
    process = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        preexec_fn=die_with_parent(),  # see service/lifeline.py
    )
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


def ephemeral() -> EmbeddedRedis:
    """The in-process store, after saying loudly on stderr that nothing survives."""
    print(WARNING, file=sys.stderr, flush=True)
    log.warning("--ephemeral: using fakeredis, nothing survives a restart")
    return EmbeddedRedis(FAKE_URL)


def is_cluster(client: Any) -> bool:
    """Whether ``client`` talks to a Redis Cluster (commands are routed by key slot)."""
    return isinstance(client, redis.cluster.RedisCluster)


def is_fake(client: Any) -> bool:
    """Whether ``client`` is fakeredis's (an in-process server: ``--ephemeral``, unit tests)."""
    return type(client).__module__.startswith("fakeredis")


def _answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        return bool(client.ping())
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
        return False
    finally:
        client.close()


def client_for(url: str) -> Any:
    """A client for a URL (see the module docstring): ``redis.Redis``, ``RedisCluster`` or, for
    ``fakeredis://``, an in-process fakeredis (installed by the ``test`` or ``ephemeral`` extra)."""
    if url == FAKE_URL:
        try:
            import fakeredis
        except ImportError:
            raise RuntimeError(
                "--ephemeral needs fakeredis: pip install 'hearts[ephemeral]'"
            ) from None
        return fakeredis.FakeRedis(server=fakeredis.FakeServer())
    scheme, sep, rest = url.partition("://")
    if sep and scheme in CLUSTER_SCHEMES:
        return redis.cluster.RedisCluster.from_url(f"{CLUSTER_SCHEMES[scheme]}://{rest}")
    return redis.Redis.from_url(url, health_check_interval=30)


def follower_client_for(url: str, read_timeout: float) -> Any:
    """The live followers' own client (service/store/live.py) for a URL ``client_for`` serves:
    a pool apart from the one ordinary requests use, with a socket timeout longer than one
    blocking XREAD (``read_timeout`` seconds); None for ``fakeredis://`` (one process's
    memory: the followers share the app's client)."""
    if url == FAKE_URL:
        return None
    scheme, sep, rest = url.partition("://")
    if sep and scheme in CLUSTER_SCHEMES:
        return redis.cluster.RedisCluster.from_url(
            f"{CLUSTER_SCHEMES[scheme]}://{rest}", socket_timeout=read_timeout
        )
    client = redis.Redis.from_url(url, health_check_interval=30)
    # Ours, even if the URL sets a shorter one (?socket_timeout=) for ordinary requests.
    client.connection_pool.connection_kwargs["socket_timeout"] = read_timeout
    return client
