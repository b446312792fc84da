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

Partition ownership: with ``lease_ms`` (what ``hearts project`` uses) each partition is read by
one projector of a group at a time. It owns partition N while it holds the lease key
``<prefix>:{p<N>}:projlease:<group>`` (in the partition's cluster slot; SET NX PX, renewed every
third of ``lease_ms``). Live projectors of a group announce themselves in
``<prefix>:projectors:<group>`` (a sorted set scored by when they expire), and each keeps at most
its fair share (partitions / live projectors, rounded up), giving back the rest. On taking a
partition over, a projector XAUTOCLAIMs everything pending there (the previous owner died or gave
it back) before reading new entries. A projector that loses a lease while applying is still
harmless: the checkpoint refuses its stale steps. Without ``lease_ms`` a projector reads every
partition (tests drive several side by side to show the checkpoint is what keeps them exact).

On a Redis Cluster no command may name keys of two slots, so new entries are read with one
non-blocking XREADGROUP per partition (pipelined, the client sends each node its own), and an
empty round waits ``poll_ms``; one Redis gets a single blocking XREADGROUP over them all. So
does fakeredis, but non-blocking: its blocking read spins without yielding under gevent.

Redis unreachable (not started yet, restarting, a failover): the projector waits and retries
with back-off (``RETRY_FIRST`` doubling up to ``RETRY_MAX`` seconds), at start-up as while running;
``state`` says what it is doing (``starting``, ``waiting-for-redis``, ``running``, ``stopped``).
While running it beats a heartbeat: its consumer name in ``<prefix>:projectors-alive:<group>``
(a sorted set scored by when the beat expires, ``HEARTBEAT_MS`` after it), which is how
``/readyz`` in any API process knows whether a projector is alive (:func:`live_projectors`).

``on_applied`` (optional) is called with the running count of applied entries right after each
atomic step, before anything is acknowledged: the crash tests kill the process from there.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import redis as redis_lib

from domain.events import GameEnded
from service.app import game_log
from service.app.archiver import GAME_OVER
from service.app.projection_apply import apply_entries
from service.app.tournament_projection import TournamentProjection
from service.app.transparency import Appender
from service.store.archive import mark_ended
from service.store.leases import PartitionLeases
from service.store.outage import Outage
from service.store.read_models import (
    APPLIED,
    RETIRED,
    ProjectionStore,
    new_generation_id,
    stream_id,
)
from service.store.redis_server import is_cluster, is_fake
from service.store.stream_entries import LogEntry

log = logging.getLogger(__name__)

