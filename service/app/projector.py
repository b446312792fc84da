"""The projector: applies the partition logs to the read models, each event exactly once.

Delivery and acknowledgement go through a Redis consumer group (``projector``) on every partition
log; correctness does not depend on them. For the entries delivered from partition N, the
projector makes the current generation's checkpoint reach the newest of them: it reads the log
from the checkpoint on and applies it in order, a run of entries per atomic step (see
:mod:`service.store.read_models`), and only then XACKs. So:

- a crash after the apply and before the XACK leaves the entries pending; whoever gets them next
  (this consumer on restart, or another one via XAUTOCLAIM once they are idle long enough) finds
  them behind the checkpoint and only acknowledges them;
- several projectors side by side may be handed entries of one partition out of order; whichever
  applies first moves the checkpoint, the other's step is refused as stale and it re-reads the
  checkpoint, so every entry is applied once and in log order;
- after a rebuild swaps in a new generation, the first delivery brings it up to date from its own
  checkpoint.

``rebuild`` folds the whole log into a fresh generation with the same apply step, then swaps it
in (see :func:`rebuild`).

``on_applied`` (optional) is called with the running count of applied entries right after each
atomic step, before anything is acknowledged: the crash tests kill the process from there.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import redis as redis_lib

from service.app import game_log
from service.store.read_models import (
    APPLIED,
    RETIRED,
    ProjectionStore,
    new_generation_id,
    stream_id,
)

log = logging.getLogger(__name__)

GROUP = "projector"
# A consumer with nothing pending and idle this long is removed from the group (a dead process).
DEAD_CONSUMER_IDLE_MS = 3600 * 1000


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def default_consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class Projector:
    """One projector process's loop (run it in a thread, or as ``hearts project``)."""

    def __init__(
        self,
        projections: ProjectionStore,
        *,
        group: str = GROUP,
        consumer: str | None = None,
        batch_size: int = 256,
        block_ms: int = 1000,
        claim_idle_ms: int = 30_000,
        claim_interval: float = 5.0,
        on_applied: Callable[[int], None] | None = None,
        generation: str | None = None,
    ) -> None:
        self.projections = projections
        # Pinned: always this generation (a reference build); else whatever the pointer names.
        self.generation = generation
        self.store = projections.store
        self.redis = projections.redis
        self.group = group
        self.consumer = consumer or default_consumer_name()
        self.batch_size = batch_size
        self.block_ms = block_ms
        self.claim_idle_ms = claim_idle_ms
        self.claim_interval = claim_interval
        self.on_applied = on_applied
        self.applied = 0  # log entries this projector applied (not counting no-ops)
        self.acked = 0
        self._keys = self.store.partition_log_keys()
        self._partition_of_key = {key: p for p, key in enumerate(self._keys)}

    # Set-up -----------------------------------------------------------------

    def ensure_groups(self) -> None:
        """Create the consumer group on every partition log (from the start of the log)."""
        for key in self._keys:
            try:
                self.redis.xgroup_create(key, self.group, id="0", mkstream=True)
            except redis_lib.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    # The loop -----------------------------------------------------------------

    def run(self, stop: threading.Event | None = None) -> None:
        """Until ``stop`` is set: take deliveries, reclaim idle ones, apply, acknowledge."""
        stop = stop or threading.Event()
        self.ensure_groups()
        if self.generation is None:
            self.projections.ensure_generation()
        self.recover_own()
        next_claim = 0.0
        while not stop.is_set():
            try:
                if time.monotonic() >= next_claim:
                    self.reclaim()
                    next_claim = time.monotonic() + self.claim_interval
                self.poll()
            except redis_lib.ConnectionError:
                log.warning("projector: Redis unreachable; retrying in 1 s")
                stop.wait(1.0)
            except Exception:  # keep going: the entries stay pending and are retried
                log.exception("projector: failed to apply; retrying in 1 s")
                stop.wait(1.0)
        log.info(
            "projector %s stopped: applied %d log entries, acknowledged %d",
            self.consumer,
            self.applied,
            self.acked,
        )

    def poll(self, block_ms: int | None = None, count: int | None = None) -> int:
        """Take new deliveries (waiting up to ``block_ms``), apply and ack; returns how many."""
        block = self.block_ms if block_ms is None else block_ms
        try:
            reply = self.redis.xreadgroup(
                self.group,
                self.consumer,
                {key: ">" for key in self._keys},
                count=count or self.batch_size,
                block=block if block > 0 else None,
            )
        except redis_lib.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self.ensure_groups()  # first run, or the groups were lost (e.g. a wiped Redis)
            return 0
        return self._handle(_stream_entries(reply))

    def recover_own(self) -> int:
        """Entries delivered to this consumer name before (a restart under the same name)."""
        reply = self.redis.xreadgroup(
            self.group, self.consumer, {key: "0" for key in self._keys}, count=100_000
        )
        return self._handle(_stream_entries(reply))

    def reclaim(self) -> int:
        """Take over entries pending on other consumers for longer than ``claim_idle_ms``."""
        handled = 0
        for key in self._keys:
            start = "0-0"
            while True:
                reply = self.redis.xautoclaim(
                    key,
                    self.group,
                    self.consumer,
                    self.claim_idle_ms,
                    start_id=start,
                    count=self.batch_size,
                )
                # Not JUSTID: redis-py drops the next start id from a JUSTID reply.
                start = _text(reply[0])
                ids = [_text(entry_id) for entry_id, _ in reply[1]]
                if ids:
                    handled += self._handle({key: ids})
                if start == "0-0":
                    break
            self._forget_dead_consumers(key)
        return handled

    def _forget_dead_consumers(self, key: str) -> None:
        for info in self.redis.xinfo_consumers(key, self.group):
            name = _text(info["name"])
            idle_and_empty = info["pending"] == 0 and info["idle"] >= DEAD_CONSUMER_IDLE_MS
            if name != self.consumer and idle_and_empty:
                self.redis.xgroup_delconsumer(key, self.group, name)

    # Applying -----------------------------------------------------------------

    def _handle(self, delivered: dict[str, list[str]]) -> int:
        handled = 0
        for key, ids in delivered.items():
            if not ids:
                continue
            partition = self._partition_of_key[key]
            newest = max(ids, key=stream_id)
            self.catch_up(partition, newest)
            self.acked += self.redis.xack(key, self.group, *ids)
            handled += len(ids)
        return handled

    def catch_up(self, partition: int, target: str | None = None) -> int:
        """Apply the partition's log up to ``target`` (the head if None) to the current
        generation; returns how many entries this call applied."""
        applied = 0
        retired_seen: str | None = None
        while True:
            generation = self.generation or self.projections.ensure_generation()
            checkpoint = self.projections.checkpoint(generation, partition)
            if target is not None and checkpoint.covers(target):
                return applied
            position = checkpoint.position or "0-0"
            entries = game_log.read_partition(self.store, partition, position, self.batch_size)
            if target is not None:
                entries = [e for e in entries if stream_id(e.position) <= stream_id(target)]
            if not entries:
                return applied
            status, _ = self.projections.apply_entries(
                generation, partition, checkpoint.position, entries
            )
            if status == APPLIED:
                applied += len(entries)
                self.applied += len(entries)
                if self.on_applied is not None:
                    self.on_applied(self.applied)
            elif status == RETIRED:
                # A rebuild swapped generations between our read of the pointer and the step.
                if retired_seen == generation or self.generation is not None:
                    raise RuntimeError(f"generation {generation} is retired but still current")
                retired_seen = generation
            # STALE: another projector moved the checkpoint; read it again.


