"""The event store: one Redis stream per game, one log stream per partition.

Generic over event payloads: it stores :class:`~service.store.envelope.NewEvent` triples
in hash-chained envelopes (see :mod:`service.store.envelope` for the envelope and the
hash scheme) and knows nothing about Hearts.

Partitions
----------
A game belongs to partition ``crc32(utf8(game_id)) % partitions`` (zlib's CRC-32,
unsigned). The partition count is part of the data layout: every key below
embeds it, so ``partitions`` must never change for existing data (doing so would
strand games and idempotency records in partitions nobody reads).

Key layout (``<N>`` is the partition number, ``{p<N>}`` is a Redis Cluster hash
tag, so every key an append touches lives in the same cluster slot)::

    <prefix>:{p<N>}:game:<game_id>  stream, one entry per event, entry id "<seq>-0",
                                    fields: hash (the event's hash), event (envelope JSON),
                                    log (its partition-log entry id; absent in games
                                    written before the archive existed)
    <prefix>:{p<N>}:log             stream, every event of the partition's games in
                                    commit order, auto ids,
                                    fields: game_id, seq, event (envelope JSON)
    <prefix>:{p<N>}:games           sorted set of game ids, score = creation time in
                                    microseconds since the Unix epoch (the time of the
                                    append that created the game)
    <prefix>:{p<N>}:waiting         sorted set of the ids of games waiting for players,
                                    score = creation time (as in games): kept by the
                                    appends that open and close the wait (``waiting``),
                                    so expiring old ones reads no other game
    <prefix>:{p<N>}:deadlines       sorted set of the ids of games whose turn clock runs,
                                    score = the first deadline in microseconds since the
                                    epoch: kept by every append (``deadline``), so the
                                    timekeeper reads only the games that are due
    <prefix>:{p<N>}:silent          sorted set of the ids of games in play without a turn
                                    clock, score = their last append's time (us): kept by
                                    every append (``silent``), so the abandonment sweep
                                    (service/app/abandonment.py) reads only games long silent
    <prefix>:{p<N>}:archived        hash, game id -> JSON record of an archived game,
    <prefix>:{p<N>}:ended           sorted set of ended games not archived yet,
    <prefix>:{p<N>}:archived-entries count of log entries moved to the archive
                                    (the three kept by service/store/archive.py)
    <prefix>:{p<N>}:idem:<scope>    string "<fingerprint>\\n<response>" with a TTL:
                                    an idempotency record, in the partition of the
                                    game whose append wrote it

A game's version is the seq of its stream's last entry (read from the last id,
never from XLEN). Streams are never trimmed and entries are never deleted, except by the
archiver (service/store/archive.py): an ended game's stream and log entries leave Redis once its
archived object is written and checked, and every read here then reads the archive instead.

Appends run as one Lua script that makes every check before its first write
(Redis does not roll scripts back), so an append writes all its events to both
streams or nothing at all.

Redis Cluster: every key an append, a read or a log read names carries one ``{p<N>}`` tag, so
each command stays in one slot; only listing games (a pipeline of one ZRANGEBYSCORE per
partition) spans slots, and the client sends each node its own. With ``min_replicas`` an append
is followed, on the same connection to the slot's master, by ``WAIT min_replicas timeout``: the
append is acknowledged only once that many replicas have it (else :class:`NotReplicated`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

import redis.exceptions as redis_errors

from service.cooperative import paced, pause
from service.store.envelope import (
    GENESIS_HASH,
    ChainProblem,
    NewEvent,
    RecordedEvent,
    decode_envelope,
    decode_envelopes,
    envelope_json,
    envelope_type,
    seal,
    verify_chain,
)
from service.store.errors import (
    ChainMismatch,
    ConcurrencyConflict,
    CorruptStore,
    IdempotencyKeyReused,
    NotReplicated,
    StoreError,
    WritesRefused,
)

__all__ = [
    "AppendResult",
    "ChainMismatch",
    "ConcurrencyConflict",
    "CorruptStore",
    "DEFAULT_IDEMPOTENCY_TTL",
    "GamePage",
    "IdempotencyKeyReused",
    "IdempotencyRecord",
    "LogEntry",
    "NotReplicated",
    "RedisEventStore",
    "Snapshot",
    "StateCache",
    "StoreError",
    "WritesRefused",
    "utc_now_iso",
    "writes_refused",
]

DEFAULT_IDEMPOTENCY_TTL = 86400
READ_PAGE = 1000  # entries per XRANGE of a long read

# A reader's own decoder of a page of stored envelopes (their bytes, in order), tried before the
# store's: it may raise on anything it does not take, and the page is then decoded as stored.
PageDecoder = Callable[[list[bytes]], list[Any]]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_STREAM_ID = re.compile(r"^\d+-\d+$")

# KEYS: 1 game stream, 2 partition log, 3 games index, 4 waiting index, 5 deadlines index,
#       6 silent index, 7 archived index (service/store/archive.py), [8 idempotency record]
# ARGV: 1 game_id, 2 expected version, 3 expected prev hash, 4 games-index score,
#       5 event count, 6 fingerprint, 7 response, 8 ttl seconds,
#       then per event i (1-based): 9+3(i-1) seq, 10+3(i-1) hash, 11+3(i-1) envelope JSON,
#       then the waiting change ('add', 'remove' or ''), then the deadline ('' unchanged,
#       'clear', or the first deadline's score), then the silence ('' unchanged, 'clear', or
#       the score of the append's time)
# Returns {'ok', version} | {'replay', response, version} | {'idem_reused'}
#       | {'conflict', version} | {'prev_hash_mismatch', version, last_hash}
#       | {'corrupt', reason}
_APPEND_LUA = r"""
local game, log, games, waiting = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local deadlines, silent, archived, idem = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local expected = tonumber(ARGV[2])

-- Checks. Nothing below may write until every check has passed.
local function type_of(key)
  local t = redis.call('TYPE', key)
  if type(t) == 'table' then t = t['ok'] end
  return t