GROUP = "projector"
# A consumer with nothing pending and idle this long is removed from the group (a dead process).
DEAD_CONSUMER_IDLE_MS = 3600 * 1000
DEFAULT_LEASE_MS = 10_000
# A heartbeat is written at most every HEARTBEAT_EVERY seconds and counts for HEARTBEAT_MS.
HEARTBEAT_MS = 5_000
HEARTBEAT_EVERY = 1.0
# Back-off while Redis does not answer: first wait, longest wait (seconds).
RETRY_FIRST = 0.5
RETRY_MAX = 30.0
# Errors that mean "Redis is not there (yet)", not "this entry cannot be applied".
UNREACHABLE = (redis_lib.ConnectionError, redis_lib.TimeoutError, redis_lib.BusyLoadingError)


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
        lease_ms: int | None = None,
        blocking: bool | None = None,
        poll_ms: int = 100,
        public_log: Appender | None = None,
    ) -> None:
        self.projections = projections
        # Finished games go into the public log before their GameEnded is applied: a crash in
        # between re-delivers it, and the append is idempotent (service/app/transparency.py).
        self.public_log = public_log
        # Tournaments' read models, folded at each poll (service/app/tournament_projection.py).
        self.tournaments = TournamentProjection(projections)
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
        self.state = "starting"  # waiting-for-redis, running, stopped
        self._outage = Outage(log, "projector")  # a lost Redis: one line, and one when back
        self._next_beat = 0.0
        self._keys = self.store.partition_log_keys()
        self._partition_of_key = {key: p for p, key in enumerate(self._keys)}
        self.lease_ms = lease_ms
        self.poll_ms = poll_ms
        # Blocking XREADGROUP over every partition at once: not on a cluster (see above).
        if blocking is None:
            blocking = not is_cluster(self.redis) and not is_fake(self.redis)
        self.blocking = blocking
        # The partitions this projector reads: all of them, or (with leases) those it holds.
        self.owned: set[int] = set(range(len(self._keys))) if lease_ms is None else set()
        self._next_lease_check = 0.0
        self.leases: PartitionLeases | None = None
        if lease_ms is not None:
            self.leases = PartitionLeases(
                self.redis,
                partitions=len(self._keys),
                key_of=self.lease_key,
                members_key=self.members_key,
                owner=self.consumer,
                lease_ms=lease_ms,
            )
            self.owned = self.leases.owned  # the same set: the leases keep it

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
        try:
            if self._start(stop):
                self._loop(stop, 0.0)
        finally:
            if self.lease_ms is not None:
                self.release_all()
            with contextlib.suppress(redis_lib.RedisError):
                self.redis.zrem(self.alive_key, self.consumer)
            self.state = "stopped"
        log.info(
            "projector %s stopped: applied %d log entries, acknowledged %d",
            self.consumer,
            self.applied,
            self.acked,
        )

    def _start(self, stop: threading.Event) -> bool:
        """Set up (groups, generation, own pending entries), waiting for Redis with back-off;
        False if stopped first."""
        delay = RETRY_FIRST
        while not stop.is_set():
            try:
                self.ensure_groups()
                if self.generation is None:
                    self.projections.ensure_generation()
                if self.lease_ms is None:
                    self.recover_own()
                return True
            except UNREACHABLE as error:
                delay = self._wait_for_redis(stop, delay, error)
        return False

    def _wait_for_redis(self, stop: threading.Event, delay: float, error: Exception) -> float:
        """Wait ``delay`` (or until stopped); returns the next, longer delay."""
        self.state = "waiting-for-redis"
        self._outage.failed(error, f"; retrying in {delay:.1f} s, then less often")
        stop.wait(delay)
        return min(delay * 2, RETRY_MAX)

    def _loop(self, stop: threading.Event, next_claim: float) -> None:
        delay = RETRY_FIRST
        while not stop.is_set():
            try:
                self.heartbeat()
                if self.lease_ms is not None and time.monotonic() >= self._next_lease_check:
                    self.refresh_leases()
                if time.monotonic() >= next_claim:
                    self.reclaim()
                    next_claim = time.monotonic() + self.claim_interval
                self.poll()
                self._outage.ok()
                delay = RETRY_FIRST
            except UNREACHABLE as error:
                self._next_beat = 0.0  # beat again as soon as Redis is back
                delay = self._wait_for_redis(stop, delay, error)
            except Exception:  # keep going: the entries stay pending and are retried
                log.exception("projector: failed to apply; retrying in 1 s")
                stop.wait(1.0)

    # Heartbeat ------------------------------------------------------------------

    @property
    def alive_key(self) -> str:
        return alive_key(self.store.prefix, self.group)

    def heartbeat(self) -> None:
        """Say this projector is alive (at most every HEARTBEAT_EVERY seconds)."""
        now = time.monotonic()
        if now < self._next_beat:
            return
        now_ms = int(time.time() * 1000)
        self.redis.zadd(self.alive_key, {self.consumer: now_ms + HEARTBEAT_MS})
        self.redis.zremrangebyscore(self.alive_key, "-inf", now_ms)
        self.state = "running"
        self._next_beat = now + HEARTBEAT_EVERY

    # Partition leases -----------------------------------------------------------

    def lease_key(self, partition: int) -> str:
        return f"{self.store.log_key(partition).removesuffix(':log')}:projlease:{self.group}"

    @property
    def members_key(self) -> str:
        return f"{self.store.prefix}:projectors:{self.group}"

    def refresh_leases(self) -> None:
        """Renew the leases held, give back any beyond the fair share, take free ones up to it."""
        assert self.leases is not None
        self.leases.refresh(self.take_over)
        self._next_lease_check = time.monotonic() + self.leases.lease_ms / 3000

    def take_over(self, partition: int) -> int:
        """Claim (XAUTOCLAIM, any idle time) and handle everything pending on a partition just
        taken: its previous owner died, or gave it back, before acknowledging."""
        return self._claim(self._keys[partition], 0)

    def release_all(self) -> None:
        """Give back every lease (a clean stop: another projector takes over at once)."""
        if self.leases is not None:
            self.leases.release_all()

    def poll(self, block_ms: int | None = None, count: int | None = None) -> int:
        """Take new deliveries (waiting up to ``block_ms``), apply and ack; returns how many."""
        block = self.block_ms if block_ms is None else block_ms
        keys = [self._keys[p] for p in sorted(self.owned)]
        if not keys:
            time.sleep(block / 1000)
            return 0
        try:
            delivered = self._read_group(keys, ">", count or self.batch_size, block)
        except redis_lib.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self.ensure_groups()  # first run, or the groups were lost (e.g. a wiped Redis)
            return 0
        # New deliveries carry the entries themselves: applied as read when they follow the
        # checkpoint, instead of reading them from the log a second time.
        read = {key: self.store.log_entries(entries) for key, entries in delivered.items()}
        handled = self._handle(
            {key: [e.id for e in entries] for key, entries in read.items()}, read
        )
        generation = self.generation or self.projections.ensure_generation()
        return handled + self.tournaments.catch_up(generation, self.owned)

    def _read_group(self, keys: list[str], start: str, count: int, block: int) -> dict:
        """``{stream key: [(entry id, fields)]}`` delivered to this consumer from ``start``."""
        if self.blocking:
            reply = self.redis.xreadgroup(
                self.group,
                self.consumer,
                {key: start for key in keys},
                count=count,
                block=block if block > 0 else None,
            )
            return _stream_replies(reply)
        # One XREADGROUP per partition (on a cluster each is its own slot), none blocking.
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:
            pipe.xreadgroup(self.group, self.consumer, {key: start}, count=count)
        delivered: dict[str, list] = {}
        for reply in pipe.execute():
            delivered.update(_stream_replies(reply))
        if block > 0 and not any(delivered.values()):
            time.sleep(min(block, self.poll_ms) / 1000)
        return delivered

    def recover_own(self) -> int:
        """Entries delivered to this consumer name before (a restart under the same name)."""
        keys = [self._keys[p] for p in sorted(self.owned)]
        if not keys:
            return 0
        # Only the ids: an entry deleted since its delivery comes back without its fields.
        return self._handle(_ids(self._read_group(keys, "0", 100_000, 0)))

    def reclaim(self) -> int:
        """Take over entries pending on other consumers for longer than ``claim_idle_ms``."""
        handled = 0
        for p in sorted(self.owned):
            handled += self._claim(self._keys[p], self.claim_idle_ms)
            self._forget_dead_consumers(self._keys[p])
        return handled

    def _claim(self, key: str, idle_ms: int) -> int:
        handled = 0
        start = "0-0"
        while True:
            try:
                reply = self.redis.xautoclaim(
                    key, self.group, self.consumer, idle_ms, start_id=start, count=self.batch_size
                )
            except redis_lib.ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
                self.ensure_groups()
                return handled
            # Not JUSTID: redis-py drops the next start id from a JUSTID reply.
            start = _text(reply[0])
            ids = [_text(entry_id) for entry_id, _ in reply[1]]
            if ids:
                handled += self._handle({key: ids})
            if start == "0-0":
                return handled

    def _forget_dead_consumers(self, key: str) -> None:
        for info in self.redis.xinfo_consumers(key, self.group):
            name = _text(info["name"])
            idle_and_empty = info["pending"] == 0 and info["idle"] >= DEAD_CONSUMER_IDLE_MS
            if name != self.consumer and idle_and_empty:
                self.redis.xgroup_delconsumer(key, self.group, name)

    # Applying -----------------------------------------------------------------

    def _handle(
        self, delivered: dict[str, list[str]], read: dict[str, list[LogEntry]] | None = None
    ) -> int:
        handled = 0
        for key, ids in delivered.items():
            if not ids:
                continue
            partition = self._partition_of_key[key]
            newest = max(ids, key=stream_id)
            self.catch_up(partition, newest, (read or {}).get(key, ()))
            self.acked += self.redis.xack(key, self.group, *ids)
            handled += len(ids)
        return handled

    def catch_up(
        self, partition: int, target: str | None = None, delivered: Sequence[LogEntry] = ()
    ) -> int:
        """Apply the partition's log up to ``target`` (the head if None) to the current
        generation; returns how many entries this call applied.

        ``delivered``: consecutive entries of the log already read (an XREADGROUP delivery),
        used instead of reading the log again while they follow the checkpoint.
        """
        applied = 0
        retired_seen: str | None = None
        ahead = list(delivered)
        # The position ``ahead`` follows: the log entry before its first one.
        follows = self._position_before(partition, ahead[0].id) if ahead else None
        while True:
            generation = self.generation or self.projections.ensure_generation()
            checkpoint = self.projections.checkpoint(generation, partition)
            if target is not None and checkpoint.covers(target):
                return applied
            if ahead and checkpoint.position == follows:
                entries = game_log.sources(ahead[: self.batch_size])
                ahead = ahead[self.batch_size :]
            else:
                ahead = []
                position = checkpoint.position or "0-0"
                entries = game_log.read_partition(self.store, partition, position, self.batch_size)
            if target is not None:
                entries = [e for e in entries if stream_id(e.position) <= stream_id(target)]
            if not entries:
                return applied
            if self.public_log is not None:
                for entry in entries:
                    if isinstance(entry.event, GameEnded):
                        self.public_log.record_ended(entry.game_id, entry.seq)
            # Ended games join the archiver's candidates before their end is applied (a crash
            # in between re-delivers it; the index keeps the first time): service/app/archiver.py.
            ended = [(e.game_id, e.time) for e in entries if isinstance(e.event, GAME_OVER)]
            if ended:
                mark_ended(self.store, ended)
            status, _ = apply_entries(
                self.projections, generation, partition, checkpoint.position, entries
            )
            if status == APPLIED:
                follows = entries[-1].position
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

    def _position_before(self, partition: int, entry_id: str) -> str | None:
        """The id of the log entry just before ``entry_id`` (None if it is the first)."""
        before = self.redis.xrevrange(self.store.log_key(partition), f"({entry_id}", "-", count=1)
        return _text(before[0][0]) if before else None


