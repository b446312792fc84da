"""Every call to the archive store, guarded: timed, counted, and cut short while the store is
down (issue 43).

The archive store (service/store/blobs.py: a directory, or S3 through s3_blobs.py) is the one
dependency besides Redis, and only ended games and the public log's tiles live there: a store
that is gone must cost the readers of those a quick 503, never a 500, a hung worker or a log
line per request. :class:`GuardedBlobStore` wraps the store ``blob_store_from_url`` opens, so
every caller (the archiver, the event store's reads of archived games, the public log's tiles,
``hearts archive``) goes through it:

- a failure to reach the store (a ``BlobStoreError`` from the backend, an ``OSError`` from
  the disk; ``BlobConflict`` and a bad name are answers, and any other exception a bug that
  keeps its traceback) is :class:`StoreUnavailable`, a ``BlobStoreError`` with
  ``retry_after`` seconds, which the API answers as 503 ``unavailable`` with ``Retry-After``;
- :class:`Circuit`: after ``failures`` failures in a row, calls fail at once for
  ``open_seconds`` (nothing sent to the store), then one trial call goes through: its success
  closes the circuit, its failure opens it again. So a dead store costs a request nothing, and
  the store is not hammered while it comes back;
- one log line when the store goes, a summary a minute while it stays gone, one line when it is
  back (service/store/outage.py);
- metrics: each call's latency and each failure, by operation (service/metrics.py).

The time a call may take is bounded below it, by the backend: the S3 client's connect and read
timeouts and its attempts (s3_blobs.py). A directory's calls are the kernel's: a hung network
filesystem is not cut short here (nothing in a process can interrupt a blocked read(2)), but its
errors are counted, logged and answered the same way.

Not ``pybreaker``: its breaker holds one lock across the guarded call, so every call of a
process to the store would wait for the one before it (a stalled store would then hold every
worker's reader in line behind one read).
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from service import metrics
from service.store.blobs import BlobConflict, BlobStore, BlobStoreError
from service.store.outage import Outage

log = logging.getLogger(__name__)

T = TypeVar("T")

FAILURES = 3  # failures in a row that open the circuit
OPEN_SECONDS = 15.0  # how long an open circuit refuses calls before one trial call
RETRY_AFTER = 5  # Retry-After of a failure while the circuit is still closed
ADVICE = (
    "archived games and the public log's tiles answer 503 and ended games wait in Redis until "
    "it is back; check that the store named by HEARTS_ARCHIVE_URL is up and reachable "
    "from this host"
)


class StoreUnavailable(BlobStoreError):
    """The archive store could not be reached (or its circuit is open): retry after
    ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Circuit:
    """A circuit breaker: closed (calls go through), open after ``failures`` failures in a row
    (calls refused for ``open_seconds``), then half-open (one trial call at a time goes
    through). Thread-safe; the lock is held only to change the state, never across a call."""

    def __init__(
        self,
        *,
        failures: int = FAILURES,
        open_seconds: float = OPEN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures = failures
        self.open_seconds = open_seconds
        self.clock = clock
        self.failed_in_a_row = 0
        self.opened_at: float | None = None  # clock() when it opened; None: closed
        self._trial = False  # a trial call is under way (half-open)
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half-open`` (a trial call may go through)."""
        if self.opened_at is None:
            return "closed"
        return "open" if self.clock() < self.opened_at + self.open_seconds else "half-open"

    def retry_after(self) -> int:
        """Seconds until a call may go through again (at least 1)."""
        if self.opened_at is None:
            return 1
        return max(1, math.ceil(self.opened_at + self.open_seconds - self.clock()))

    def allow(self) -> bool:
        """Whether a call may go through now (a half-open circuit lets one at a time)."""
        with self._lock:
            if self.opened_at is None:
                return True
            if self.clock() < self.opened_at + self.open_seconds or self._trial:
                return False
            self._trial = True
            return True

    def succeeded(self) -> bool:
        """Record a success; whether it closed an open circuit."""
        with self._lock:
            was_open = self.opened_at is not None
            self.failed_in_a_row, self.opened_at, self._trial = 0, None, False
            return was_open

    def failed(self) -> bool:
        """Record a failure; whether it opened the circuit (again)."""
        with self._lock:
            self.failed_in_a_row += 1
            if self._trial or (self.opened_at is None and self.failed_in_a_row >= self.failures):
                self.opened_at, self._trial = self.clock(), False
                return True
            return False


class GuardedBlobStore:
    """A blob store whose every call goes through one :class:`Circuit`, timed and counted;
    otherwise the store it wraps (``inner``)."""

    def __init__(
        self,
        inner: BlobStore,
        *,
        circuit: Circuit | None = None,
        outage: Outage | None = None,
    ) -> None:
        self.inner = inner
        self.url = inner.url
        self.circuit = circuit or Circuit()
        self.outage = outage or Outage(
            log,
            "archive",
            dependency=f"the archive store {inner.url}",
            advice=ADVICE,
            is_outage=lambda error: True,
        )
        self.last_error: str | None = None

    def __getattr__(self, name: str) -> Any:  # the backend's own attributes (root, client)
        if name == "inner":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _call(self, op: str, name: str, fn: Callable[..., T], *args: Any) -> T:
        if not self.circuit.allow():
            retry = self.circuit.retry_after()
            metrics.store_refused(op)
            raise StoreUnavailable(
                f"the archive store is unavailable ({self.last_error}); not tried again for "
                f"{retry} s",
                retry,
            )
        started = time.perf_counter()
        try:
            result = fn(*args)
        except (BlobConflict, ValueError):
            self._succeeded(op, started)  # an answer: the store is there
            raise
        except (BlobStoreError, OSError) as error:  # anything else is a bug: its traceback
            metrics.store_call(op, time.perf_counter() - started, failed=True)
            self.last_error = f"{op} {name}: {_short(error)}"
            opened = self.circuit.failed()
            self.outage.failed(error, "; the circuit opens" if opened else "")
            retry = self.circuit.retry_after() if self.circuit.opened_at else RETRY_AFTER
            raise StoreUnavailable(
                f"the archive store is unavailable ({self.last_error})", retry
            ) from error
        self._succeeded(op, started)
        return result

    def _succeeded(self, op: str, started: float) -> None:
        metrics.store_call(op, time.perf_counter() - started, failed=False)
        self.circuit.succeeded()
        self.last_error = None
        self.outage.ok()

    def status(self) -> dict[str, Any]:
        """What /readyz says of the store: ``ok``, or ``down`` with the last error and the
        circuit's state (no call made)."""
        if self.outage.down or self.circuit.opened_at is not None:
            return {
                "status": "down",
                "error": self.last_error,
                "circuit": self.circuit.state,
                "retry_after": self.circuit.retry_after(),
            }
        return {"status": "ok", "circuit": self.circuit.state}

    def probe(self) -> dict[str, Any]:
        """One cheap call (the size of an object that is not there), then :meth:`status`."""
        with contextlib.suppress(StoreUnavailable):
            self.size("readyz-probe")
        return self.status()

    # The BlobStore interface -------------------------------------------------------------

    def put(self, name: str, data: bytes) -> None:
        self._call("put", name, self.inner.put, name, data)

    def replace(self, name: str, data: bytes) -> None:
        self._call("replace", name, self.inner.replace, name, data)

    def delete(self, name: str) -> None:
        self._call("delete", name, self.inner.delete, name)

    def get(self, name: str) -> bytes | None:
        return self._call("get", name, self.inner.get, name)

    def exists(self, name: str) -> bool:
        return self._call("exists", name, self.inner.exists, name)

    def size(self, name: str) -> int | None:
        return self._call("size", name, self.inner.size, name)

    def names(self, prefix: str = "") -> Iterator[str]:
        # Listed whole within the call (a failure halfway is one failure, not a generator that
        # dies in its reader's hands); the service lists only the public log's tiles, after
        # a restore: thousands of names, not millions.
        return iter(self._call("list", prefix, lambda: list(self.inner.names(prefix))))


def _short(error: BaseException) -> str:
    """An error in one line, without the S3 URL the message may repeat."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]
