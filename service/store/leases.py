"""Partition leases: a group of processes shares the partitions, each held by one at a time.

Used by the projector (``hearts project``) and the timekeeper (``hearts timekeeper``). A member
holds partition N while it holds the lease key ``key_of(N)`` (SET NX PX, in the partition's
cluster slot, renewed at each ``refresh``). Live members announce themselves in a sorted set
(``members_key``, score = when their announcement runs out), and each takes at most its fair
share (partitions / live members, rounded up), giving back any beyond it, so a newcomer gets
partitions from the others within a lease's time and a dead member's partitions are free once
its leases run out.

A member that stops gives its leases back (``release_all``, or ``close``: given back and never
taken again), so another takes over at once rather than after ``lease_ms``. The CLI's long
runners do it on SIGTERM; a ``hearts serve`` worker, whose archiver runs in a thread, does it
for every lease of the process with :func:`close_all` as gunicorn tells it to stop
(service/cli/serve.py).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import weakref
import zlib
from collections.abc import Callable
from typing import Any

import redis as redis_lib

log = logging.getLogger(__name__)

# KEYS: 1 lease. ARGV: 1 owner, 2 lease ms. Renews the lease if the owner still holds it.
_RENEW_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
# KEYS: 1 lease. ARGV: 1 owner. Gives the lease back if the owner still holds it.
_RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


# Every PartitionLeases of this process, for close_all (weak: a dropped one is forgotten).
_LIVE: weakref.WeakSet[PartitionLeases] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


def close_all() -> int:
    """Give back every lease this process holds and take none again (a graceful stop); how
    many partitions were given back."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    given = 0
    for leases in live:
        held = len(leases.owned)
        try:
            leases.close()
        except Exception as error:  # its client is closed or broken: the others still go
            log.warning("%s: leases not given back (%s); they lapse", leases.owner, error)
            continue
        given += held
    return given


class PartitionLeases:
    def __init__(
        self,
        redis: Any,
        *,
        partitions: int,
        key_of: Callable[[int], str],
        members_key: str,
        owner: str,
        lease_ms: int,
    ) -> None:
        self.redis = redis
        self.partitions = partitions
        self.key_of = key_of
        self.members_key = members_key
        self.owner = owner
        self.lease_ms = lease_ms
        self.owned: set[int] = set()
        self._renew = redis.register_script(_RENEW_LUA)
        self._release = redis.register_script(_RELEASE_LUA)
        self.closed = False  # closed: stopping, takes nothing again
        with _LIVE_LOCK:
            _LIVE.add(self)

    def refresh(self, on_taken: Callable[[int], Any] = lambda partition: None) -> None:
        """Renew the leases held, give back any beyond the fair share, take free ones up to it
        (``on_taken(partition)`` for each one newly taken). Nothing once closed."""
        if self.closed:
            return
        now_ms = int(time.time() * 1000)
        self.redis.zadd(self.members_key, {self.owner: now_ms + self.lease_ms})
        self.redis.zremrangebyscore(self.members_key, "-inf", now_ms)
        alive = max(1, int(self.redis.zcard(self.members_key)))
        share = -(-self.partitions // alive)
        lost = [
            p
            for p in sorted(self.owned)
            if not self._renew(keys=[self.key_of(p)], args=[self.owner, self.lease_ms])
        ]
        if lost:  # one line for one event (a stall, an outage), however many partitions
            self.owned.difference_update(lost)
            log.warning(
                "%s lost %d partition(s) (%s): their leases lapsed before it renewed them "
                "(this process stalled, or Redis was out of reach, for over %.0f s); the other "
                "members take them over, and it takes its share again",
                self.owner,
                len(lost),
                _ranges(lost),
                self.lease_ms / 1000,
            )
        for p in sorted(self.owned, reverse=True)[: max(0, len(self.owned) - share)]:
            self._release(keys=[self.key_of(p)], args=[self.owner])
            self.owned.discard(p)
        # Start at a different partition per member, so newcomers do not all contend for 0.
        start = zlib.crc32(self.owner.encode()) % self.partitions
        for p in ((start + i) % self.partitions for i in range(self.partitions)):
            if len(self.owned) >= share:
                break
            if p in self.owned:
                continue
            if self.closed:  # closed meanwhile (by another thread): take nothing more
                break
            if self.redis.set(self.key_of(p), self.owner, nx=True, px=self.lease_ms):
                self.owned.add(p)
                on_taken(p)

    def release_all(self) -> None:
        """Give back every lease (a clean stop: another member takes over at once)."""
        with contextlib.suppress(redis_lib.RedisError):
            for p in sorted(self.owned):
                self._release(keys=[self.key_of(p)], args=[self.owner])
            self.redis.zrem(self.members_key, self.owner)
        self.owned.clear()

    def close(self) -> None:
        """Give back every lease and never take one again (the holder is stopping)."""
        self.closed = True
        self.release_all()


def _ranges(partitions: list[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` as ``0-2, 5, 7-8``."""
    runs: list[list[int]] = []
    for p in sorted(partitions):
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
