"""The queue of hand analyses for ``hearts analyst`` processes (docs/analysis.md).

One Redis stream per partition, in the partition's cluster slot::

    <prefix>:{p<N>}:analysisq     stream of jobs: fields game_id, hand
                                  consumer group "analysts"

A job is delivered to one analyst of the group (XREADGROUP); the analyst acknowledges and
deletes it when the analysis is kept. While it works it renews its claim (XCLAIM of its own entry,
which resets the entry's idle time), so an entry idle for longer than ``claim_idle_ms`` belongs
to an analyst that died: the next analyst to look takes it over (XAUTOCLAIM). That is Redis's
own exactly-once delivery for a group, per partition, so it holds on a cluster without any
cross-slot command; the projector's partition leases are not needed because no order between
jobs matters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis.exceptions as redis_errors

from service.store.event_store import RedisEventStore

GROUP = "analysts"
MAX_QUEUED = 1000  # jobs waiting in one partition at most (each is seconds of CPU)


@dataclass(frozen=True, slots=True)
class QueuedJob:
    partition: int
    entry_id: str
    game_id: str
    hand: int


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class AnalysisQueue:
    def __init__(self, store: RedisEventStore, claim_idle_ms: int = 60_000) -> None:
        self.store = store
        self.redis = store.redis
        self.claim_idle_ms = claim_idle_ms
        self._grouped: set[int] = set()
        self._next = 0  # the partition a take starts at (round robin)

    def key(self, partition: int) -> str:
        return f"{self.store.prefix}:{{p{partition}}}:analysisq"

    def push(self, game_id: str, hand: int) -> bool:
        """Queue a job; False when its partition's queue is full."""
        partition = self.store.partition_of(game_id)
        key = self.key(partition)
        if self.redis.xlen(key) >= MAX_QUEUED:
            return False
        self._group(partition)
        self.redis.xadd(key, {"game_id": game_id, "hand": str(int(hand))})
        return True

    def take(self, consumer: str) -> QueuedJob | None:
        """The next job for ``consumer``: one an analyst that died left (idle past
        ``claim_idle_ms``), else a new one; None when every partition's queue is empty."""
        partitions = self.store.partitions
        for i in range(partitions):
            partition = (self._next + i) % partitions
            job = self._take_from(partition, consumer)
            if job is not None:
                self._next = (partition + 1) % partitions
                return job
        return None

    def _take_from(self, partition: int, consumer: str) -> QueuedJob | None:
        key = self.key(partition)
        if not self.redis.exists(key):
            return None
        self._group(partition)
        claimed = self.redis.xautoclaim(
            key, GROUP, consumer, min_idle_time=self.claim_idle_ms, start_id="0-0", count=1
        )
        entries = claimed[1] if claimed else []
        if not entries:
            reply = self.redis.xreadgroup(GROUP, consumer, {key: ">"}, count=1)
            entries = reply[0][1] if reply else []
            if isinstance(reply, dict):  # RESP3 clients answer a mapping
                entries = next(iter(reply.values()), [[]])[0]
        for entry_id, fields in entries:
            if fields is None:  # deleted meanwhile
                continue
            values = {_text(k): _text(v) for k, v in fields.items()}
            return QueuedJob(partition, _text(entry_id), values["game_id"], int(values["hand"]))
        return None

    def renew(self, job: QueuedJob, consumer: str) -> None:
        """Still working on ``job``: reset its idle time so no one takes it over."""
        self.redis.xclaim(self.key(job.partition), GROUP, consumer, 0, [job.entry_id], justid=True)

    def done(self, job: QueuedJob) -> None:
        key = self.key(job.partition)
        self.redis.xack(key, GROUP, job.entry_id)
        self.redis.xdel(key, job.entry_id)

    def _group(self, partition: int) -> None:
        if partition in self._grouped:
            return
        try:
            self.redis.xgroup_create(self.key(partition), GROUP, id="0", mkstream=True)
        except redis_errors.ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise
        self._grouped.add(partition)
