"""A dependency lost (Redis stopped, the master that ran it went away, the archive store does not
answer): one log line when it goes, a summary now and then while it stays gone, one line when it
is back (saying how long it was gone); no traceback. Any other failure keeps its traceback (a
bug).

Each background loop (the timekeeper, the bot runner, the seek sweep, the expiry sweep, the
archiver, the live readers) holds an ``Outage``: ``failed(error)`` where it caught an exception,
``ok()`` after a pass that worked. The archive store's guard (service/store/blob_guard.py) and
the API's error handler (service/api/problems.py) hold one each too, for the requests that fail
while a dependency is gone: an outage is a few lines, however many requests it fails."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import redis
from redis import exceptions as redis_errors

# What "Redis cannot be reached" looks like to a client: the server gone, a socket file removed,
# a node of a cluster down or moving its slots, a server still loading its data.
UNREACHABLE: tuple[type[BaseException], ...] = (
    redis.ConnectionError,
    redis.TimeoutError,
    redis_errors.BusyLoadingError,
    redis_errors.ClusterError,
    redis_errors.TryAgainError,
    redis_errors.SlotNotCoveredError,
)

# While a dependency stays gone, a line at most this often says how many failures it caused.
SUMMARY_SECONDS = 60.0
# What an operator does when Redis is gone (said once, in the line that says it went).
REDIS_ADVICE = (
    "check that Redis (REDIS_URL, or hearts serve's embedded redis-server) runs and is reachable "
    "from this host; everything resumes by itself once it answers (docs/operations.md, Redis)"
)


def unreachable(error: BaseException) -> bool:
    """Whether ``error`` (or what it was raised from) says Redis cannot be reached."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, UNREACHABLE):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class Outage:
    """The state of one user of a dependency: down after a failure to reach it, until a call
    works again. Thread-safe (the API's workers share one)."""

    def __init__(
        self,
        log: logging.Logger,
        what: str,
        *,
        dependency: str = "Redis",
        advice: str | None = None,
        is_outage: Callable[[BaseException], bool] = unreachable,
        summary_seconds: float = SUMMARY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log = log
        self.what = what
        self.dependency = dependency
        # What an operator should do, said in the line that says it went.
        self.advice = (
            advice if advice is not None else REDIS_ADVICE if dependency == "Redis" else ""
        )
        self.is_outage = is_outage
        self.summary_seconds = summary_seconds
        self.clock = clock
        self.down = False
        self.since = 0.0  # clock() when it went
        self.failures = 0  # failures since it went
        self._said = 0  # failures already summarised
        self._summary_at = 0.0
        self._lock = threading.Lock()

    def failed(self, error: BaseException, then: str = "") -> None:
        """Log ``error``: once per outage if the dependency is unreachable (one line, no
        traceback; a summary every ``summary_seconds`` while it lasts), else with its
        traceback. ``then``: what the caller does next."""
        if not self.is_outage(error):
            self.log.error("%s failed%s", self.what, then, exc_info=error)
            return
        with self._lock:
            now = self.clock()
            self.failures += 1
            if not self.down:
                self.down, self.since, self.failures, self._said = True, now, 1, 1
                self._summary_at = now + self.summary_seconds
                went = True
            else:
                went = False
                if now < self._summary_at:
                    return
                recent, self._said = self.failures - self._said, self.failures
                self._summary_at = now + self.summary_seconds
        if went:
            advice = f"; {self.advice}" if self.advice else ""
            self.log.warning(
                "%s: %s unreachable (%s)%s%s", self.what, self.dependency, error, then, advice
            )
        else:
            self.log.warning(
                "%s: %s still unreachable after %.0f s (%d more failure(s) since the last line)",
                self.what,
                self.dependency,
                now - self.since,
                recent,
            )

    def ok(self) -> None:
        """A call worked: one line saying how long the dependency was gone; the next failure
        to reach it is a new outage, logged again."""
        if not self.down:  # the common case, without the lock
            return
        with self._lock:
            if not self.down:
                return
            self.down = False
            gone, failures = self.clock() - self.since, self.failures
            self.failures = 0
        self.log.warning(
            "%s: %s reachable again after %.1f s (%d failure(s) meanwhile)",
            self.what,
            self.dependency,
            gone,
            failures,
        )
