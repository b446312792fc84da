"""Real gunicorn (``hearts serve``) on a free port, a tiny JSON client, and an SSE reader."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import children
from tests.redis_helpers import free_port

# Each server's log by port: a failing web test shows the tail of the logs of the servers its
# pages talked to (tests/web/conftest.py).
SERVER_LOGS: dict[int, Path] = {}


def start_server(
    redis_url: str, key_prefix: str, log_dir: Path, **env: str
) -> tuple[subprocess.Popen, int]:
    """``hearts serve`` with one worker (so idle streams share it); (process, port)."""
    port = free_port()
    environment = {
        **os.environ,
        "REDIS_URL": redis_url,
        "HEARTS_KEY_PREFIX": key_prefix,
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    log = open(log_dir / f"gunicorn-{port}.log", "wb")  # noqa: SIM115 - closed with the process
    SERVER_LOGS[port] = log_dir / f"gunicorn-{port}.log"
    args = [sys.executable, "-m", "service.cli", "serve", "--port", str(port)]
    args += ["--workers", "1", "--no-projector"]
    process = children.start(
        args, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError((log_dir / f"gunicorn-{port}.log").read_text())
        try:
            status, _, _ = request(port, "GET", "/healthz", timeout=1)
            if status == 200:
                return process, port
        except OSError:
            pass
        time.sleep(0.1)
    stop_server(process)
    raise RuntimeError("gunicorn did not answer /healthz")


def stop_server(process: subprocess.Popen) -> None:
    """Quick shutdown (SIGINT) of the gunicorn master this test started, then its group."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def request(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 10,
) -> tuple[int, dict[str, str], Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        all_headers = {"Content-Type": "application/json"} if data is not None else {}
        all_headers.update(headers or {})
        conn.request(method, path, body=data, headers=all_headers)
        response = conn.getresponse()
        raw = response.read()
        is_json = "json" in response.getheader("Content-Type", "")
        parsed = json.loads(raw) if raw and is_json else raw
        return response.status, dict(response.getheaders()), parsed
    finally:
        conn.close()


@dataclass
class Message:
    id: int | str | None = None
    event: str = "message"
    data: Any = None
    comments: list[str] = field(default_factory=list)


class SSEStream:
    """Reads Server-Sent Events from one GET; one message at a time."""

    def __init__(
        self,
        port: int,
        path: str,
        headers: dict[str, str],
        timeout: float = 10,
        source: str | None = None,
    ):
        # ``source``: the client's address (any 127.x.y.z on Linux), to be another client.
        where = (source, 0) if source is not None else None
        self.conn = http.client.HTTPConnection(
            "127.0.0.1", port, timeout=timeout, source_address=where
        )
        self.conn.request("GET", path, headers={"Accept": "text/event-stream", **headers})
        self.response = self.conn.getresponse()
        self.status = self.response.status

    def next(self) -> Message | None:
        """The next message (or comment block); None at the end of the stream."""
        message = Message()
        data: list[str] = []
        seen = False
        while True:
            line = self.response.readline()
            if not line:
                return None
            text = line.decode("utf-8").rstrip("\r\n")
            if text == "":
                if seen:
                    if data:
                        message.data = json.loads("\n".join(data))
                    return message
                continue
            seen = True
            name, _, value = text.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "":
                message.comments.append(value)
            elif name == "id":  # a game's seq, or a player notice's "<n>-<m>"
                message.id = int(value) if value.isdigit() else value
            elif name == "event":
                message.event = value
            elif name == "data":
                data.append(value)

    def close(self) -> None:
        self.conn.close()
