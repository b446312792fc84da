"""Ended games out of Redis: their archived objects, the index that finds them, and the steps
that move a game there (issue 33; the policy of when is service/app/archiver.py's).

A game moves in steps, each idempotent, so a crash anywhere is finished by the next pass and a
game is in Redis, in the archive, or in both for a moment, never in neither:

1. :meth:`GameArchive.put`: its events (from its stream) as one object in the blob store
   (service/store/archive_format.py; the same bytes again if a crashed pass wrote them);
2. :meth:`GameArchive.check`: the object read back, decoded, its chain recomputed and ended at
   the stream's head;
3. :meth:`GameArchive.record`: its record in the partition's ``archived`` hash, only if the
   stream still ends at that head (one script);
4. :meth:`GameArchive.remove`: its stream, its partition-log entries and its live-only index
   entries (waiting, deadlines) deleted, only if the record names that head (one script; the
   count of log entries removed is kept, so projection lag stays right);
5. :meth:`GameArchive.forget_ended`: it leaves the index of ended games waiting to move.

Key layout (``{p<N>}``: the game's partition, as in service/store/keys.py)::

    <prefix>:{p<N>}:ended             sorted set: ended games not archived yet, score = when
                                      the projector saw the end (microseconds since the epoch)
    <prefix>:{p<N>}:archived          hash: game id -> JSON {"version", "head", "first", "last",
                                      "bytes", "name"} (log ids of its first and last events)
    <prefix>:{p<N>}:archived-entries  string: log entries removed from the partition's log
    <prefix>:{p<N>}:archived-boards   string: the read-model generation whose archived games'
                                      scoreboards the archiver last dropped (its own key)

Every read of the event store falls back on :meth:`GameArchive.events` when a game's stream is
gone and the game is recorded here (service/store/event_store.py), so readers do not notice.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from service.store.archive_format import ArchiveCorrupt, ArchivedGame, decode, encode
from service.store.blobs import _SEGMENT, BlobConflict, BlobStore
from service.store.envelope import RecordedEvent, decode_envelopes
from service.store.errors import CorruptStore
from service.store.event_store import RedisEventStore
from service.store.keys import time_score
from service.store.stream_entries import LogEntry, decode_stored

# Records a game as archived, if its stream still ends at the archived head. Returns 1: recorded
# (or already); 0: nothing hot and no record; -1: the stream is not at that head.
_RECORD_LUA = """
local game = KEYS[1]      -- the game's stream
local archived = KEYS[2]  -- the partition's archived games
-- ARGV[1] (GameArchive.record): {game_id, version, head, record (its JSON, as stored)}
local archiving = cjson.decode(ARGV[1])

local last = redis.call('XREVRANGE', game, '+', '-', 'COUNT', 1)
if #last == 0 then return redis.call('HEXISTS', archived, archiving.game_id) end
local version = archiving.version
if last[1][1] ~= string.format('%d', version) .. '-0' or redis.call('XLEN', game) ~= version then
  return -1
end
local fields = last[1][2]
for i = 1, #fields, 2 do
  if fields[i] == 'hash' and fields[i + 1] ~= archiving.head then return -1 end