def _stream_replies(reply: Any) -> dict[str, list]:
    """``{stream key: [(entry id, fields)]}`` from an XREADGROUP reply (RESP2 or RESP3)."""
    out: dict[str, list] = {}
    if not reply:
        return out
    items: Iterable = reply.items() if isinstance(reply, dict) else reply
    for key, entries in items:
        if isinstance(reply, dict) and entries and isinstance(entries[0], list):
            entries = entries[0]
        out[_text(key)] = list(entries)
    return out


def _ids(delivered: dict[str, list]) -> dict[str, list[str]]:
    """``{stream key: [entry ids]}`` of :func:`_stream_replies`' result."""
    return {key: [_text(entry_id) for entry_id, _ in entries] for key, entries in delivered.items()}


# Liveness and lag ------------------------------------------------------------------


def alive_key(prefix: str, group: str = GROUP) -> str:
    return f"{prefix}:projectors-alive:{group}"


def live_projectors(redis: Any, prefix: str, group: str = GROUP) -> list[str]:
    """The consumer names of the group's projectors whose heartbeat has not expired."""
    now_ms = int(time.time() * 1000)
    return sorted(
        _text(name) for name in redis.zrangebyscore(alive_key(prefix, group), now_ms, "+inf")
    )


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
    withheld: Collection[str] = (),
) -> int:
    """Fold every partition log, from ``generation``'s checkpoints to the heads, into it.

    Safe while projectors write to the same generation (their steps and ours exclude each other
    through the checkpoint). Returns how many entries this call applied; stops early if the
    generation is retired.
    """
    store = projections.store
    total = sum(projections.as_of(generation).log_lengths)  # archived entries included
    applied = 0
    for partition in range(projections.partitions):
        while True:
            checkpoint = projections.checkpoint(generation, partition)
            position = checkpoint.position or "0-0"
            entries = game_log.read_partition(store, partition, position, batch_size)
            if not entries:
                break
            status, _ = apply_entries(
                projections, generation, partition, checkpoint.position, entries, withheld
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
    tournaments = TournamentProjection(projections)
    # The tables of every tournament, archived ones included (their links are gone): kept out
    # of the statistics as the live projector kept them (projection_apply).
    withheld = tournaments.table_games() if projections.count_arranged else ()

    def build(done: int) -> int:
        return build_generation(
            projections,
            generation,
            batch_size=batch_size,
            progress=progress,
            done=done,
            withheld=withheld,
        )

    done = build(0)
    tournaments.rebuild(generation)  # every tournament's, from its log
    # Catch up on what was appended meanwhile, so the swap leaves little for projectors to do.
    done += build(done)
    replaced = projections.swap(generation)
    if replaced is not None and replaced != generation:
        projections.retire(replaced)
        done += build(done)
        # Folded again: an append cleared from the due set by a projector of the old one.
        tournaments.rebuild(generation)
        projections.drop(replaced, grace_seconds)
    return RebuildResult(generation, replaced, done, time.monotonic() - started)
