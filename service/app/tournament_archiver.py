"""Tournaments over leave Redis for the archive, with their table games' links.

A tournament moves when all of these hold:

- it is over: its log ends with one of :data:`OVER_EVENTS` (a format adds its own), at least
  ``after_seconds`` ago by the index of tournaments over (filled by the tournament service as
  it sees the end: service/app/tournaments.py), the only source of candidates;
- every game linked to its tables has ended (a cancelled tournament's tables may still be in
  play: their boards stay secret, so the links stay, until they end or expire).

Then the steps of :class:`service.store.tournament_archive.TournamentArchive`, each
idempotent. Nothing here knows a format beyond the names of the events that end a log, so an
arena's log moves the same way. The archiver (service/app/archiver.py) runs a pass per
partition it holds, after the partition's games.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from domain.events import GameEnded, GameExpired
from service.store.errors import CorruptStore
from service.store.event_store import RedisEventStore
from service.store.stream_entries import decode_stored
from service.store.tournament_archive import TournamentArchive, games_key
from service.store.tournaments import TournamentStore

log = logging.getLogger(__name__)

# The events that end a tournament's log, whatever its format.
OVER_EVENTS = {"TournamentFinished", "TournamentCancelled"}


_GAME_OVER = {GameEnded.__name__, GameExpired.__name__}


def game_over(store: RedisEventStore, game_id: str) -> bool:
    """Whether a linked game takes no more moves: its stream ends with its end, or it has
    none (archived, or never created: a link a crash left)."""
    last = store.redis.xrevrange(store.game_key(game_id), "+", "-", count=1)
    if not last:
        return True
    fields = last[0][1]
    return decode_stored(fields.get(b"event", fields.get("event"))).type in _GAME_OVER


class TournamentArchiver:
    def __init__(
        self,
        store: RedisEventStore,
        archive: TournamentArchive,
        *,
        on_step: Callable[[str, str], None] | None = None,
    ) -> None:
        self.store = store
        self.archive = archive
        self.logs = TournamentStore(store.redis, store.keys)  # the streams, never the archive
        self.on_step = on_step or (lambda step, tournament_id: None)

    def run_partition(self, partition: int, cutoff: int, limit: int = 100) -> list[str]:
        """Move the partition's tournaments over at or before ``cutoff`` (microseconds) that
        may move; the ids moved."""
        moved = []
        for tournament_id in self.archive.over_before(partition, cutoff, limit):
            try:
                if self.archive_tournament(tournament_id):
                    moved.append(tournament_id)
            except CorruptStore:
                log.exception("archiver: tournament %s not archived", tournament_id)
        return moved

    def ready(self, tournament_id: str, entries: list[dict]) -> bool:
        if not entries or entries[-1]["event"].get("type") not in OVER_EVENTS:
            return False
        members = self.store.redis.smembers(games_key(self.store.keys, tournament_id))
        games = [m.decode() if isinstance(m, bytes) else m for m in members]
        return all(game_over(self.store, game_id) for game_id in games)

    def archive_tournament(self, tournament_id: str) -> bool:
        """Move one tournament (or finish moving it): whether it is out of Redis."""
        record = self.archive.record_of(tournament_id)
        stored = self.logs.read(tournament_id)
        if not stored and record is None:  # nothing to move (a listing without a log)
            self.archive.forget_over(tournament_id)
            return False
        if stored and (record is None or record.version != len(stored)):
            entries = [{"seq": e.seq, "at": e.at, "event": e.event} for e in stored]
            if not self.ready(tournament_id, entries):
                return False
            members = self.store.redis.smembers(games_key(self.store.keys, tournament_id))
            games = [m.decode() if isinstance(m, bytes) else m for m in members]
            record = self.archive.put(tournament_id, entries, games)
            self.on_step("written", tournament_id)
            self.archive.check(tournament_id, record)
            self.on_step("checked", tournament_id)
            if not self.archive.record(tournament_id, record):
                return False  # its log moved on meanwhile
            self.on_step("recorded", tournament_id)
        assert record is not None
        self.archive.unlink(tournament_id)
        self.on_step("unlinked", tournament_id)
        if not self.archive.remove(tournament_id, record):
            return False
        self.on_step("removed", tournament_id)
        self.logs.running(tournament_id, False)
        self.archive.forget_over(tournament_id)
        return True

    def backfill(self) -> int:
        """Put every listed tournament whose log is over in the index of tournaments to move
        (those over before the index existed); how many are there."""
        found = 0
        for tournament_id in self.logs.listed(10**9):
            stored = self.logs.read(tournament_id)
            if stored and stored[-1].event.get("type") in OVER_EVENTS:
                self.logs.mark_over(tournament_id, stored[-1].at)
                found += 1
        return found
