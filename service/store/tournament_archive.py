"""Tournaments that are over, out of Redis: one object per tournament's log in the blob store.

As for a game (service/store/archive.py), a tournament moves in steps, each idempotent, so a
crash anywhere is finished by the next pass and its log is in Redis, in the archive, or both
for a moment, never in neither:

1. :meth:`TournamentArchive.put`: its log (every entry: seq, time, event) and the table games
   it linked, as one deterministic zstd object ``tournaments/p<N>/<id>.zst`` (the same bytes
   again after a crash);
2. :meth:`TournamentArchive.check`: the object read back, decoded, and equal to the stream;
3. :meth:`TournamentArchive.record`: its record in the partition's ``tournaments-archived``
   hash, only if the stream still has that many entries (one script);
4. :meth:`TournamentArchive.unlink`: its table games leave the ``tournament-games`` link hash
   (their boards are no longer secret: every round has ended, or the tournament is cancelled
   and every table game is over);
5. :meth:`TournamentArchive.remove`: its stream and its set of linked games deleted, only if
   the record names that many entries (one script); then it leaves the index of tournaments
   over (``forget_over``).

Nothing here knows a format: a tournament is its id, its log's entries and its linked games,
whatever events the log holds (the policy of when is service/app/tournament_archiver.py's).

Key layout (``{p<N>}``: the tournament id's partition)::

    <prefix>:{p<N>}:tournaments-over      sorted set: tournaments over, not archived yet,
                                          score = when it ended (microseconds)
    <prefix>:{p<N>}:tournaments-archived  hash: id -> JSON {"version", "bytes", "name"}
    <prefix>:{p<N>}:tournament:<id>:games set: the game ids linked to its tables (so the
                                          links are pruned with it, a crashed link included)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import zstandard

from service.store.blobs import BlobConflict, BlobStore
from service.store.errors import CorruptStore
from service.store.keys import KeyLayout, time_score

FORMAT = "hearts-tournament-log/1"
LEVEL = 10

# Record the tournament as archived if its stream still has the archived number of entries.
# Returns 1 (recorded, or already), 0 (no stream and no record), -1 (the stream moved on).
_RECORD_LUA = """
local data = cjson.decode(ARGV[1])
local length = redis.call('XLEN', KEYS[1])
if length == 0 then return redis.call('HEXISTS', KEYS[2], data.id) end
if length ~= data.version then return -1 end
redis.call('HSET', KEYS[2], data.id, data.record)
return 1
"""

# Delete the stream and its games set, if the record names the stream's length.
# Returns 1 (removed, or gone already), -1 (not recorded at that version).
_REMOVE_LUA = """
local data = cjson.decode(ARGV[1])
local record = redis.call('HGET', KEYS[2], data.id)
if not record or cjson.decode(record)['version'] ~= data.version then return -1 end
local length = redis.call('XLEN', KEYS[1])
if length ~= 0 and length ~= data.version then return -1 end
redis.call('DEL', KEYS[1], KEYS[3])
return 1
"""


@dataclass(frozen=True, slots=True)
class TournamentRecord:
    version: int
    bytes: int
    name: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, raw: Any) -> TournamentRecord:
        try:
            return cls(**json.loads(raw))
        except (TypeError, ValueError) as exc:
            raise CorruptStore(f"malformed tournament archive record: {exc}") from None


def encode(tournament_id: str, entries: list[dict[str, Any]], games: list[str]) -> bytes:
    """The object: canonical JSON (sorted members), zstd with a checksum: deterministic."""
    document = {
        "format": FORMAT,
        "tournament_id": tournament_id,
        "entries": entries,
        "games": sorted(games),
    }
    text = json.dumps(document, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
    return compressor.compress(text.encode("utf-8"))


def decode(data: bytes, tournament_id: str) -> dict[str, Any]:
    try:
        document = json.loads(zstandard.ZstdDecompressor().decompress(data))
    except (zstandard.ZstdError, ValueError) as exc:
        raise CorruptStore(f"tournament {tournament_id!r}: archived object: {exc}") from None
    if (
        not isinstance(document, dict)
        or document.get("format") != FORMAT
        or document.get("tournament_id") != tournament_id
        or not isinstance(document.get("entries"), list)
    ):
        raise CorruptStore(f"tournament {tournament_id!r}: its archived object is another's")
    return document


class TournamentArchive:
    """The archive of tournament logs: the index in Redis, the objects in ``blobs``."""

    def __init__(self, redis: Any, keys: KeyLayout, blobs: BlobStore) -> None:
        self.redis = redis
        self.keys = keys
        self.blobs = blobs
        self._record = redis.register_script(_RECORD_LUA)
        self._remove = redis.register_script(_REMOVE_LUA)

    def blob_name(self, tournament_id: str) -> str:
        return f"tournaments/p{self.keys.partition_of(tournament_id)}/{tournament_id}.zst"

    def put(
        self, tournament_id: str, entries: list[dict[str, Any]], games: list[str]
    ) -> TournamentRecord:
        data = encode(tournament_id, entries, games)
        name = self.blob_name(tournament_id)
        try:
            self.blobs.put(name, data)
        except BlobConflict:
            existing = self.blobs.get(name) or b""
            if decode(existing, tournament_id)["entries"] != entries:
                what = f"tournament {tournament_id!r}: {name} holds another log"
                raise CorruptStore(what) from None
            data = existing
        return TournamentRecord(len(entries), len(data), name)

    def check(self, tournament_id: str, record: TournamentRecord) -> dict[str, Any]:
        data = self.blobs.get(record.name)
        if data is None:
            raise CorruptStore(f"tournament {tournament_id!r}: {record.name} is missing")
        document = decode(data, tournament_id)
        if len(document["entries"]) != record.version:
            raise CorruptStore(f"tournament {tournament_id!r}: its archived log ends elsewhere")
        return document

    def record(self, tournament_id: str, record: TournamentRecord) -> bool:
        partition = self.keys.partition_of(tournament_id)
        data = {"id": tournament_id, "version": record.version, "record": record.to_json()}
        keys = [self.keys.tournament_key(tournament_id), archived_key(self.keys, partition)]
        return int(self._record(keys=keys, args=[json.dumps(data)])) == 1

    def record_of(self, tournament_id: str) -> TournamentRecord | None:
        partition = self.keys.partition_of(tournament_id)
        raw = self.redis.hget(archived_key(self.keys, partition), tournament_id)
        return TournamentRecord.from_json(raw) if raw is not None else None

    def unlink(self, tournament_id: str) -> list[str]:
        """Its table games leave the link hash (idempotent); the games it had linked."""
        games = sorted(_text(g) for g in self.redis.smembers(games_key(self.keys, tournament_id)))
        if games:
            self.redis.hdel(self.keys.tournament_games_key(), *games)
        return games

    def remove(self, tournament_id: str, record: TournamentRecord) -> bool:
        partition = self.keys.partition_of(tournament_id)
        keys = [
            self.keys.tournament_key(tournament_id),
            archived_key(self.keys, partition),
            games_key(self.keys, tournament_id),
        ]
        data = {"id": tournament_id, "version": record.version}
        return int(self._remove(keys=keys, args=[json.dumps(data)])) == 1

    def entries(self, tournament_id: str) -> list[dict[str, Any]] | None:
        """An archived tournament's log entries (``{"seq", "at", "event"}``), None if it is
        not archived."""
        record = self.record_of(tournament_id)
        if record is None:
            return None
        return list(self.check(tournament_id, record)["entries"])

    # The index of tournaments over -------------------------------------------------

    def over_before(self, partition: int, when: int, limit: int = 100) -> list[str]:
        ids = self.redis.zrangebyscore(over_key(self.keys, partition), "-inf", when, 0, limit)
        return [_text(i) for i in ids]

    def forget_over(self, tournament_id: str) -> None:
        partition = self.keys.partition_of(tournament_id)
        self.redis.zrem(over_key(self.keys, partition), tournament_id)

    def counts(self) -> dict[str, int]:
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.keys.partitions):
            pipe.hlen(archived_key(self.keys, p))
            pipe.zcard(over_key(self.keys, p))
        replies = pipe.execute()
        return {
            "tournaments_archived": sum(int(r) for r in replies[0::2]),
            "tournaments_over_hot": sum(int(r) for r in replies[1::2]),
        }


def over_key(keys: KeyLayout, partition: int) -> str:
    return f"{keys.partition_prefix(partition)}:tournaments-over"


def archived_key(keys: KeyLayout, partition: int) -> str:
    return f"{keys.partition_prefix(partition)}:tournaments-archived"


def games_key(keys: KeyLayout, tournament_id: str) -> str:
    return f"{keys.tournament_key(tournament_id)}:games"


def mark_over(redis: Any, keys: KeyLayout, tournament_id: str, at: str) -> None:
    """Put a tournament that is over in the index of those to archive (it keeps its time)."""
    key = over_key(keys, keys.partition_of(tournament_id))
    redis.zadd(key, {tournament_id: time_score(at)}, nx=True)


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
