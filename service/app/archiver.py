"""The archiver: ended games leave Redis for the archive once nothing live needs them (issue 33).

A game moves when all of these hold:

- it has ended (``GameEnded`` or ``GameExpired``: :data:`GAME_OVER`), at least
  ``after_seconds`` ago by its end event's time; the projector puts such games in the
  store's per-partition index of ended games as it applies their end, and that index is the
  only source of candidates (never a scan of the games);
- every consumer group of its partition log has acknowledged its entries, and the current
  read-model generation's checkpoint covers them (the projections have them);
- a finished game's head is in the public log (service/store/game_tree.py), where the projector
  put it before applying its end.

Then the steps of :class:`service.store.archive.GameArchive` (write, read back and check,
record, remove, forget), each idempotent, so a crash at any step is finished by the next pass:
the game is in Redis, in the archive, or both for a moment, never neither.

Several archivers (one per ``hearts serve`` worker, on as many hosts) share the partitions by
leases (service/store/leases.py, as the projector and the timekeeper do): each holds its fair
share, ``<prefix>:{p<N>}:archivelease`` for partition N, and moves only the ended games of the
partitions it holds; a dead archiver's partitions are taken over once its leases lapse (in
``lease_ms``). Leases are renewed at the start of a pass and between games; a partition given
back or lost in a pass is left at the next game. An archiver that stalled past its lease while
another took its partition over may work on the same game as the other for a moment: harmless,
as every step is idempotent and guarded in Redis (the same bytes written again, the record and
the removal only at the head they name).

``on_step(step, game_id)`` is called after each step (``written``, ``checked``, ``recorded``,
``removed``): the crash tests kill the process from there.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from domain.events import GameEnded, GameExpired
from projections.scoreboard import Scoreboard, apply
from service import metrics
from service.app import game_log
from service.app.tournament_archiver import TournamentArchiver
from service.store.archive import GameArchive, HotGame
from service.store.blobs import BlobStoreError
from service.store.bot_queue import BotQueue
from service.store.errors import CorruptStore, NotReplicated
from service.store.event_store import RedisEventStore
from service.store.game_tree import GameTree
from service.store.leases import PartitionLeases
from service.store.outage import Outage
from service.store.read_models import ProjectionStore, stream_id
from service.store.tournament_archive import TournamentArchive

if TYPE_CHECKING:
    from service.app.transparency import TransparencyLog

log = logging.getLogger(__name__)

# The events after which a game takes no command: its end. A new way for a game to end adds
# its event here (and the projector marks it: see Projector.catch_up).
GAME_OVER = (GameEnded, GameExpired)
GAME_OVER_TYPES = frozenset(cls.__name__ for cls in GAME_OVER)
BATCH = 100  # candidates read per partition per pass
LEASE_MS = 30_000  # how soon another archiver takes over a dead one's partitions


@dataclass
class ArchivePass:
    """What one pass did."""

    archived: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # ended, not ready to move yet
    failed: list[str] = field(default_factory=list)
    partitions: list[int] = field(default_factory=list)  # held by this archiver for the pass
    bytes: int = 0
    tournaments: list[str] = field(default_factory=list)  # tournament logs archived


def _micros(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


class Archiver:
    def __init__(
        self,
        store: RedisEventStore,
        archive: GameArchive,
        *,
        after_seconds: float,
        projections: ProjectionStore | None = None,
        batch: int = BATCH,
        on_step: Callable[[str, str], None] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        lease_ms: int = LEASE_MS,
        owner: str | None = None,
        public_log: TransparencyLog | None = None,
    ) -> None:
        self.store = store
        self.archive = archive
        self.after_seconds = after_seconds
        self.projections = projections or ProjectionStore(store)
        self.tree = GameTree(store.redis, store.prefix)
        self.bots = BotQueue(store.redis, store.prefix)
        self.batch = batch
        self.on_step = on_step or (lambda step, game_id: None)
        self.clock = clock
        self.leases = PartitionLeases(
            store.redis,
            partitions=store.partitions,
            key_of=self.lease_key,
            members_key=f"{store.prefix}:archivers",
            owner=owner or f"archiver-{uuid.uuid4().hex[:12]}",
            lease_ms=lease_ms,
        )
        self._renew_at = 0.0  # time.monotonic() at which the leases are renewed next
        # The public log's checkpoint, published and put in the archive with its tiles by the
        # holder of partition 0 at each pass, so the archive's copy of the log keeps up even
        # when nobody asks the API for a checkpoint.
        self.public_log = public_log
        # Tournaments over move with the partition's games (service/app/tournament_archiver.py).
        self.tournaments = TournamentArchiver(
            store, TournamentArchive(store.redis, store.keys, archive.blobs)
        )

    # Partition leases -----------------------------------------------------------------

    def lease_key(self, partition: int) -> str:
        return f"{self.store.log_key(partition).removesuffix(':log')}:archivelease"

    def refresh_leases(self) -> None:
        """Renew the leases held, give back any beyond the fair share, take free ones up to it."""
        self.leases.refresh()
        self._renew_at = time.monotonic() + self.leases.lease_ms / 3000

    def _holds(self, partition: int) -> bool:
        """Whether this archiver still holds ``partition`` (the leases renewed every third of
        a lease, so a long pass keeps them)."""
        if time.monotonic() >= self._renew_at:
            self.refresh_leases()
        return partition in self.leases.owned

    def release(self) -> None:
        """Give back every lease (a clean stop: another archiver takes over at once)."""
        self.leases.release_all()

    # Passes ---------------------------------------------------------------------------

    def run_once(self, hold: bool = False) -> ArchivePass:
        """Move every game that is ready in the partitions this archiver holds (``batch``
        candidates per partition at a time). ``hold``: keep the leases after the pass (the
        background loop, which renews them between passes); else give them back at its end
        (a pass by hand: the others need not wait for them to lapse)."""
        done = ArchivePass()
        try:
            self.refresh_leases()
            done.partitions = sorted(self.leases.owned)
            cutoff = _micros(self.clock() - timedelta(seconds=self.after_seconds))
            for partition in done.partitions:
                if not self._holds(partition):
                    continue  # given back to a newcomer, or lost, during the pass
                self._sweep_boards(partition)
                self._partition(partition, cutoff, done)
                if self._holds(partition):
                    done.tournaments += self.tournaments.run_partition(partition, cutoff)
            if self.public_log is not None and self._holds(0):
                self._publish()
        finally:
            if not hold:
                self.release()
        return done

    def _publish(self) -> None:
        assert self.public_log is not None
        try:
            self.public_log.checkpoint()
        except NotReplicated as error:  # the next pass tries again
            log.warning("archiver: the public log's checkpoint was not published: %s", error)

    def _partition(self, partition: int, cutoff: int, done: ArchivePass) -> None:
        seen: set[str] = set()
        while self._holds(partition):
            candidates = [
                game_id
                for game_id in self.archive.ended_before(partition, cutoff, self.batch + len(seen))
                if game_id not in seen
            ]
            if not candidates:
                return
            for game_id in candidates:
                if not self._holds(partition):
                    return
                seen.add(game_id)
                try:
                    moved = self.archive_game(game_id)
                except CorruptStore:
                    log.exception("archiver: game %s not archived", game_id)
                    done.failed.append(game_id)
                    continue
                if moved is None:
                    done.waiting.append(game_id)
                elif moved >= 0:
                    done.archived.append(game_id)
                    done.bytes += moved

    def archive_game(self, game_id: str) -> int | None:
        """Move one ended game (or finish moving it); its archived size in bytes, None if it
        is not ready to move yet, -1 if there was nothing to move."""
        record = self.archive.record_of(game_id)
        hot = self.archive.hot(game_id)
        if hot is None:  # removed already (a crash before the last step), or never stored
            self._forget(game_id)
            return record.bytes if record is not None else -1
        if record is None or record.head != hot.head:
            if not self.ready(game_id, hot):
                return None
            record = self.archive.put(game_id, hot)
            self.on_step("written", game_id)
            self.archive.check(game_id, record)
            self.on_step("checked", game_id)
            if not self.archive.record(game_id, record):
                return None  # its stream moved on meanwhile: not ended after all
            self.on_step("recorded", game_id)
        else:
            self.archive.check(game_id, record)  # a pass that crashed after recording it
        if self.archive.remove(game_id, record, hot.log_ids) < 0:
            return None
        self.on_step("removed", game_id)
        self._forget(game_id)
        return record.bytes

    def _forget(self, game_id: str) -> None:
        generation = self.projections.current_generation()
        if generation is not None:  # its board is folded from the archive when read
            self.projections.drop_boards(generation, [game_id])
        self.bots.done(game_id)  # a stale hand-over would only load it again
        self.archive.forget_ended(game_id)

    def _sweep_boards(self, partition: int) -> None:
        """After a rebuild swapped in a generation (its fold re-made every board, archived
        games' too), drop the archived games' boards from it: once per generation."""
        generation = self.projections.current_generation()
        if generation is None:
            return
        key = f"{self.store.log_key(partition).removesuffix(':log')}:archived-boards"
        swept = self.store.redis.get(key)
        if swept is not None and (swept.decode() if isinstance(swept, bytes) else swept) == (
            generation
        ):
            return
        batch: list[str] = []
        for game_id, _ in self.archive.records(partition):
            batch.append(game_id)
            if len(batch) >= 500:
                self.projections.drop_boards(generation, batch)
                batch = []
        if batch:
            self.projections.drop_boards(generation, batch)
        self.store.redis.set(key, generation)

    def ready(self, game_id: str, hot: HotGame) -> bool:
        """Ended, consumed by every projector group and the projections, and in the public log
        if it finished."""
        last = hot.events[-1]
        if last.type not in GAME_OVER_TYPES:
            return False
        partition = self.store.partition_of(game_id)
        if not self._consumed(partition, hot.log_ids[-1]):
            return False
        return last.type != GameEnded.__name__ or self.tree.leaf(game_id) is not None

    def _consumed(self, partition: int, last_id: str) -> bool:
        key = self.store.log_key(partition)
        redis = self.store.redis
        for group in redis.xinfo_groups(key):
            delivered = group["last-delivered-id"]
            delivered = delivered.decode() if isinstance(delivered, bytes) else delivered
            if stream_id(delivered) < stream_id(last_id):
                return False
            if redis.xpending_range(key, group["name"], min="-", max=last_id, count=1):
                return False
        generation = self.projections.current_generation()
        if generation is None:
            return True
        return self.projections.checkpoint(generation, partition).covers(last_id)

    def backfill(self, batch: int = 1000) -> int:
        """Put every game whose end is in the partition logs in the index of ended games (games
        that ended before the index existed); how many ends were read."""
        found = 0
        for partition in range(self.store.partitions):
            after = "0-0"
            while entries := self.store.read_log(partition, after, batch):
                ended = [(e.game_id, e.event.time) for e in entries if e.type in GAME_OVER_TYPES]
                if ended:
                    self.archive.mark_ended(ended)
                found += len(ended)
                after = entries[-1].id
        return found

    # Figures -------------------------------------------------------------------------

    def status(self) -> dict[str, int | float | None]:
        """Games hot and archived, archived bytes, and how long the oldest ended game waits."""
        counts = self.archive.counts()
        tournaments = self.tournaments.archive.counts()
        oldest = self.archive.oldest_ended_seconds(_micros(self.clock()) / 1e6)
        hot = sum(int(n) for n in _games_counts(self.store))
        total_bytes = sum(
            record.bytes
            for p in range(self.store.partitions)
            for _, record in self.archive.records(p)
        )
        return {
            "games": hot,
            "archived": counts["archived"],
            "hot": max(0, hot - counts["archived"]),
            "ended_hot": counts["ended_hot"],
            "archived_bytes": total_bytes,
            "removed_log_entries": counts["removed_log_entries"],
            "oldest_ended_seconds": oldest,
            **tournaments,
        }


def archived_scoreboard(projections: ProjectionStore, game_id: str) -> Scoreboard | None:
    """An archived game's scoreboard, folded from its archived log entries as the projector
    folded them (the same board, its positions included); None if the game is not archived."""
    archive = projections.store.archive
    record = archive.record_of(game_id) if archive is not None else None
    if record is None:
        return None
    board: Scoreboard | None = None
    for source in game_log.sources(archive.log_entries(game_id, record)):
        board = apply(board, source, projections.count_arranged).board
    return board


def _games_counts(store: RedisEventStore) -> list[int]:
    pipe = store.redis.pipeline(transaction=False)
    for p in range(store.partitions):
        pipe.zcard(store.games_key(p))
    return pipe.execute()


def start_archiver(archiver: Archiver, interval: float | None = None) -> threading.Event:
    """Run passes in a background thread every ``interval`` seconds (default: a tenth of
    ``after_seconds``, between 1 s and a minute), renewing the archiver's leases every third of
    a lease in between, until the returned event is set (then the leases are given back)."""
    every = interval if interval is not None else min(max(archiver.after_seconds / 10, 1.0), 60.0)
    tick = min(every, archiver.leases.lease_ms / 3000)
    stop = threading.Event()

    def run() -> None:
        outage = Outage(log, "archiver")
        next_pass = time.monotonic() + every
        try:
            while not stop.wait(tick):
                try:
                    if time.monotonic() < next_pass:
                        archiver.refresh_leases()
                        outage.ok()
                        continue
                    started = time.monotonic()
                    next_pass = started + every
                    done = archiver.run_once(hold=True)
                    outage.ok()
                    metrics.archive_pass_done()
                    if done.archived:
                        log.info(
                            "archived %d game(s), %d bytes, in %.1f s",
                            len(done.archived),
                            done.bytes,
                            time.monotonic() - started,
                        )
                except BlobStoreError:
                    pass  # the store's guard says so, once an outage (blob_guard.py)
                except Exception as error:
                    outage.failed(error, f"; trying again in {every:.0f} s")
        finally:
            archiver.release()

    threading.Thread(target=run, name="hearts-archiver", daemon=True).start()
    return stop