end
local game_type = type_of(game)
if game_type ~= 'none' and game_type ~= 'stream' then
  return {'corrupt', 'game key is a ' .. game_type}
end
local t = type_of(log)
if t ~= 'none' and t ~= 'stream' then return {'corrupt', 'log key is a ' .. t} end
t = type_of(games)
if t ~= 'none' and t ~= 'zset' then return {'corrupt', 'games key is a ' .. t} end
t = type_of(waiting)
if t ~= 'none' and t ~= 'zset' then return {'corrupt', 'waiting key is a ' .. t} end
t = type_of(deadlines)
if t ~= 'none' and t ~= 'zset' then return {'corrupt', 'deadlines key is a ' .. t} end
t = type_of(silent)
if t ~= 'none' and t ~= 'zset' then return {'corrupt', 'silent key is a ' .. t} end

local version, last_hash = 0, string.rep('0', 64)
local last = redis.call('XREVRANGE', game, '+', '-', 'COUNT', 1)
if #last == 0 then
  if game_type == 'stream' then return {'corrupt', 'game stream exists but has no entries'} end
  -- An archived game's stream is gone: it is never written again (its version is the archive's).
  local record = redis.call('HGET', archived, ARGV[1])
  if record then return {'conflict', cjson.decode(record)['version']} end
else
  local id = last[1][1]
  local seq = string.match(id, '^(%d+)%-0$')
  if not seq then return {'corrupt', 'unexpected entry id ' .. id} end
  version = tonumber(seq)
  last_hash = nil
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'hash' then last_hash = fields[i + 1] end
  end
  if not last_hash then return {'corrupt', 'last entry has no hash field'} end
  -- An entry deleted by hand (XDEL) leaves a gap that the last entry alone does not show.
  local length = redis.call('XLEN', game)
  if length ~= version then
    return {'corrupt', 'game stream has ' .. length .. ' entries, the last is seq ' .. version}
  end
end

if idem then
  local record = redis.call('GET', idem)
  if record then
    local nl = string.find(record, '\n', 1, true)
    if not nl then return {'corrupt', 'malformed idempotency record'} end
    if string.sub(record, 1, nl - 1) == ARGV[6] then
      return {'replay', string.sub(record, nl + 1), version}
    end
    return {'idem_reused'}
  end
end

if version ~= expected then return {'conflict', version} end
if last_hash ~= ARGV[3] then return {'prev_hash_mismatch', version, last_hash} end

-- Writes.
local n = tonumber(ARGV[5])
for i = 1, n do
  local base = 9 + 3 * (i - 1)
  -- The game's entry keeps its log entry's id, so the archiver can remove the game's log
  -- entries (and a rebuild merge them back in order) without a scan of the log.
  local event = ARGV[base + 2]
  local at = redis.call('XADD', log, '*', 'game_id', ARGV[1], 'seq', ARGV[base], 'event', event)
  redis.call('XADD', game, ARGV[base] .. '-0', 'hash', ARGV[base + 1], 'event', event, 'log', at)
end
if expected == 0 then
  redis.call('ZADD', games, 'NX', ARGV[4], ARGV[1])
end
local wait = ARGV[9 + 3 * n]
if wait == 'add' then
  redis.call('ZADD', waiting, 'NX', ARGV[4], ARGV[1])
elseif wait == 'remove' then
  redis.call('ZREM', waiting, ARGV[1])
end
local due = ARGV[10 + 3 * n]
if due == 'clear' then
  redis.call('ZREM', deadlines, ARGV[1])
elseif due ~= '' then
  redis.call('ZADD', deadlines, due, ARGV[1])
end
local quiet = ARGV[11 + 3 * n]
if quiet == 'clear' then
  redis.call('ZREM', silent, ARGV[1])
elseif quiet ~= '' then
  redis.call('ZADD', silent, quiet, ARGV[1])
end
if idem then
  redis.call('SET', idem, ARGV[6] .. '\n' .. ARGV[7], 'EX', ARGV[8])
end
return {'ok', expected + n}
"""


# Redis's answers when it will not write now: (error prefix, reason). redis-py gives OOM and
# READONLY their own classes, MISCONF only the generic ResponseError; a script's error carries
# the refused command's prefix (Redis 7) or names it in the message (older servers).
_REFUSALS = (("OOM", "oom"), ("READONLY", "readonly"), ("MISCONF", "misconf"))


def writes_refused(error: redis_errors.ResponseError) -> WritesRefused | None:
    """The store's :class:`WritesRefused` for a Redis refusal to write, None for other errors."""
    if isinstance(error, redis_errors.OutOfMemoryError):
        return WritesRefused("oom", str(error))
    if isinstance(error, redis_errors.ReadOnlyError):
        return WritesRefused("readonly", str(error))
    text = str(error)
    for prefix, reason in _REFUSALS:
        if text.startswith(prefix) or f"-{prefix} " in text or f"{prefix} command not" in text:
            return WritesRefused(reason, text)
    return None


