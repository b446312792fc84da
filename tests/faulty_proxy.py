"""A TCP proxy in front of a test server that can fail on demand: ``forward`` (a working
store), ``refuse`` (nothing listens: connections are refused) and ``stall`` (connections are
accepted and never answered, as a hung store or a black-holed route). Switching mode drops the
connections open through it, so a client's pooled connections see the change at once.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import urlparse


class FaultyProxy:
    def __init__(self, target: str) -> None:
        parsed = urlparse(target)  # http://host:port
        self.target = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.mode = "forward"
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.port = 0
        self._listen()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed: refusing
            if listener is not self._listener:  # refusing (or listening anew) meanwhile
                client.close()
                return
            with self._lock:
                self._open.append(client)
            if self.mode == "stall":
                continue  # held open, never read, never answered
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.append(upstream)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    def switch(self, mode: str) -> None:
        """``forward``, ``refuse`` or ``stall``; drops every connection open through it."""
        assert mode in ("forward", "refuse", "stall")
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()
        if mode == "refuse" and self._listener is not None:
            # shutdown(2) first: a close(2) alone leaves the socket listening while the accept
            # thread is blocked on it (Linux).
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        elif mode != "refuse" and self._listener is None:
            self._listen()  # the same port again
        self.mode = mode

    def close(self) -> None:
        self.switch("refuse")


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
