"""Partition leases: a group of processes shares the partitions, each held by one at a time.

Used by the projector (``hearts project``) and the timekeeper (``hearts timekeeper``). A member
holds partition N while it holds the lease key ``key_of(N)`` (SET NX PX, in the partition's
cluster slot, renewed at each ``refresh``). Live members announce themselves in a sorted set
(``members_key``, score = when their announcement runs out), and each takes at most its fair
share (partitions / live members, rounded up), giving back any beyond it, so a newcomer gets
partitions from the others within a lease's time and a dead member's partitions are free once
its leases run out.
"""

from __future__ import annotations

import contextlib
import logging
import time
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

    def refresh(self, on_taken: Callable[[int], Any] = lambda partition: None) -> None:
        """Renew the leases held, give back any beyond the fair share, take free ones up to it
        (``on_taken(partition)`` for each one newly taken)."""
        now_ms = int(time.time() * 1000)
        self.redis.zadd(self.members_key, {self.owner: now_ms + self.lease_ms})
        self.redis.zremrangebyscore(self.members_key, "-inf", now_ms)
        alive = max(1, int(self.redis.zcard(self.members_key)))
        share = -(-self.partitions // alive)
        for p in sorted(self.owned):
            if not self._renew(keys=[self.key_of(p)], args=[self.owner, self.lease_ms]):
                log.warning("%s lost partition %d", self.owner, p)
                self.owned.discard(p)
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