def utc_now_iso() -> str:
    """The current UTC time as ISO-8601 with microseconds and a ``Z`` suffix."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _time_score(time: str) -> int:
    """Microseconds since the Unix epoch of an ISO-8601 UTC time string."""
    if not isinstance(time, str):
        raise ValueError("time must be an ISO-8601 UTC string")
    try:
        parsed = datetime.fromisoformat(time)
    except ValueError as exc:
        raise ValueError(f"time {time!r} is not ISO-8601") from exc
    if parsed.utcoffset() != timedelta(0):
        raise ValueError(f"time {time!r} is not UTC (needs a Z or +00:00 offset)")
    return (parsed - _EPOCH) // timedelta(microseconds=1)


def fence_and_wait(redis: Any, fence: str, value: int, wanted: int, timeout_ms: int) -> int:
    """How many replicas (up to ``wanted``, within ``timeout_ms``) hold everything the master of
    ``fence``'s slot held before this call. WAIT counts the replicas that have *its own
    connection's* writes, so it first writes ``value`` to the fence key on the same connection
    to that master: a replica that has the fence has all that came before it."""
    client = redis
    cluster = hasattr(client, "get_node_from_key")
    if cluster:
        client = client.get_redis_connection(client.get_node_from_key(fence))
    pipe = client.pipeline(transaction=False)
    pipe.set(fence, value)
    pipe.execute_command("WAIT", wanted, timeout_ms)
    try:
        _, replicas = pipe.execute()
    except (redis_errors.ConnectionError, redis_errors.AskError):
        if cluster:  # the slot moved or its master died: learn the layout for the next request
            redis.nodes_manager.initialize()
        raise
    return int(replicas)


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _field(fields: dict, name: str) -> Any:
    value = fields.get(name.encode())
    if value is None:
        value = fields.get(name)
    if value is None:
        raise CorruptStore(f"stream entry lacks the {name!r} field")
    return value


def _seq_of(entry_id: Any) -> int:
    text = _text(entry_id)
    seq, _, sub = text.partition("-")
    if sub != "0" or not seq.isdigit():
        raise CorruptStore(f"unexpected game stream entry id {text!r}")
    return int(seq)


def _xread_entries(reply: Any) -> list:
    """The (id, fields) entries of an XREAD reply, RESP2 or RESP3."""
    entries: list = []
    if isinstance(reply, dict):  # RESP3
        for stream_entries in reply.values():
            entries += stream_entries[0] if stream_entries else []
    else:
        for _, stream_entries in reply or []:
            entries += stream_entries
    return entries


def _xread_streams(reply: Any) -> list[tuple[str, list]]:
    """(stream key, its (id, fields) entries) of an XREAD reply, RESP2 or RESP3."""
    if isinstance(reply, dict):  # RESP3
        return [(_text(key), entries[0] if entries else []) for key, entries in reply.items()]
    return [(_text(key), entries) for key, entries in reply or []]


def _check_game_id(game_id: str) -> None:
    if not isinstance(game_id, str) or not game_id:
        raise ValueError("game_id must be a non-empty string")


def _check_count(name: str, value: Any, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}")


@dataclass(frozen=True)
class IdempotencyRecord:
    """What an append stores under an idempotency scope (e.g. user + Idempotency-Key).

    ``fingerprint`` identifies the request (e.g. a hash of method, path and body)
    and must not contain a newline; ``response`` is what a replay of the same
    request gets back (e.g. the response JSON).
    """

    scope: str
    fingerprint: str
    response: str
    ttl_seconds: int = DEFAULT_IDEMPOTENCY_TTL

    def __post_init__(self) -> None:
        if not isinstance(self.scope, str) or not self.scope:
            raise ValueError("scope must be a non-empty string")
        if not isinstance(self.fingerprint, str) or "\n" in self.fingerprint:
            raise ValueError("fingerprint must be a string without newlines")
        if not isinstance(self.response, str):
            raise ValueError("response must be a string")
        _check_count("ttl_seconds", self.ttl_seconds, 1)


@dataclass(frozen=True)
class AppendResult:
    """The outcome of :meth:`RedisEventStore.append`.

    ``replayed`` is true when an idempotency record with the same fingerprint
    existed: then nothing was appended, ``events`` is empty, ``response`` is the
    stored response and ``version`` is the game's current version. Otherwise
    ``events`` are the recorded events, ``version`` the game's new version and
    ``response`` the response stored with the idempotency record (if any).
    """

    game_id: str
    version: int
    events: tuple[RecordedEvent, ...]
    replayed: bool = False
    response: str | None = None

    @property
    def last_hash(self) -> str | None:
        return self.events[-1].hash if self.events else None


class LogEntry:
    """One entry of a partition log: ``id``, ``game_id``, ``seq``, ``type`` and ``event``.

    Read from the log, the envelope is decoded (as stored) on the first use of ``event``; its
    ``type`` is read from the stored text without decoding it (see
    :func:`~service.store.envelope.envelope_type`), so a reader that skips the types it has no
    use for (the projector: most events change no read model) pays no JSON for them.
    """

    __slots__ = ("id", "game_id", "seq", "_event", "_raw", "_decode", "_type")

    def __init__(
        self,
        id: str,
        game_id: str,
        seq: int,
        event: RecordedEvent | None = None,
        *,
        raw: bytes | str | None = None,
        decode: Callable[[Any], RecordedEvent] | None = None,
    ) -> None:
        if event is None and (raw is None or decode is None):
            raise ValueError("a log entry needs its event, or its stored envelope and a decoder")
        self.id = id
        self.game_id = game_id
        self.seq = seq
        self._event = event
        self._raw = raw
        self._decode = decode
        self._type = event.type if event is not None else envelope_type(raw)  # type: ignore[arg-type]

    @property
    def event(self) -> RecordedEvent:
        if self._event is None:
            assert self._decode is not None
            self._event = self._decode(self._raw)
            self._raw = None
        return self._event

    @property
    def type(self) -> str:
        if self._type is None:
            self._type = self.event.type
        return self._type

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LogEntry):
            return NotImplemented
        return (self.id, self.game_id, self.seq, self.event) == (
            other.id,
            other.game_id,
            other.seq,
            other.event,
        )

    def __hash__(self) -> int:
        return hash((self.id, self.game_id, self.seq))

    def __repr__(self) -> str:
        where = f"id={self.id!r}, game_id={self.game_id!r}, seq={self.seq}"
        return f"LogEntry({where}, type={self.type!r})"


@dataclass(frozen=True)
class GamePage:
    """A page of :meth:`RedisEventStore.list_games`; ``next_cursor`` is None on the last."""

    game_ids: list[str]
    next_cursor: str | None


def _encode_cursor(score: int, game_id: str) -> str:
    raw = json.dumps([score, game_id], separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def _decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        score, game_id = json.loads(raw)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise ValueError("invalid cursor") from exc
    if not isinstance(score, int) or not isinstance(game_id, str):
        raise ValueError("invalid cursor")
    return score, game_id


class RedisEventStore:
    """Event store on Redis streams; see the module docstring for the layout.

    ``redis`` may be a ``redis.Redis`` (or ``fakeredis.FakeRedis``, which needs
    ``lupa`` for scripts) with or without ``decode_responses``. ``now`` returns
    the ISO-8601 UTC time used when an append is given no time. Every read returns events
    as stored (:class:`RecordedEvent`, never upcast): ``service.app.game_log`` decodes them.
    """

    def __init__(
        self,
        redis: Any,
        prefix: str = "hearts",
        partitions: int = 16,
        *,
        now: Callable[[], str] = utc_now_iso,
        min_replicas: int = 0,
        replica_timeout_ms: int = 1000,
    ) -> None:
        if not isinstance(prefix, str) or not prefix or "{" in prefix or "}" in prefix:
            raise ValueError("prefix must be a non-empty string without braces")
        _check_count("partitions", partitions, 1)
        self.redis = redis
        self.prefix = prefix
        self.partitions = partitions
        self._now = now
        self._append_script = redis.register_script(_APPEND_LUA)
        _check_count("min_replicas", min_replicas, 0)
        _check_count("replica_timeout_ms", replica_timeout_ms, 1)
        self.min_replicas = min_replicas
        self.replica_timeout_ms = replica_timeout_ms
        # The archive of ended games (service/store/archive.py's GameArchive, set by its
        # ``attach``): every read below falls back on it when a game's stream is gone.
        self.archive: Any = None

    def now(self) -> str:
        """The time an append made now records (ISO-8601 UTC): the store's clock, injected in
        tests."""
        return self._now()

    # Keys -----------------------------------------------------------------

    def partition_of(self, game_id: str) -> int:
        _check_game_id(game_id)
        return zlib.crc32(game_id.encode("utf-8")) % self.partitions

    def _partition_prefix(self, partition: int) -> str:
        if not isinstance(partition, int) or not 0 <= partition < self.partitions:
            raise ValueError(f"partition must be in 0..{self.partitions - 1}")
        return f"{self.prefix}:{{p{partition}}}"

    def game_key(self, game_id: str) -> str:
        return f"{self._partition_prefix(self.partition_of(game_id))}:game:{game_id}"

    def log_key(self, partition: int) -> str:
        return f"{self._partition_prefix(partition)}:log"

    def games_key(self, partition: int) -> str:
        return f"{self._partition_prefix(partition)}:games"

    def waiting_key(self, partition: int) -> str:
        return f"{self._partition_prefix(partition)}:waiting"

    def waiting_since_before(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        """Ids of games still waiting for players that were created before ``time`` (ISO-8601
        UTC), oldest first, at most ``limit`` per partition: a read of the waiting index only.
        ``partitions``: only these (a sweeper holding leases on some); default all."""
        cutoff = _time_score(time)
        pipe = self.redis.pipeline(transaction=False)
        for partition in range(self.partitions) if partitions is None else partitions:
            pipe.zrangebyscore(self.waiting_key(partition), "-inf", f"({cutoff}", 0, limit)
        return [_text(game_id) for ids in pipe.execute() for game_id in ids]

    def deadlines_key(self, partition: int) -> str:
        return f"{self._partition_prefix(partition)}:deadlines"

    def deadlines_due(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        """Ids of games whose first deadline is at or before ``time`` (ISO-8601 UTC), earliest
        first, at most ``limit`` per partition: a read of the deadlines index only.
        ``partitions``: only these (a timekeeper holding leases on some); default all."""
        cutoff = _time_score(time)
        pipe = self.redis.pipeline(transaction=False)
        for partition in range(self.partitions) if partitions is None else partitions:
            pipe.zrangebyscore(self.deadlines_key(partition), "-inf", cutoff, 0, limit)
        return [_text(game_id) for ids in pipe.execute() for game_id in ids]

    def set_deadline(self, game_id: str, time: str | None) -> None:
        """Put a game's first deadline in the index (None: take it out), for an entry found
        stale: the appends keep it otherwise."""
        key = self.deadlines_key(self.partition_of(game_id))
        if time is None:
            self.redis.zrem(key, game_id)
        else:
            self.redis.zadd(key, {game_id: _time_score(time)})

    def silent_key(self, partition: int) -> str:
        return f"{self._partition_prefix(partition)}:silent"

    def silent_since_before(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        """Ids of games in play without a turn clock whose last append was before ``time``
        (ISO-8601 UTC), longest silent first, at most ``limit`` per partition: a read of the
        silent index only."""
        cutoff = _time_score(time)
        pipe = self.redis.pipeline(transaction=False)
        for partition in range(self.partitions) if partitions is None else partitions:
            pipe.zrangebyscore(self.silent_key(partition), "-inf", f"({cutoff}", 0, limit)
        return [_text(game_id) for ids in pipe.execute() for game_id in ids]

    def silent_before(self, game_id: str, time: str) -> bool:
        """Whether the game is in the silent index, last heard from before ``time``."""
        score = self.redis.zscore(self.silent_key(self.partition_of(game_id)), game_id)
        return score is not None and score < _time_score(time)

    def set_silent(self, game_id: str, time: str | None) -> None:
        """Put a game in the silent index as last heard from at ``time`` (None: take it out),
        for an entry found stale: the appends keep it otherwise."""
        key = self.silent_key(self.partition_of(game_id))
        if time is None:
            self.redis.zrem(key, game_id)
        else:
            self.redis.zadd(key, {game_id: _time_score(time)})

    def forget_waiting(self, game_id: str) -> None:
        """Take a game out of the waiting index (one found there that no longer waits)."""
        self.redis.zrem(self.waiting_key(self.partition_of(game_id)), game_id)

    def archived_key(self, partition: int) -> str:
        """The partition's index of archived games (game id -> JSON record; kept by
        service/store/archive.py): an append to a game there is refused."""
        return f"{self._partition_prefix(partition)}:archived"

    def idem_key(self, game_id: str, scope: str) -> str:
        return f"{self._partition_prefix(self.partition_of(game_id))}:idem:{scope}"

    def partition_log_keys(self) -> list[str]:
        return [self.log_key(p) for p in range(self.partitions)]

    # Writes ---------------------------------------------------------------

    def append(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command_id: str,
        time: str | None = None,
        idempotency: IdempotencyRecord | None = None,
        *,
        prev_hash: str | None = None,
        waiting: bool | None = None,
        deadline: str | bool | None = None,
        silent: bool | None = None,
    ) -> AppendResult:
        """Append ``events`` to the game if its version is ``expected_version``.

        All or nothing, in one Lua script. Checks, in order: an idempotency
        record for ``idempotency.scope`` with the same fingerprint returns its
        stored response (``replayed=True``, nothing appended); one with another
        fingerprint raises :class:`IdempotencyKeyReused`; a version other than
        ``expected_version`` raises :class:`ConcurrencyConflict`; a last hash
        other than ``prev_hash`` raises :class:`ChainMismatch`. Then the events
        get seqs ``expected_version + 1 ...`` in the game stream and the
        partition log, a game created by this append (``expected_version == 0``)
        enters the games index, and the idempotency record is stored with its TTL.

        ``time`` (ISO-8601 UTC, default ``now()``) is recorded in every event
        and, for a new game, is its creation time in the games index.
        ``prev_hash`` is the hash of the event at ``expected_version`` if the
        caller knows it (e.g. from :class:`StateCache`); otherwise it is read.
        The idempotency record lives in the game's partition, so it is found
        with :meth:`get_idempotent` given the same game id.
        ``waiting``: True if this append leaves a new game waiting for players (it enters
        the waiting index, scored by ``time``), False if it ends the wait (it leaves it).
        ``deadline``: the game's first deadline after this append (ISO-8601 UTC) enters the
        deadlines index; False takes the game out of it; None leaves it as it is.
        ``silent``: True puts the game in the silent index at ``time`` (a game in play without
        a turn clock), False takes it out, None leaves it as it is.
        """
        _check_game_id(game_id)
        _check_count("expected_version", expected_version, 0)
        if not isinstance(command_id, str) or not command_id:
            raise ValueError("command_id must be a non-empty string")
        events = list(events)
        if not events:
            raise ValueError("refusing to append no events")
        for event in events:
            if not isinstance(event, NewEvent):
                raise TypeError(f"expected NewEvent, got {type(event).__name__}")
        if time is None:
            time = self._now()
        score = _time_score(time)
        if prev_hash is None:
            prev_hash = self._hash_at(game_id, expected_version)

        recorded: list[RecordedEvent] = []
        link = prev_hash
        for offset, event in enumerate(paced(events), start=1):  # an import: 15,000 of them
            sealed = seal(
                event,
                game_id=game_id,
                seq=expected_version + offset,
                time=time,
                command_id=command_id,
                prev_hash=link,
            )
            recorded.append(sealed)
            link = sealed.hash

        partition = self.partition_of(game_id)
        keys = [
            self.game_key(game_id),
            self.log_key(partition),
            self.games_key(partition),
            self.waiting_key(partition),
            self.deadlines_key(partition),
            self.silent_key(partition),
            self.archived_key(partition),
        ]
        args: list[Any] = [game_id, expected_version, prev_hash, score, len(recorded)]
        if idempotency is not None:
            keys.append(self.idem_key(game_id, idempotency.scope))
            args += [idempotency.fingerprint, idempotency.response, idempotency.ttl_seconds]
        else:
            args += ["", "", 0]
        stored = [envelope_json(event) for event in paced(recorded)]
        for event, text in zip(recorded, stored, strict=True):
            args += [event.seq, event.hash, text]
        args.append({True: "add", False: "remove", None: ""}[waiting])
        if deadline is None or deadline is True:
            args.append("")
        elif deadline is False:
            args.append("clear")
        else:
            args.append(_time_score(deadline))
        args.append({True: score, False: "clear", None: ""}[silent])

        try:
            if self.min_replicas:
                reply, replicas = self._append_and_wait(keys, args)
            else:
                reply, replicas = self._append_script(keys=keys, args=args), None
        except redis_errors.ResponseError as exc:
            refused = writes_refused(exc)
            if refused is None:
                raise
            raise refused from exc
        status = _text(reply[0])
        if status == "ok" and replicas is not None and replicas < self.min_replicas:
            raise NotReplicated(game_id, int(reply[1]), self.min_replicas, replicas)
        if status == "ok":
            return AppendResult(
                game_id=game_id,
                version=int(reply[1]),
                events=tuple(recorded),  # sealed from a copy: as the store holds them
                response=idempotency.response if idempotency is not None else None,
            )
        if status == "replay":
            return AppendResult(
                game_id=game_id,
                version=int(reply[2]),
                events=(),
                replayed=True,
                response=_text(reply[1]),
            )
        if status == "idem_reused":
            assert idempotency is not None
            raise IdempotencyKeyReused(idempotency.scope)
        if status == "conflict":
            raise ConcurrencyConflict(expected_version, int(reply[1]), game_id)
        if status == "prev_hash_mismatch":
            raise ChainMismatch(game_id, int(reply[1]), prev_hash, _text(reply[2]))
        if status == "corrupt":
            raise CorruptStore(f"game {game_id!r}: {_text(reply[1])}")
        raise StoreError(f"unexpected reply from the append script: {reply!r}")

    def _append_and_wait(self, keys: list[str], args: list[Any]) -> tuple[Any, int]:
        """The append script then WAIT, pipelined on one connection to the slot's master (WAIT
        counts the replicas that have that connection's writes, so it must be the same one)."""
        client = self.redis
        cluster = hasattr(client, "get_node_from_key")
        if cluster:
            client = client.get_redis_connection(client.get_node_from_key(keys[0]))
        pipe = client.pipeline(transaction=False)
        self._append_script(keys=keys, args=args, client=pipe)
        pipe.execute_command("WAIT", self.min_replicas, self.replica_timeout_ms)
        try:
            reply, replicas = pipe.execute()
        except (redis_errors.ConnectionError, redis_errors.AskError):
            # The slot moved (failover, migration): the cluster client learns the new layout
            # for the next request; this one fails as unavailable.
            if cluster:
                self.redis.nodes_manager.initialize()
            raise
        return reply, int(replicas)

    def await_replicas(self, game_id: str, version: int) -> None:
        """Return once ``min_replicas`` replicas hold everything the game's master holds now
        (events already read included), else raise :class:`NotReplicated` for ``version``.

        For an answer that wrote nothing (a replay from an idempotency receipt): WAIT counts the
        replicas that have the writes of *its own connection*, so on a connection that wrote
        nothing it returns at once, whatever the replicas hold. So one small write first, on the
        connection to the slot's master: a fence key of the game's partition (its slot), set
        after everything already written there; a replica that has the fence has the rest.
        """
        if not self.min_replicas:
            return
        fence = f"{self._partition_prefix(self.partition_of(game_id))}:fence"
        replicas = fence_and_wait(
            self.redis, fence, version, self.min_replicas, self.replica_timeout_ms
        )
        if replicas < self.min_replicas:
            raise NotReplicated(game_id, version, self.min_replicas, replicas)

    def _hash_at(self, game_id: str, version: int) -> str:
        """Hash of the event at ``version`` (genesis for 0).

        If there is no such event the genesis hash is returned: the append
        script then reports the real version as a conflict.
        """
        if version == 0:
            return GENESIS_HASH
        entry_id = f"{version}-0"
        entries = self.redis.xrange(self.game_key(game_id), entry_id, entry_id)
        if not entries:
            return GENESIS_HASH
        return _text(_field(entries[0][1], "hash"))

    # Reads ----------------------------------------------------------------

    def _decode(self, data: Any) -> RecordedEvent:
        try:
            return decode_envelope(data)
        except (ValueError, KeyError) as exc:
            raise CorruptStore(f"undecodable envelope: {exc}") from exc

    def read(
        self,
        game_id: str,
        after: int = 0,
        limit: int | None = None,
        *,
        fast: PageDecoder | None = None,
    ) -> list[Any]:
        """Events of the game with seq > ``after``, in order, at most ``limit``, as stored
        (``RecordedEvent``). With ``fast``, each page is first offered to that decoder (a
        caller's own, e.g. one that types the payloads for a fold: service/app/typed_envelopes.py)
        and decoded as stored only if it refuses."""
        _check_game_id(game_id)
        _check_count("after", after, 0)
        if limit is not None:
            _check_count("limit", limit, 1)
        # A long game is read a page at a time, pausing between pages: one XRANGE of 15,000
        # entries and their decoding would hold a gevent worker for a third of a second.
        key = self.game_key(game_id)
        out: list[RecordedEvent] = []
        start = f"{after + 1}-0"
        pages = 0
        while True:
            count = READ_PAGE if limit is None else min(READ_PAGE, limit - len(out))
            entries = self.redis.xrange(key, start, "+", count=count)
            out += self._decode_page(entries, fast)
            pages += 1
            if len(entries) < count or (limit is not None and len(out) >= limit):
                break
            start = f"({_text(entries[-1][0])}"  # exclusive: after the page's last entry
            pause()
        # Nothing here, or the stream went between two pages (archived meanwhile): the archive.
        if self.archive is not None and (not out or (pages > 1 and not self.redis.exists(key))):
            archived = self._archived(game_id)
            if archived is not None:
                found = archived[after:]
                return found if limit is None else found[:limit]
        return out

    def _archived(self, game_id: str) -> list[RecordedEvent] | None:
        """An archived game's events, as stored (never typed by a page decoder: its callers
        take events as stored too, as they do a page their decoder refuses); None if the game
        is not archived."""
        return self.archive.events(game_id) if self.archive is not None else None

    def _decode_page(self, entries: list[Any], fast: PageDecoder | None = None) -> list[Any]:
        try:  # the common case in one pass (a load's hot loop): bytes keys, envelopes msgspec reads
            data = [fields[b"event"] for _, fields in entries]
        except Exception:  # str keys, a missing field: one by one
            return [self._decode(_field(fields, "event")) for _, fields in entries]
        if fast is not None:
            try:
                return fast(data)
            except Exception:  # whatever it refuses is decoded as stored, and judged so
                pass
        try:
            return decode_envelopes(data)
        except Exception:  # an envelope msgspec refuses: one by one, as the reference decides
            return [self._decode(item) for item in data]

    def read_since(
        self, game_id: str, version: int, *, fast: PageDecoder | None = None
    ) -> tuple[str | None, list[Any]]:
        """The hash recorded at ``version`` and the events after it, in one round trip.

        The hash is the entry's ``hash`` field (what the append script checks as the chain
        head), or None if the game has no event ``version``; that event itself is not decoded,
        so checking that a cached state is current costs one entry's transfer and no JSON.
        """
        _check_game_id(game_id)
        _check_count("version", version, 1)
        key = self.game_key(game_id)
        # XLEN in the same round trip: an entry deleted before ``version`` (XDEL by hand) leaves
        # the cached head intact, and only the count tells (fewer entries than the last seq).
        # More is no damage: another client appended between the two (the pipeline is not a
        # transaction), e.g. a bot runner playing beside the requests.
        pipe = self.redis.pipeline(transaction=False)
        pipe.xrange(key, f"{version}-0", "+")
        pipe.xlen(key)
        entries, length = pipe.execute()
        if not entries and length == 0:
            archived = self._archived(game_id)
            if archived is not None and version <= len(archived):
                return archived[version - 1].hash, archived[version:]
        if not entries or _seq_of(entries[0][0]) != version:
            return None, []
        last = _seq_of(entries[-1][0])
        if length < last:
            raise CorruptStore(f"game {game_id!r}: {length} events stored, the last is seq {last}")
        head = _text(_field(entries[0][1], "hash"))
        return head, self._decode_page(entries[1:], fast)

    def follow(self, game_id: str, after: int, block_ms: int) -> list[RecordedEvent]:
        """The game's events after seq ``after``, waiting up to ``block_ms`` for the first one
        (XREAD BLOCK: one connection parked per caller); empty if none came in time."""
        _check_game_id(game_id)
        _check_count("after", after, 0)
        _check_count("block_ms", block_ms, 1)
        if self.archive is not None and not self.redis.exists(self.game_key(game_id)):
            archived = self._archived(game_id)
            if archived is not None and archived[after:]:  # else: wait, as for any ended game
                return archived[after:]
        reply = self.redis.xread({self.game_key(game_id): f"{after}-0"}, block=block_ms)
        return [self._decode(_field(fields, "event")) for _, fields in _xread_entries(reply)]

    def follow_many(
        self, positions: dict[str, int], block_ms: int
    ) -> dict[str, list[RecordedEvent]]:
        """The events of several games after their seqs (``{game_id: after}``), waiting up to
        ``block_ms`` for the first one: one XREAD BLOCK on one connection for all of them (the
        games must share a partition on a Redis Cluster: one slot). Games with nothing new are
        left out; empty if nothing came in time."""
        _check_count("block_ms", block_ms, 1)
        streams: dict[str, str] = {}
        games: dict[str, str] = {}
        for game_id, after in positions.items():
            _check_game_id(game_id)
            _check_count("after", after, 0)
            key = self.game_key(game_id)
            streams[key] = f"{after}-0"
            games[key] = game_id
        if not streams:
            return {}
        reply = self.redis.xread(streams, block=block_ms)
        found: dict[str, list[RecordedEvent]] = {}
        for key, entries in _xread_streams(reply):
            events = [self._decode(_field(fields, "event")) for _, fields in entries]
            if events:
                found[games[key]] = events
        return found

    def version(self, game_id: str) -> int:
        """The seq of the game's last event; 0 if the game has none."""
        entries = self.redis.xrevrange(self.game_key(game_id), "+", "-", count=1)
        if not entries and self.archive is not None:
            record = self.archive.record_of(game_id)
            return record.version if record is not None else 0
        return _seq_of(entries[0][0]) if entries else 0

    def exists(self, game_id: str) -> bool:
        if self.redis.exists(self.game_key(game_id)):
            return True
        return self.archive is not None and self.archive.record_of(game_id) is not None

    def last_appended(self, game_ids: Sequence[str]) -> dict[str, str]:
        """When each game's last event was appended (its envelope's ISO-8601 time), in one
        round trip; a game with no events, or whose last entry does not decode (its reads say
        so: not this one's), is left out."""
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.xrevrange(self.game_key(game_id), "+", "-", count=1)
        found: dict[str, str] = {}
        for game_id, entries in zip(game_ids, pipe.execute(), strict=True):
            try:
                fields = entries[0][1]
                found[game_id] = decode_envelope(fields.get(b"event", fields.get("event"))).time
            except (IndexError, KeyError, TypeError, ValueError, AttributeError):
                continue
        return found

    def verify(self, game_id: str) -> list[ChainProblem]:
        """Check the game's whole hash chain (and that entry ids match seqs)."""
        _check_game_id(game_id)
        entries = self.redis.xrange(self.game_key(game_id), "-", "+")
        if not entries:
            archived = self._archived(game_id)
            if archived is not None:  # its object was checked as it was read; check it again
                return verify_chain(archived)
        events = []
        problems = []
        for entry_id, fields in entries:
            event = self._decode(_field(fields, "event"))
            if _text(entry_id) != f"{event.seq}-0":
                problems.append(
                    ChainProblem(event.seq, "entry id mismatch", f"entry id {_text(entry_id)}")
                )
            if _text(_field(fields, "hash")) != event.hash:
                problems.append(
                    ChainProblem(event.seq, "hash field mismatch", "entry hash != envelope hash")
                )
            events.append(event)
        problems += verify_chain(events)
        return sorted(problems, key=lambda p: p.seq)

    def get_idempotent(self, game_id: str, scope: str) -> tuple[str, str] | None:
        """The ``(fingerprint, response)`` stored under ``scope`` for the game, if any.

        A fast path before deciding a command; :meth:`append` checks again atomically.
        """
        record = self.redis.get(self.idem_key(game_id, scope))
        if record is None:
            return None
        fingerprint, sep, response = _text(record).partition("\n")
        if not sep:
            raise CorruptStore(f"malformed idempotency record for {scope!r}")
        return fingerprint, response

    def list_games(self, cursor: str | None = None, limit: int = 50) -> GamePage:
        """Game ids across all partitions, oldest first (by creation time, then id).

        ``cursor`` is the opaque ``next_cursor`` of the previous page. The order of
        listed games never changes; a game created with a time earlier than the
        cursor's (clock skew between writers) is not seen by later pages.
        """
        _check_count("limit", limit, 1)
        after = _decode_cursor(cursor) if cursor is not None else None
        want = limit + 1
        minimum: Any = after[0] if after is not None else "-inf"
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.zrangebyscore(
                self.games_key(p), minimum, "+inf", start=0, num=want, withscores=True
            )
        candidates: list[tuple[int, str]] = []
        for p, rows in enumerate(pipe.execute()):
            candidates += self._games_after(p, after, want, rows)
        candidates.sort()
        page = candidates[:limit]
        more = len(candidates) > limit
        return GamePage(
            game_ids=[game_id for _, game_id in page],
            next_cursor=_encode_cursor(*page[-1]) if more else None,
        )

    def _games_after(
        self, partition: int, after: tuple[int, str] | None, want: int, rows: list
    ) -> list[tuple[int, str]]:
        """Up to ``want`` (score, id) of the partition after ``after``; ``rows`` is batch 1."""
        found: list[tuple[int, str]] = []
        offset = 0
        minimum: Any = after[0] if after is not None else "-inf"
        while True:
            for member, score in rows:
                item = (int(score), _text(member))
                if after is None or item > after:
                    found.append(item)
            if len(found) >= want or len(rows) < want:
                return found[:want]
            # Only reached when many games share the cursor's score: page on.
            offset += len(rows)
            rows = self.redis.zrangebyscore(
                self.games_key(partition), minimum, "+inf", start=offset, num=want, withscores=True
            )

    def read_log(
        self,
        partition: int,
        after_id: str = "0-0",
        count: int = 100,
        *,
        block_ms: int | None = None,
    ) -> list[LogEntry]:
        """Entries of a partition log with ids after ``after_id``, oldest first.

        With ``block_ms``, waits up to that long (XREAD BLOCK) when there are none.
        """
        key = self.log_key(partition)
        if not isinstance(after_id, str) or not _STREAM_ID.match(after_id):
            raise ValueError("after_id must be a stream id like '1700000000000-0'")
        _check_count("count", count, 1)
        if block_ms is None:
            entries = self.redis.xrange(key, f"({after_id}", "+", count=count)
        else:
            _check_count("block_ms", block_ms, 0)
            reply = self.redis.xread({key: after_id}, count=count, block=block_ms)
            entries = _xread_entries(reply)
        if self.archive is not None and block_ms is None:
            # Ended games' entries left the log for the archive: merged back in id order, so
            # a rebuild (or any reader of the log) sees the log as it was written.
            return self.archive.merge_log(partition, after_id, count, self.log_entries(entries))
        return self.log_entries(entries)

    def log_entries(self, entries: Sequence[tuple[Any, dict]]) -> list[LogEntry]:
        """Log entries from a reply's ``(id, fields)`` pairs (XRANGE, XREAD, XREADGROUP);
        each envelope is decoded when its event is first used."""
        decode = self._decode
        out = []
        for entry_id, fields in entries:
            game_id = fields.get(b"game_id") or _field(fields, "game_id")
            seq = fields.get(b"seq") or _field(fields, "seq")
            raw = fields.get(b"event") or _field(fields, "event")
            out.append(LogEntry(_text(entry_id), _text(game_id), int(seq), raw=raw, decode=decode))
        return out


