"""Throwaway redis-server processes for tests.

``start_redis_server(tmpdir)`` starts a private redis-server on a free loopback
port with its data in ``tmpdir`` and returns ``(process, url)``. Tests that need
persistence (crash tests) pass ``appendonly=True`` and may restart a server on
the same ``port`` and ``tmpdir`` to see what survived.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis

REDIS_SERVER_ENV = "HEARTS_REDIS_SERVER"


class RedisServerMissing(RuntimeError):
    pass


def redis_server_binary() -> str:
    """Path of the redis-server binary ($HEARTS_REDIS_SERVER, PATH, /usr/bin)."""
    candidates = [os.environ.get(REDIS_SERVER_ENV), shutil.which("redis-server")]
    candidates.append("/usr/bin/redis-server")
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise RedisServerMissing(
        "redis-server not found (looked at $HEARTS_REDIS_SERVER, PATH and /usr/bin). "
        "Install it, e.g. `apt-get install -y redis-server` (.ci/run does this)."
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis_server(
    tmpdir: str | os.PathLike,
    appendonly: bool = False,
    *,
    port: int | None = None,
    extra_args: tuple[str, ...] | list[str] = (),
    timeout: float = 10.0,
) -> tuple[subprocess.Popen, str]:
    """Start redis-server with its files in ``tmpdir``; return ``(process, url)``.

    The server listens on 127.0.0.1 only, saves no RDB snapshots, and keeps an
    append-only file (fsync every second unless ``extra_args`` say otherwise)
    only if ``appendonly``. Without ``port`` a free one is picked (retried if
    another process takes it first). Stop it with :func:`stop_redis_server`.
    """
    binary = redis_server_binary()
    directory = Path(tmpdir)
    directory.mkdir(parents=True, exist_ok=True)
    attempts = 1 if port is not None else 5
    last_error = ""
    for _ in range(attempts):
        chosen = port if port is not None else free_port()
        log_path = directory / f"redis-{chosen}.log"
        args = [
            binary,
            "--port",
            str(chosen),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(directory),
            "--save",
            "",
            "--appendonly",
            "yes" if appendonly else "no",
            "--daemonize",
            "no",
            "--logfile",
            str(log_path),
            *extra_args,
        ]
        out_path = directory / f"redis-{chosen}.out"
        with open(out_path, "ab") as out:
            process = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
            )
        url = f"redis://127.0.0.1:{chosen}/0"
        if _wait_until_ready(process, url, timeout):
            return process, url
        stop_redis_server(process)
        last_error = "".join(
            path.read_text(errors="replace")[-1000:]
            for path in (out_path, log_path)
            if path.exists()
        )
    raise RuntimeError(f"redis-server did not start: {last_error}")


def _wait_until_ready(process: subprocess.Popen, url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            try:
                if client.ping():
                    return True
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                # ResponseError: "LOADING" while an AOF is replayed.
                pass
            time.sleep(0.02)
        return False
    finally:
        client.close()


def stop_redis_server(process: subprocess.Popen, timeout: float = 10.0) -> None:
    """Stop a server started by :func:`start_redis_server` (SIGTERM, then SIGKILL)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
