"""The append: a game's new events, its partition-log entries, its index entries and the
idempotency receipt, written by one Lua script, all or nothing.

Redis does not roll a script back, so the script makes every check before its first write: an
append writes all its events to both streams (and the rest) or nothing at all. The script takes
its keys as ``KEYS`` (Redis Cluster requires every key a script touches to be declared, and all
of them in one slot: they share the game's ``{p<N>}`` tag, service/store/keys.py) and its data
as one JSON argument, decoded with ``cjson``, whose fields it reads by name.

With ``min_replicas`` an append is followed, on the same connection to the slot's master, by
``WAIT min_replicas timeout``: the append is acknowledged only once that many replicas have it
(else :class:`NotReplicated`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import redis.exceptions as redis_errors

from service.cooperative import paced
from service.store.envelope import GENESIS_HASH, NewEvent, RecordedEvent, envelope_json, seal
from service.store.errors import (
    ChainMismatch,
    ConcurrencyConflict,
    CorruptStore,
    IdempotencyKeyReused,
    NotReplicated,
    StoreError,
    WritesRefused,
)
from service.store.keys import KeyLayout, check_count, check_game_id, time_score
from service.store.stream_entries import field, text

DEFAULT_IDEMPOTENCY_TTL = 86400

# Stored types whose payload is kept once, in the game's stream: their partition-log entry holds
# the same envelope with an empty payload. A creator's preset deals (``DealPlan``: up to a 32 KB
# request) were stored twice, and the log readers use only such a record's type, seq and time
# (service.app.game_log.sources marks the game arranged). The log's copy is no link of the hash
# chain (its hash is the stored event's): chains are checked on the game's stream, never on a log.
STREAM_ONLY_PAYLOADS = frozenset({"DealPlan"})

APPEND_LUA = r"""
-- KEYS, all in the game's slot:
local game = KEYS[1]       -- the game's stream
local log = KEYS[2]        -- its partition's log
local games = KEYS[3]      -- the partition's games index (by creation time)
local waiting = KEYS[4]    -- games waiting for players
local deadlines = KEYS[5]  -- games whose turn clock runs, by first deadline
local silent = KEYS[6]     -- games in play without a clock, by last append
local archived = KEYS[7]   -- archived games (service/store/archive.py)
local receipt = KEYS[8]    -- the idempotency receipt, when the append has one

-- ARGV[1], the append (built by _payload): what Redis stores goes as strings, as stored.
--   game_id, expected (the version the caller decided on: a number), prev_hash (its chain
--   head), created (the games-index score of a game this append creates),
--   events: [{seq, hash, envelope, logged?}],
--   idempotency: {fingerprint, response, ttl}            (absent: no receipt)
--   waiting: 'add' | 'remove'                            (absent: unchanged)
--   deadline, silent: a score | 'clear'                  (absent: unchanged)
local append = cjson.decode(ARGV[1])
local id = append.game_id

-- Replies: {'ok', version} | {'replay', response, version} | {'idem_reused'}
--        | {'conflict', version} | {'prev_hash_mismatch', version, last_hash}
--        | {'corrupt', reason}

-- Redis does not roll a script back: every check comes before the first write.

-- A key this append writes that is of another type than ours is a corrupt store: said before
-- anything is written, rather than a command failing half way through the writes. (An index
-- this append leaves alone is not asked: each TYPE is a measurable share of the script.)
local function wrong_type(key, name, wanted)
  local t = redis.call('TYPE', key)
  t = t['ok'] or t  -- a status reply
  if t ~= 'none' and t ~= wanted then return {'corrupt', name .. ' key is a ' .. t} end
end
local wrong = wrong_type(game, 'game', 'stream') or wrong_type(log, 'log', 'stream')
  or (append.expected == 0 and wrong_type(games, 'games', 'zset'))
  or (append.waiting and wrong_type(waiting, 'waiting', 'zset'))
  or (append.deadline and wrong_type(deadlines, 'deadlines', 'zset'))
  or (append.silent and wrong_type(silent, 'silent', 'zset'))
if wrong then return wrong end

-- The game's version and chain head: its last entry's seq (the id is '<seq>-0') and hash.
local version, last_hash = 0, string.rep('0', 64)
local last = redis.call('XREVRANGE', game, '+', '-', 'COUNT', 1)
if #last == 0 then
  if redis.call('EXISTS', game) == 1 then
    return {'corrupt', 'game stream exists but has no entries'}
  end
  -- An archived game's stream is gone: it is never written again (its version is the archive's).
  local record = redis.call('HGET', archived, id)
  if record then return {'conflict', cjson.decode(record)['version']} end
