"""Which live streams' clients have gone, seen without waking the streams.

A stream learns that its client left only when a write fails, and an idle stream writes once a
keep-alive interval (15 s): until then it holds its place among the bounded open streams. One
prober per process (a thread; a greenlet under gunicorn's gevent workers) looks at every open
stream's socket (gunicorn's, in the WSGI environ) every ``interval`` seconds with one poll call,
peeks (reads nothing) at those that are readable, and cancels the stream whose client has closed
its end: the stream ends and gives its place back. Waking every stream to look would cost each
of 2,000 idle streams a wake-up per interval; this costs one poll over their sockets.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

INTERVAL_SECONDS = 1.0


def _original_poll() -> Callable[[], Any]:
    """The system's poll, even under gevent's monkey-patching: a poll with timeout 0 never
    blocks, and gevent's would register a watcher per socket on every call."""
    try:
        from gevent import monkey
    except ImportError:
        return select.poll
    return monkey.get_original("select", "poll")


class Departures:
    def __init__(self, interval: float = INTERVAL_SECONDS) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._sockets: dict[int, tuple[Any, Callable[[], None]]] = {}
        self._running = False
        self._poll = _original_poll()

    def watch(self, sock: Any, gone: Callable[[], None]) -> Callable[[], None]:
        """Call ``gone`` once ``sock``'s peer has closed its end; returns the function that
        stops watching (call it when the stream ends). Without a socket: nothing to watch."""
        if sock is None:
            return lambda: None
        try:
            fd = sock.fileno()
        except (OSError, ValueError):
            return lambda: None
        with self._lock:
            self._sockets[fd] = (sock, gone)
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name="hearts-departures", daemon=True).start()

        def forget() -> None:
            with self._lock:
                if self._sockets.get(fd, (None,))[0] is sock:
                    del self._sockets[fd]

        return forget

    def watched(self) -> int:
        with self._lock:
            return len(self._sockets)

    def _run(self) -> None:
        while True:
            time.sleep(self.interval)
            with self._lock:
                if not self._sockets:
                    self._running = False
                    return
                watched = dict(self._sockets)
            try:
                self._probe(watched)
            except Exception:  # never let the prober die: streams would hold their places
                log.warning("probing the streams' clients failed", exc_info=True)

    def _probe(self, watched: dict[int, tuple[Any, Callable[[], None]]]) -> None:
        poller = self._poll()
        for fd in watched:
            poller.register(fd, select.POLLIN)
        for fd, _ in poller.poll(0):
            sock, gone = watched[fd]
            if _closed(sock):
                with self._lock:
                    if self._sockets.get(fd, (None,))[0] is sock:
                        del self._sockets[fd]
                gone()


def _closed(sock: Any) -> bool:
    """Readable and at its end (a peeked b""), or failing: the peer has closed its end. Nothing
    is read: a client that sent bytes after its request is seen to go when a write fails."""
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except (OSError, ValueError):
        return True
