"""A tournament's log in Redis: one stream per tournament, appended at an expected version.

The stream (``KeyLayout.tournament_key``) lives in its tournament id's partition, beside the
games. An append is one Lua script: it checks the stream's length is the version the caller
decided on and adds the events with ids ``<seq>-0``, or adds nothing (a ``Conflict``, and the
caller decides again on the log as it is). Indexes sit beside the logs: every tournament by
creation time (listing), the running ones (the sweep's), and each table game's tournament,
round and table (the game reads ask it whether a game's boards are still secret:
service/app/tournaments.py).

Retention: once a tournament is over (finished, or cancelled and every table game over), the
archiver moves its log to the blob store and prunes its table games' links
(service/store/tournament_archive.py, service/app/tournament_archiver.py); ``read`` falls back
on the archived log, so readers do not notice. What stays in Redis for good is one member of
the listing and one archive record per tournament (docs/tournaments.md, "Retention").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.store.blobs import BlobStore
from service.store.keys import KeyLayout, time_score
from service.store.tournament_archive import TournamentArchive, games_key, mark_over

_APPEND_LUA = """
local data = cjson.decode(ARGV[1])
local length = redis.call('XLEN', KEYS[1])
if length ~= data.expected then
  return {0, length}
end
for i, event in ipairs(data.events) do
  redis.call('XADD', KEYS[1], (length + i) .. '-0', 'event', event, 'at', data.at)
end
redis.call('SADD', KEYS[2], data.id)  -- its read model is due (service/store/tournament_models.py)
return {1, length + #data.events}
"""


class Conflict(Exception):
    """The log moved on since the version an append expected: nothing was added."""


@dataclass(frozen=True, slots=True)
class StoredEntry:
    seq: int
    event: dict[str, Any]
    at: str


@dataclass(frozen=True, slots=True)
class TableLink:
    tournament_id: str
    round: int
    table: int


class TournamentStore:
    def __init__(
        self, redis: Any, keys: KeyLayout, blobs: Callable[[], BlobStore | None] | None = None
    ) -> None:
        """``blobs``: the archive's blob store, if there is one (asked at each read: the event
        store's archive may be attached after this store is made)."""
        self.redis = redis
        self.keys = keys
        self.blobs = blobs or (lambda: None)
        self._append = redis.register_script(_APPEND_LUA)

    def archive(self) -> TournamentArchive | None:
        blobs = self.blobs()
        return TournamentArchive(self.redis, self.keys, blobs) if blobs is not None else None

    def read(self, tournament_id: str, after: int = 0) -> list[StoredEntry]:
        """The log's entries after the first ``after`` (all of them by default), from its
        stream, or from the archive once it has moved there."""
        start = f"{after + 1}-0" if after else "-"
        entries = self.redis.xrange(self.keys.tournament_key(tournament_id), min=start)
        out = []
        for entry_id, fields in entries:
            seq = int(_text(entry_id).split("-")[0])
            named = {_text(k): _text(v) for k, v in fields.items()}
            out.append(StoredEntry(seq, json.loads(named["event"]), named["at"]))
        if not out and (archive := self.archive()) is not None:
            archived = archive.entries(tournament_id)
            if archived:
                return [
                    StoredEntry(int(e["seq"]), e["event"], e["at"])
                    for e in archived
                    if int(e["seq"]) > after
                ]
        return out

    def mark_over(self, tournament_id: str, at: str) -> None:
        """The tournament is over (at ``at``): the archiver moves it once it may."""
        mark_over(self.redis, self.keys, tournament_id, at)

    def append(
        self, tournament_id: str, expected: int, events: list[dict[str, Any]], at: str
    ) -> int:
        """Add ``events`` after ``expected`` entries; the new version, or Conflict."""
        data = {
            "id": tournament_id,
            "expected": expected,
            "events": [json.dumps(e) for e in events],
            "at": at,
        }
        dirty = f"{self.keys.partition_prefix(self.keys.partition_of(tournament_id))}"
        won, version = self._append(
            keys=[self.keys.tournament_key(tournament_id), f"{dirty}:tournaments-dirty"],
            args=[json.dumps(data)],
        )
        if not int(won):
            raise Conflict(f"tournament {tournament_id} is at version {int(version)}")
        return int(version)

    def index(self, tournament_id: str, created: str) -> None:
        """List the tournament (idempotent: its creation time is its score)."""
        self.redis.zadd(self.keys.tournaments_key(), {tournament_id: time_score(created)})

    def listed(self, limit: int) -> list[str]:
        """The newest ``limit`` tournaments, newest first."""
        ids = self.redis.zrevrange(self.keys.tournaments_key(), 0, limit - 1)
        return [_text(i) for i in ids]

    def running(self, tournament_id: str, running: bool) -> None:
        """Keep the set of running tournaments (idempotent either way)."""
        key = self.keys.tournaments_running_key()
        if running:
            self.redis.sadd(key, tournament_id)
        else:
            self.redis.srem(key, tournament_id)

    def schedule(self, tournament_id: str, starts_at: str | None) -> None:
        """Keep the index of scheduled starts (None: out of it; idempotent either way)."""
        key = f"{self.keys.prefix}:tournaments-scheduled"
        if starts_at is None:
            self.redis.zrem(key, tournament_id)
        else:
            self.redis.zadd(key, {tournament_id: time_score(starts_at)})

    def due(self, now: str, limit: int = 100) -> list[str]:
        """Scheduled tournaments whose start is at or before ``now``."""
        key = f"{self.keys.prefix}:tournaments-scheduled"
        ids = self.redis.zrangebyscore(key, "-inf", time_score(now), 0, limit)
        return [_text(i) for i in ids]

    def all_running(self) -> list[str]:
        return sorted(_text(i) for i in self.redis.smembers(self.keys.tournaments_running_key()))

    def link_game(self, game_id: str, link: TableLink) -> None:
        value = json.dumps(
            {"tournament": link.tournament_id, "round": link.round, "table": link.table}
        )
        # The tournament's own set of its games first: its links are pruned with it (a link
        # whose game a crash never linked in the log included).
        self.redis.sadd(games_key(self.keys, link.tournament_id), game_id)
        self.redis.hset(self.keys.tournament_games_key(), game_id, value)

    def is_table(self, game_id: str) -> bool:
        """Whether the game is a table of a tournament (linked before it is created)."""
        return bool(self.redis.hexists(self.keys.tournament_games_key(), game_id))

    def game_link(self, game_id: str) -> TableLink | None:
        raw = self.redis.hget(self.keys.tournament_games_key(), game_id)
        if raw is None:
            return None
        data = json.loads(_text(raw))
        return TableLink(str(data["tournament"]), int(data["round"]), int(data["table"]))

    def game_links(self, game_ids: list[str]) -> dict[str, TableLink]:
        if not game_ids:
            return {}
        raws = self.redis.hmget(self.keys.tournament_games_key(), game_ids)
        out = {}
        for game_id, raw in zip(game_ids, raws, strict=True):
            if raw is not None:
                data = json.loads(_text(raw))
                out[game_id] = TableLink(
                    str(data["tournament"]), int(data["round"]), int(data["table"])
                )
        return out


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
