"""Bounds on live event streams: how many one process holds open, and how many one client does.

A stream costs no Redis connection (service/store/live.py) but one of the worker's connections
(gevent's ``worker_connections``) and a little memory for hours; without a bound one client
could hold them all. Counted per process: with several workers a client may hold up to
``per_client`` streams in each (the rate of stream opens is limited separately, across workers).
"""

from __future__ import annotations

import threading
from collections import Counter

from service.app.errors import StreamsFull, TooManyStreams

RETRY_AFTER_SECONDS = 5


class StreamSlots:
    """At most ``per_worker`` streams open in this process, ``per_client`` per client (its key:
    service/app/client_address.py, an IPv4 address or an IPv6 /64).
    ``retry_after``: the seconds a refused client is told to wait (a stream whose client has
    gone gives its slot back within about a second: service/api/departures.py)."""

    def __init__(
        self, per_worker: int, per_client: int, *, retry_after: int = RETRY_AFTER_SECONDS
    ) -> None:
        if per_worker < 1 or per_client < 1:
            raise ValueError("stream limits must be at least 1")
        self.per_worker = per_worker
        self.per_client = per_client
        self.retry_after = max(1, retry_after)
        self._lock = threading.Lock()
        self._open = 0
        self._by_client: Counter[str] = Counter()

    def take(self, client: str) -> Slot:
        """A slot for one more stream of ``client``; TooManyStreams or StreamsFull if none."""
        with self._lock:
            if self._by_client[client] >= self.per_client:
                raise TooManyStreams(self.per_client, self.retry_after)
            if self._open >= self.per_worker:
                raise StreamsFull(self.per_worker, self.retry_after)
            self._by_client[client] += 1
            self._open += 1
        return Slot(self, client)

    def open(self, client: str | None = None) -> int:
        """Streams open now (of ``client``, or all)."""
        with self._lock:
            return self._open if client is None else self._by_client[client]

    def _give_back(self, client: str) -> None:
        with self._lock:
            self._open -= 1
            self._by_client[client] -= 1
            if self._by_client[client] <= 0:
                del self._by_client[client]


class Slot:
    """One open stream's place; :meth:`release` (any number of times) gives it back."""

    def __init__(self, slots: StreamSlots, client: str) -> None:
        self._slots = slots
        self._client = client
        self._held = True
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            held, self._held = self._held, False
        if held:
            self._slots._give_back(self._client)