S = TypeVar("S")


@dataclass(frozen=True)
class Snapshot(Generic[S]):
    """A game's folded state at ``version``; ``last_hash`` is the hash of event ``version``."""

    version: int
    last_hash: str
    state: S


class StateCache(Generic[S]):
    """In-process cache of folded game states that is never stale.

    Every :meth:`get` reads from Redis the events from the cached version on
    (including the cached version's own entry, to check its hash), so it always
    returns the state at the game's current version; the cache only saves the
    fold of the events before it. When nothing was appended since, that is one
    round trip returning one entry, and nothing is decoded. If the cached
    event's hash no longer matches (the stream was rewritten), the state is
    folded again from scratch.

    ``fold(state, events) -> state`` must not mutate ``state`` (cached states
    are shared between callers); the events it is given have consecutive seqs
    (checked here), so it need not check them again. ``initial()`` makes the state
    of a game with no events. Thread-safe; holds at most ``max_games`` games (least recently used
    are dropped).
    """

    def __init__(
        self,
        store: RedisEventStore,
        fold: Callable[[S, list[Any]], S],
        initial: Callable[[], S],
        max_games: int = 1024,
        fast: PageDecoder | None = None,
    ) -> None:
        _check_count("max_games", max_games, 1)
        self.store = store
        self.fold = fold
        self.fast = fast  # the fold's own page decoder, if it has one (see RedisEventStore.read)
        self.initial = initial
        self.max_games = max_games
        self._entries: OrderedDict[str, Snapshot[S]] = OrderedDict()
        self._lock = threading.Lock()
        # Where a miss may be folded instead of here: the game's snapshot folded elsewhere (a
        # long game's, in a child process: issue 33), or None to fold it here. It may be behind:
        # it is brought up to date as a cached one is.
        self.cold: Callable[[str], Snapshot[S] | None] | None = None

    def get(self, game_id: str) -> Snapshot[S]:
        """The game's state at its current version (version 0 and ``initial()`` if none)."""
        with self._lock:
            cached = self._entries.get(game_id)
        snapshot = self._refresh(game_id, cached) if cached is not None else None
        if snapshot is None and cached is None and self.cold is not None:
            folded = self.cold(game_id)
            snapshot = self._refresh(game_id, folded) if folded is not None else None
        if snapshot is None:
            events = self.store.read(game_id, fast=self.fast)
            snapshot = self._fold_from(game_id, 0, GENESIS_HASH, self.initial(), events)
        if snapshot.version > 0:
            self.remember(game_id, snapshot)
        return snapshot

    def peek(self, game_id: str) -> Snapshot[S] | None:
        """The cached snapshot as it is, without asking Redis (None if not cached).

        It may be behind the game: only for a caller that checks the version another way,
        e.g. by appending with it as the expected version.
        """
        with self._lock:
            return self._entries.get(game_id)

    def _refresh(self, game_id: str, cached: Snapshot[S]) -> Snapshot[S] | None:
        head, events = self.store.read_since(game_id, cached.version, fast=self.fast)
        if head != cached.last_hash:
            return None
        if not events:
            return cached
        return self._fold_from(game_id, cached.version, cached.last_hash, cached.state, events)

    def _fold_from(
        self, game_id: str, version: int, last_hash: str, state: S, events: list[Any]
    ) -> Snapshot[S]:
        if not events:
            return Snapshot(version, last_hash, state)
        if [event.seq for event in events] != list(range(version + 1, version + 1 + len(events))):
            for expected, event in enumerate(events, start=version + 1):  # the first one amiss
                if event.seq != expected:
                    raise CorruptStore(
                        f"game {game_id!r}: seq {event.seq} where {expected} was due"
                    )
        return Snapshot(events[-1].seq, events[-1].hash, self.fold(state, events))

    def remember(self, game_id: str, snapshot: Snapshot[S]) -> None:
        """Cache a snapshot (e.g. the state after a successful append).

        Kept only if not older than the cached one. Safe even if wrong about the
        current version: :meth:`get` always catches up from Redis.
        """
        with self._lock:
            cached = self._entries.get(game_id)
            if cached is None or cached.version <= snapshot.version:
                self._entries[game_id] = snapshot
            self._entries.move_to_end(game_id)
            while len(self._entries) > self.max_games:
                self._entries.popitem(last=False)

    def forget(self, game_id: str) -> None:
        with self._lock:
            self._entries.pop(game_id, None)