end
redis.call('HSET', archived, archiving.game_id, archiving.record)
return 1
"""

# Removes a recorded game from Redis: its stream, its log entries and its live-only index
# entries. Returns the log entries removed, -1 if the game is not recorded with that head, -2 if
# its stream no longer ends there.
_REMOVE_LUA = """
local game = KEYS[1]       -- the game's stream
local archived = KEYS[2]   -- the partition's archived games
local log = KEYS[3]        -- the partition's log
local waiting = KEYS[4]    -- the partition's indexes of live games only: waiting,
local deadlines = KEYS[5]  -- deadlines,
local removed_count = KEYS[6]  -- (how many log entries went to the archive)
local silent = KEYS[7]     -- and silent
-- ARGV[1] (GameArchive.remove): {game_id, head, log_ids (the game's log entry ids)}
local removal = cjson.decode(ARGV[1])
local id = removal.game_id

local record = redis.call('HGET', archived, id)
if not record or cjson.decode(record)['head'] ~= removal.head then return -1 end
local last = redis.call('XREVRANGE', game, '+', '-', 'COUNT', 1)
if #last > 0 then
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'hash' and fields[i + 1] ~= removal.head then return -2 end
  end
end
redis.call('DEL', game)
-- XDEL 500 ids at a time: unpack of a whole long game's ids would overflow Lua's stack.
local removed = 0
local ids = {}
for i, entry in ipairs(removal.log_ids) do
  ids[#ids + 1] = entry
  if #ids == 500 or i == #removal.log_ids then
    removed = removed + redis.call('XDEL', log, unpack(ids))
    ids = {}
  end
end
if removed > 0 then redis.call('INCRBY', removed_count, removed) end
redis.call('ZREM', waiting, id)
redis.call('ZREM', deadlines, id)
redis.call('ZREM', silent, id)
return removed
"""


@dataclass(frozen=True, slots=True)
class ArchiveRecord:
    """What Redis keeps of an archived game: enough to find, check and order it."""

    version: int
    head: str
    first: str  # partition-log id of its first event
    last: str  # ... and of its last
    bytes: int
    name: str  # its object's name in the blob store

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, raw: Any) -> ArchiveRecord:
        try:
            return cls(**json.loads(raw))
        except (TypeError, ValueError) as exc:
            raise CorruptStore(f"malformed archive record: {exc}") from None


@dataclass(frozen=True, slots=True)
class HotGame:
    """A game's events as its stream holds them, and their partition-log ids."""

    events: list[RecordedEvent]
    log_ids: list[str]

    @property
    def head(self) -> str:
        return self.events[-1].hash


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _stream_id(text: str) -> tuple[int, int]:
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


class GameArchive:
    """The archive of one event store: its index in Redis and its objects in ``blobs``."""

    def __init__(self, store: RedisEventStore, blobs: BlobStore, cache_games: int = 64) -> None:
        self.store = store
        self.redis = store.redis
        self.blobs = blobs
        self.cache_games = cache_games
        self._cache: OrderedDict[str, ArchivedGame] = OrderedDict()
        self._lock = threading.Lock()
        self._range_cache: dict[int, tuple[int, list]] = {}
        self._record = self.redis.register_script(_RECORD_LUA)
        self._remove = self.redis.register_script(_REMOVE_LUA)

    # Keys ------------------------------------------------------------------

    def ended_key(self, partition: int) -> str:
        return ended_key(self.store, partition)

    def removed_key(self, partition: int) -> str:
        return removed_key(self.store, partition)

    def blob_name(self, game_id: str) -> str:
        """``games/p<N>/<id>.zst``; an id that is not a safe object name goes by its SHA-256."""
        partition = self.store.partition_of(game_id)
        stem = game_id if _SEGMENT.fullmatch(game_id) and len(game_id) <= 100 else None
        if stem is None or stem.startswith("sha256-"):
            stem = "sha256-" + hashlib.sha256(game_id.encode("utf-8")).hexdigest()
        return f"games/p{partition}/{stem}.zst"

    # The index of ended games ----------------------------------------------------

    def mark_ended(self, ended: Iterable[tuple[str, str]]) -> None:
        mark_ended(self.store, ended)

    def ended_before(self, partition: int, when: int, limit: int = 100) -> list[str]:
        """Ids of the partition's ended games seen at or before ``when`` (microseconds), oldest
        first: the archiver's candidates, never a scan of the games."""
        ids = self.redis.zrangebyscore(self.ended_key(partition), "-inf", when, 0, limit)
        return [_text(game_id) for game_id in ids]

    def forget_ended(self, game_id: str) -> None:
        self.redis.zrem(self.ended_key(self.store.partition_of(game_id)), game_id)

    # Reads -----------------------------------------------------------------------

    def record_of(self, game_id: str) -> ArchiveRecord | None:
        raw = self.redis.hget(self.store.archived_key(self.store.partition_of(game_id)), game_id)
        return ArchiveRecord.from_json(raw) if raw is not None else None

    def load(self, game_id: str, record: ArchiveRecord | None = None) -> ArchivedGame | None:
        """The archived game (decoded, its chain checked against its record), None if the game
        is not archived; CorruptStore if its object is missing or damaged."""
        record = record or self.record_of(game_id)
        if record is None:
            return None
        with self._lock:
            cached = self._cache.get(game_id)
            if cached is not None:
                self._cache.move_to_end(game_id)
        if cached is not None and cached.head == record.head:
            return cached
        game = self.check(game_id, record)
        with self._lock:
            self._cache[game_id] = game
            while len(self._cache) > self.cache_games:
                self._cache.popitem(last=False)
        return game

    def forget_decoded(self, game_id: str) -> None:
        """Drop the game's decoded copy kept in memory: its next read checks the stored object
        again (an audit must judge the bytes in the store, not a copy decoded before they were
        altered: issue 42)."""
        with self._lock:
            self._cache.pop(game_id, None)

    def events(self, game_id: str) -> list[RecordedEvent] | None:
        """An archived game's events as the store returned them; None if not archived."""
        game = self.load(game_id)
        return list(game.events) if game is not None else None

    # Moving a game ------------------------------------------------------------

    def hot(self, game_id: str) -> HotGame | None:
        """The game's events and their log ids from its stream; None if it has none."""
        entries = self.redis.xrange(self.store.game_key(game_id), "-", "+")
        if not entries:
            return None
        raw = [fields.get(b"event", fields.get("event")) for _, fields in entries]
        try:
            events = decode_envelopes(raw)
        except Exception:
            events = [decode_stored(item) for item in raw]
        ids = [fields.get(b"log", fields.get("log")) for _, fields in entries]
        if any(entry_id is None for entry_id in ids):  # written before entries kept their id
            found = self._log_ids_by_scan(game_id)
            ids = [found.get(event.seq) for event in events]
            if any(entry_id is None for entry_id in ids):
                raise CorruptStore(f"game {game_id!r}: events missing from its partition log")
        return HotGame(events, [_text(entry_id) for entry_id in ids])

    def _log_ids_by_scan(self, game_id: str) -> dict[int, str]:
        """The game's log ids read from its partition's log (games stored before the game's
        entries kept them): a pass over the log, once per such game."""
        found: dict[int, str] = {}
        partition = self.store.partition_of(game_id)
        after = "0-0"
        while entries := self.store.read_log(partition, after, 1000):
            for entry in entries:
                if entry.game_id == game_id:
                    found[entry.seq] = entry.id
            after = entries[-1].id
        return found

    def put(self, game_id: str, hot: HotGame) -> ArchiveRecord:
        """Write the game's object (the same bytes again after a crash is a no-op)."""
        data = encode(hot.events, hot.log_ids)
        name = self.blob_name(game_id)
        try:
            self.blobs.put(name, data)
        except BlobConflict:
            # Written before with other bytes (another compression level, another library
            # version): the same game is as good, anything else is not ours to replace.
            existing = self.blobs.get(name) or b""
            try:
                same = decode(existing, game_id)
            except ArchiveCorrupt:
                raise CorruptStore(f"game {game_id!r}: {name} holds something else") from None
            if (same.head, same.version, same.log_ids) != (
                hot.head,
                len(hot.events),
                tuple(hot.log_ids),
            ):
                raise CorruptStore(f"game {game_id!r}: {name} holds another game") from None
            data = existing
        return ArchiveRecord(
            len(hot.events), hot.head, hot.log_ids[0], hot.log_ids[-1], len(data), name
        )

    def check(self, game_id: str, record: ArchiveRecord) -> ArchivedGame:
        """Read the object back and decode it; CorruptStore unless it ends at the record's
        head with its version."""
        data = self.blobs.get(record.name)
        if data is None:
            raise CorruptStore(f"game {game_id!r}: its archived object {record.name} is missing")
        try:
            game = decode(data, game_id)
        except ArchiveCorrupt as exc:
            raise CorruptStore(f"game {game_id!r}: archived object: {exc}") from None
        if (game.head, game.version) != (record.head, record.version):
            raise CorruptStore(f"game {game_id!r}: its archived object ends elsewhere")
        return game

    def record(self, game_id: str, record: ArchiveRecord) -> bool:
        """Record the game as archived if its stream still ends at the record's head."""
        partition = self.store.partition_of(game_id)
        keys = [self.store.game_key(game_id), self.store.archived_key(partition)]
        archiving = {
            "game_id": game_id,
            "version": record.version,
            "head": record.head,
            "record": record.to_json(),
        }
        return int(self._record(keys=keys, args=[json.dumps(archiving, ensure_ascii=False)])) == 1

    def remove(self, game_id: str, record: ArchiveRecord, log_ids: Sequence[str]) -> int:
        """Delete the recorded game's stream, log entries and live-only index entries; how
        many log entries went (-1: not recorded with that head, -2: the stream moved on)."""
        partition = self.store.partition_of(game_id)
        keys = [
            self.store.game_key(game_id),
            self.store.archived_key(partition),
            self.store.log_key(partition),
            self.store.waiting_key(partition),
            self.store.deadlines_key(partition),
            self.removed_key(partition),
            self.store.silent_key(partition),
        ]
        removal = {"game_id": game_id, "head": record.head, "log_ids": list(log_ids)}
        return int(self._remove(keys=keys, args=[json.dumps(removal, ensure_ascii=False)]))

    # Figures ------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Games archived and waiting to move, archived bytes and removed log entries."""
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.store.partitions):
            pipe.hlen(self.store.archived_key(p))
            pipe.zcard(self.ended_key(p))
            pipe.get(self.removed_key(p))
        replies = pipe.execute()
        archived = sum(int(r) for r in replies[0::3])
        waiting = sum(int(r) for r in replies[1::3])
        removed = sum(int(r or 0) for r in replies[2::3])
        return {"archived": archived, "ended_hot": waiting, "removed_log_entries": removed}

    def oldest_ended_seconds(self, now: float | None = None) -> float | None:
        """Seconds since the end of the ended game that has waited longest to move (by its
        end's time); None if none waits."""
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.store.partitions):
            pipe.zrange(self.ended_key(p), 0, 0, withscores=True)
        scores = [int(rows[0][1]) for rows in pipe.execute() if rows]
        if not scores:
            return None
        now_us = (time.time() if now is None else now) * 1e6
        return max(0.0, (now_us - min(scores)) / 1e6)

    def records(self, partition: int) -> Iterator[tuple[str, ArchiveRecord]]:
        """Every archived game of a partition with its record (HSCAN: a page at a time)."""
        for game_id, raw in self.redis.hscan_iter(self.store.archived_key(partition), count=500):
            yield _text(game_id), ArchiveRecord.from_json(raw)

    def removed_entries(self) -> list[int]:
        """Per partition: log entries moved to the archive (a projection's lag adds them)."""
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.store.partitions):
            pipe.get(self.removed_key(p))
        return [int(r or 0) for r in pipe.execute()]

    def merge_log(
        self, partition: int, after_id: str, count: int, live: list[LogEntry]
    ) -> list[LogEntry]:
        """The partition's log after ``after_id`` as it was before games left it: ``live`` (at
        most ``count`` entries read from the log now) merged in id order with the archived
        games' entries in the same stretch, at most ``count``. A game both in the log and
        archived (between its record and its removal) is counted once."""
        after = _stream_id(after_id)
        upto = _stream_id(live[-1].id) if len(live) >= count else None
        merged = {entry.id: entry for entry in live}
        for first, last, game_id, record in self._ranges(partition):
            if last <= after or (upto is not None and first > upto):
                continue
            for entry in self.log_entries(game_id, record):
                at = _stream_id(entry.id)
                if at > after and (upto is None or at <= upto):
                    merged.setdefault(entry.id, entry)
        if len(merged) == len(live):
            return live
        return sorted(merged.values(), key=lambda entry: _stream_id(entry.id))[:count]

    def _ranges(
        self, partition: int
    ) -> list[tuple[tuple[int, int], tuple[int, int], str, ArchiveRecord]]:
        """(first id, last id, game id, record) of the partition's archived games, read again
        only when their number changed (records are never edited once written)."""
        size = int(self.redis.hlen(self.store.archived_key(partition)))
        with self._lock:
            cached = self._range_cache.get(partition)
        if cached is not None and cached[0] == size:
            return cached[1]
        ranges = sorted(
            (_stream_id(record.first), _stream_id(record.last), game_id, record)
            for game_id, record in self.records(partition)
        )
        with self._lock:
            self._range_cache[partition] = (size, ranges)
        return ranges

    def log_entries(self, game_id: str, record: ArchiveRecord) -> list[LogEntry]:
        """An archived game's partition-log entries, as the log held them."""
        game = self.load(game_id, record)
        assert game is not None
        return [
            LogEntry(entry_id, game_id, event.seq, event)
            for entry_id, event in zip(game.log_ids, game.events, strict=True)
        ]


