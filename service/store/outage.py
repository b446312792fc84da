"""Background loops losing their Redis (it stopped, or the master that ran it went away): one
log line per lost connection, no traceback; any other failure keeps its traceback (a bug).

Each loop (the timekeeper, the bot runner, the seek sweep, the expiry sweep) holds an ``Outage``:
``failed(error)`` where it caught an exception, ``ok()`` after a pass that worked."""

from __future__ import annotations

import logging

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


def unreachable(error: BaseException) -> bool:
    """Whether ``error`` (or what it was raised from) says Redis cannot be reached."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, UNREACHABLE):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class Outage:
    """The state of one loop's connection: down after a failure to reach Redis, until a pass
    works again."""

    def __init__(self, log: logging.Logger, what: str) -> None:
        self.log = log
        self.what = what
        self.down = False

    def failed(self, error: BaseException, then: str = "") -> None:
        """Log ``error``: once per lost connection if Redis is unreachable (one line, no
        traceback), else with its traceback. ``then``: what the loop does next."""
        if not unreachable(error):
            self.log.error("%s failed%s", self.what, then, exc_info=error)
            return
        if not self.down:
            self.down = True
            self.log.warning("%s: Redis unreachable (%s)%s", self.what, error, then)

    def ok(self) -> None:
        """A pass worked: the next failure to reach Redis is a new outage, logged again."""
        if self.down:
            self.down = False
            self.log.debug("%s: Redis reachable again", self.what)