else
  local entry_id, fields = last[1][1], last[1][2]
  local seq = string.match(entry_id, '^(%d+)%-0$')
  if not seq then return {'corrupt', 'unexpected entry id ' .. entry_id} end
  version = tonumber(seq)
  last_hash = nil
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

-- A receipt answers before the version is compared: a retried request whose first try was
-- appended finds the game moved on, and gets the first try's response again.
local idem = append.idempotency
if idem then
  local record = redis.call('GET', receipt)
  if record then
    local nl = string.find(record, '\n', 1, true)
    if not nl then return {'corrupt', 'malformed idempotency record'} end
    if string.sub(record, 1, nl - 1) == idem.fingerprint then
      return {'replay', string.sub(record, nl + 1), version}
    end
    return {'idem_reused'}
  end
end

-- Optimistic concurrency: the caller decided on this version and this chain head.
if version ~= append.expected then return {'conflict', version} end
if last_hash ~= append.prev_hash then return {'prev_hash_mismatch', version, last_hash} end

-- Writes. Each event goes to the partition log, then to the game's stream with its log entry's
-- id, so the archiver can remove the game's log entries (and a rebuild merge them back in
-- order) without a scan of the log. An event with a 'logged' envelope (its payload left in the
-- game's stream: STREAM_ONLY_PAYLOADS) puts that one in the log.
for _, event in ipairs(append.events) do
  local seq, envelope = event.seq, event.envelope
  local at = redis.call('XADD', log, '*', 'game_id', id, 'seq', seq, 'event',
    event.logged or envelope)
  redis.call('XADD', game, seq .. '-0', 'hash', event.hash, 'event', envelope, 'log', at)
end

-- The indexes the sweeps read instead of every game.
if append.expected == 0 then
  redis.call('ZADD', games, 'NX', append.created, id)
end
if append.waiting == 'add' then
  redis.call('ZADD', waiting, 'NX', append.created, id)
elseif append.waiting == 'remove' then
  redis.call('ZREM', waiting, id)
end
-- A score puts the game in the index (or moves it there); 'clear' takes it out.
if append.deadline == 'clear' then
  redis.call('ZREM', deadlines, id)
elseif append.deadline then
  redis.call('ZADD', deadlines, append.deadline, id)
end
if append.silent == 'clear' then
  redis.call('ZREM', silent, id)
elseif append.silent then
  redis.call('ZADD', silent, append.silent, id)
end

if idem then
  redis.call('SET', receipt, idem.fingerprint .. '\n' .. idem.response, 'EX', idem.ttl)
end
return {'ok', append.expected + #append.events}
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
    message = str(error)
    for prefix, reason in _REFUSALS:
        if (
            message.startswith(prefix)
            or f"-{prefix} " in message
            or f"{prefix} command not" in message
        ):
            return WritesRefused(reason, message)
    return None


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
        check_count("ttl_seconds", self.ttl_seconds, 1)


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


class Appender:
    """Seals a game's new events and writes them with the append script (see
    :meth:`RedisEventStore.append`, which hands its calls here, for the contract)."""

    def __init__(
        self,
        redis: Any,
        keys: KeyLayout,
        now: Callable[[], str],
        min_replicas: int = 0,
        replica_timeout_ms: int = 1000,
    ) -> None:
        check_count("min_replicas", min_replicas, 0)
        check_count("replica_timeout_ms", replica_timeout_ms, 1)
        self.redis = redis
        self.keys = keys
        self.now = now
        self.min_replicas = min_replicas
        self.replica_timeout_ms = replica_timeout_ms
        self._script = redis.register_script(APPEND_LUA)

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
        check_game_id(game_id)
        check_count("expected_version", expected_version, 0)
        if not isinstance(command_id, str) or not command_id:
            raise ValueError("command_id must be a non-empty string")
        events = list(events)
        if not events:
            raise ValueError("refusing to append no events")
        for event in events:
            if not isinstance(event, NewEvent):
                raise TypeError(f"expected NewEvent, got {type(event).__name__}")
        if time is None:
            time = self.now()
        score = time_score(time)
        if prev_hash is None:
            prev_hash = self.hash_at(game_id, expected_version)

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

        partition = self.keys.partition_of(game_id)
        keys = [
            self.keys.game_key(game_id),
            self.keys.log_key(partition),
            self.keys.games_key(partition),
            self.keys.waiting_key(partition),
            self.keys.deadlines_key(partition),
            self.keys.silent_key(partition),
            self.keys.archived_key(partition),
        ]
        if idempotency is not None:
            keys.append(self.keys.idem_key(game_id, idempotency.scope))
        payload = _payload(
            game_id, expected_version, prev_hash, score, recorded, idempotency, waiting
        )
        if deadline is False:
            payload["deadline"] = "clear"
        elif isinstance(deadline, str):
            payload["deadline"] = str(time_score(deadline))
        if silent is not None:
            payload["silent"] = str(score) if silent else "clear"
        # Non-ASCII goes as UTF-8, not as \u escapes: cjson hands each envelope back to Redis
        # byte for byte as envelope_json wrote it (the hash chain covers those bytes).
        args = [json.dumps(payload, ensure_ascii=False, separators=(",", ":"))]

        try:
            if self.min_replicas:
                reply, replicas = self._append_and_wait(keys, args)
            else:
                reply, replicas = self._script(keys=keys, args=args), None
        except redis_errors.ResponseError as exc:
            refused = writes_refused(exc)
            if refused is None:
                raise
            raise refused from exc
        status = text(reply[0])
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
                response=text(reply[1]),
            )
        if status == "idem_reused":
            assert idempotency is not None
            raise IdempotencyKeyReused(idempotency.scope)
        if status == "conflict":
            raise ConcurrencyConflict(expected_version, int(reply[1]), game_id)
        if status == "prev_hash_mismatch":
            raise ChainMismatch(game_id, int(reply[1]), prev_hash, text(reply[2]))
        if status == "corrupt":
            raise CorruptStore(f"game {game_id!r}: {text(reply[1])}")
        raise StoreError(f"unexpected reply from the append script: {reply!r}")

    def _append_and_wait(self, keys: list[str], args: list[Any]) -> tuple[Any, int]:
        """The append script then WAIT, pipelined on one connection to the slot's master (WAIT
        counts the replicas that have that connection's writes, so it must be the same one)."""
        client = self.redis
        cluster = hasattr(client, "get_node_from_key")
        if cluster:
            client = client.get_redis_connection(client.get_node_from_key(keys[0]))
        pipe = client.pipeline(transaction=False)
        self._script(keys=keys, args=args, client=pipe)
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
        """See :meth:`RedisEventStore.await_replicas`."""
        if not self.min_replicas:
            return
        replicas = fence_and_wait(
            self.redis,
            self.keys.fence_key(game_id),
            version,
            self.min_replicas,
            self.replica_timeout_ms,
        )
        if replicas < self.min_replicas:
            raise NotReplicated(game_id, version, self.min_replicas, replicas)

    def hash_at(self, game_id: str, version: int) -> str:
        """Hash of the event at ``version`` (genesis for 0).

        If there is no such event the genesis hash is returned: the append
        script then reports the real version as a conflict.
        """
        if version == 0:
            return GENESIS_HASH
        entry_id = f"{version}-0"
        entries = self.redis.xrange(self.keys.game_key(game_id), entry_id, entry_id)
        if not entries:
            return GENESIS_HASH
        return text(field(entries[0][1], "hash"))


def _payload(
    game_id: str,
    expected_version: int,
    prev_hash: str,
    created: int,
    recorded: list[RecordedEvent],
    idempotency: IdempotencyRecord | None,
    waiting: bool | None,
) -> dict[str, Any]:
    """The append script's argument, its fields named as the script reads them (an absent
    field: nothing to do; never null, which cjson decodes to a value that is true)."""
    payload: dict[str, Any] = {
        "game_id": game_id,
        "expected": expected_version,
        "prev_hash": prev_hash,
        "created": str(created),
        "events": [_entry(event) for event in paced(recorded)],
    }
    if idempotency is not None:
        payload["idempotency"] = {
            "fingerprint": idempotency.fingerprint,
            "response": idempotency.response,
            "ttl": str(idempotency.ttl_seconds),
        }
    if waiting is not None:
        payload["waiting"] = "add" if waiting else "remove"
    return payload


def _entry(event: RecordedEvent) -> dict[str, str]:
    """One event of the append script's argument (``logged``: see STREAM_ONLY_PAYLOADS)."""
    entry = {"seq": str(event.seq), "hash": event.hash, "envelope": envelope_json(event)}
    if event.type in STREAM_ONLY_PAYLOADS:
        entry["logged"] = envelope_json(replace(event, payload={}))
    return entry