def removed_key(store: RedisEventStore, partition: int) -> str:
    """The count of the partition's log entries moved to the archive: a log's length for the
    projections' lag is its XLEN plus this (service/store/read_models.py)."""
    return f"{store.log_key(partition).removesuffix(':log')}:archived-entries"


def ended_key(store: RedisEventStore, partition: int) -> str:
    return f"{store.log_key(partition).removesuffix(':log')}:ended"


def mark_ended(store: RedisEventStore, ended: Iterable[tuple[str, str]]) -> None:
    """Put games that ended in the index of games to move (``(game id, the end's time)``,
    ISO-8601 UTC; a game already there keeps its time). The projector calls it as it applies
    each end, so the index needs no blob store."""
    pipe = store.redis.pipeline(transaction=False)
    for game_id, at in ended:
        key = ended_key(store, store.partition_of(game_id))
        pipe.zadd(key, {game_id: time_score(at)}, nx=True)
    pipe.execute()


def attach(store: RedisEventStore, url: str) -> GameArchive:
    """Open the archive at ``url`` (service/store/blobs.py) and make every read of ``store``
    fall back on it."""
    from service.store.blobs import blob_store_from_url

    archive = GameArchive(store, blob_store_from_url(url))
    store.archive = archive
    return archive


__all__ = [
    "ArchiveRecord",
    "GameArchive",
    "HotGame",
    "attach",
    "mark_ended",
]