def _stream_entries(reply: Any) -> dict[str, list[str]]:
    """``{stream key: [entry ids]}`` from an XREADGROUP reply (RESP2 or RESP3)."""
    out: dict[str, list[str]] = {}
    if not reply:
        return out
    items: Iterable = reply.items() if isinstance(reply, dict) else reply
    for key, entries in items:
        if isinstance(reply, dict) and entries and isinstance(entries[0], list):
            entries = entries[0]
        out[_text(key)] = [_text(entry_id) for entry_id, _ in entries]
    return out


# Lag ----------------------------------------------------------------------------


def projection_lag(projections: ProjectionStore) -> dict[int, int]:
    """Per partition: log entries the current generation has not applied yet."""
    as_of = projections.as_of()
    return {
        c.partition: max(0, length - c.applied)
        for c, length in zip(as_of.checkpoints, as_of.log_lengths, strict=True)
    }


# Rebuild ------------------------------------------------------------------------

Progress = Callable[[int, int], None]  # (entries done, entries in the log)


@dataclass(frozen=True, slots=True)
class RebuildResult:
    generation: str
    replaced: str | None
    entries: int  # log entries the rebuild applied
    seconds: float


def build_generation(
    projections: ProjectionStore,
    generation: str,
    *,
    batch_size: int = 1000,
    progress: Progress | None = None,
    done: int = 0,
) -> int:
    """Fold every partition log, from ``generation``'s checkpoints to the heads, into it.

    Safe while projectors write to the same generation (their steps and ours exclude each other
    through the checkpoint). Returns how many entries this call applied; stops early if the
    generation is retired.
    """
    store = projections.store
    lengths = [store.redis.xlen(store.log_key(p)) for p in range(projections.partitions)]
    total = sum(lengths)
    applied = 0
    for partition in range(projections.partitions):
        while True:
            checkpoint = projections.checkpoint(generation, partition)
            position = checkpoint.position or "0-0"
            entries = game_log.read_partition(store, partition, position, batch_size)
            if not entries:
                break
            status, _ = projections.apply_entries(
                generation, partition, checkpoint.position, entries
            )
            if status == RETIRED:
                return applied
            if status == APPLIED:
                applied += len(entries)
                total = max(total, done + applied)
                if progress is not None:
                    progress(done + applied, total)
    return applied


def rebuild(
    projections: ProjectionStore,
    *,
    batch_size: int = 1000,
    grace_seconds: int = 60,
    progress: Progress | None = None,
) -> RebuildResult:
    """Fold the whole log into a fresh generation and swap it in atomically.

    Readers and projectors keep using the current generation meanwhile. After the swap the old
    generation is retired (projectors can no longer write to it) and expires after
    ``grace_seconds`` (reads that began before the swap finish on it); entries the old
    generation took between our last read and the retirement are then applied to the new one.
    """
    started = time.monotonic()
    generation = new_generation_id()
    done = build_generation(projections, generation, batch_size=batch_size, progress=progress)
    # Catch up on what was appended meanwhile, so the swap leaves little for projectors to do.
    done += build_generation(
        projections, generation, batch_size=batch_size, progress=progress, done=done
    )
    replaced = projections.swap(generation)
    if replaced is not None and replaced != generation:
        projections.retire(replaced)
        done += build_generation(
            projections, generation, batch_size=batch_size, progress=progress, done=done
        )
        projections.drop(replaced, grace_seconds)
    return RebuildResult(generation, replaced, done, time.monotonic() - started)
