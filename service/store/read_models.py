"""Where the read models live in Redis: key layout, the atomic apply step, and the reads.

Generations
-----------
Read models live under a *generation* (an id like ``g18f3a2b7c01a4``). The pointer key names the
current one; ``hearts projections rebuild`` folds the whole log into a fresh generation and then
swaps the pointer (one SET), so readers see either the old models or the new ones, never a mix.

Key layout (``<N>`` a partition, ``{p<N>}`` the partition's Redis Cluster hash tag, the same as
the event store's; ``<gen>`` a generation)::

    <prefix>:projections:current           string: the current generation
    <prefix>:{p<N>}:proj:<gen>:checkpoint  hash: position (id of the last log entry of partition
                                           N applied), applied (how many log entries applied)
    <prefix>:{p<N>}:proj:<gen>:game:<id>   string: the game's scoreboard JSON (its ``seq`` is
                                           the last event of the game applied)
    <prefix>:{p<N>}:proj:<gen>:stats       hash: "<counter>:<who>" -> integer, the player's
                                           counters summed over partition N's games (who: a
                                           name, or a registered player's marked id, see
                                           ``projections.stats.who``)
    <prefix>:{p<N>}:proj:<gen>:recent:<who>  sorted set: the player's games of partition N,
                                           score = start time in microseconds
    <prefix>:{p<N>}:proj:<gen>:rated       sorted set: partition N's finished rated games
                                           (``projections.ratings.RatedGame`` JSON), score =
                                           finish time in microseconds
    <prefix>:{p<N>}:projretired:<gen>      string: the generation is retired (swapped out);
                                           the apply step refuses to write to it

Every key the apply step of partition N touches carries ``{p<N>}``, so the step is one Lua script
on one cluster slot. Player statistics are therefore kept per partition and summed at read time
(16 HGETALLs for the whole leaderboard, cached per checkpoint vector): a cross-partition
aggregate could not be updated in the same atomic step as the partition's checkpoint.

Ratings likewise: each partition records its rated games exactly once (``rated``), and the
ratings are a fold of all of them in (finish time, game id) order at read time
(``projections.ratings.fold``), so the live models and a rebuild give equal ratings whatever
order the partitions were applied in. The fold is cached: read again only when a partition
recorded another rated game, and only the new games are folded when they all finished after
the last one folded (else everything is folded again).

Exactly once
------------
The apply step (``service.app.projection_apply.apply_entries``: the fold in
``projections.batch``, then :meth:`ProjectionStore.write_batch`) takes a run of consecutive log
entries of one partition and the partition position they follow. In one script it checks that the
generation is not retired and that the checkpoint still holds that position, then writes the
new scoreboards, adds the statistics, and moves the checkpoint to the last entry. A re-delivered
entry is at or before the checkpoint, so it is never applied twice; a stale caller (another
projector got there first) gets ``stale`` and reads the checkpoint again.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from projections.batch import Batch
from projections.ratings import PlayerRating, RatedGame, fold
from projections.scoreboard import Scoreboard
from projections.stats import (
    COUNTERS,
    PlayerStats,
    merge_counters,
    merge_stats,
)
from service.store.archive import removed_key
from service.store.event_store import RedisEventStore
from service.store.fairplay import cleared_key, read_cleared

# KEYS: 1 checkpoint, 2 retired marker, 3 stats, 4 rated games, then one key per game document,
#       then one per recent-set
# ARGV[1]: one JSON object (decoded with cjson): {"after": expected position ('' = nothing
#   applied yet), "position": the new one, "applied": entries applied, "docs": [text, one per
#   game document key], "counters": [[operation, field, value]] on the stats hash, "recent":
#   [[score, member], one per recent-set key], "rated": [[score, member]] for the rated games}.
#   The script applies the operations it is given (sum, max, min, or: a union of bit masks) and
#   interprets none of them: a counter's operation is its declared merge (projections/stats.py
#   COUNTER_MERGES, told as STORE_OPERATION). Numbers travel as
#   strings (Lua's numbers would round microsecond scores).
# Returns {'ok'} | {'stale', position} | {'retired'}
_APPLY_LUA = r"""
if redis.call('EXISTS', KEYS[2]) == 1 then return {'retired'} end
local a = cjson.decode(ARGV[1])
local position = redis.call('HGET', KEYS[1], 'position')
if not position then position = '' end
if position ~= a.after then return {'stale', position} end
local nd = #a.docs
for i, doc in ipairs(a.docs) do
  redis.call('SET', KEYS[4 + i], doc)
end
for _, c in ipairs(a.counters) do
  local op, field, value = c[1], c[2], c[3]
  if op == 'sum' then
    -- A sum back at 0 (e.g. -10 then +10 points) is removed: a fold of the same log in other
    -- batches never wrote it, and a rebuild must dump equal.
    if redis.call('HINCRBY', KEYS[3], field, value) == 0 then
      redis.call('HDEL', KEYS[3], field)
    end
  elseif op == 'max' or op == 'min' then
    local seen = redis.call('HGET', KEYS[3], field)
    local v = tonumber(value)
    if not seen or (op == 'max' and v > tonumber(seen)) or (op == 'min' and v < tonumber(seen)) then
      redis.call('HSET', KEYS[3], field, value)
    end
  elseif op == 'or' then
    -- A set of small numbers as a bit mask: the union of the two (Lua 5.1 has no bit operators;
    -- a mask stays under 2**53, so the doubles are exact).
    local seen = tonumber(redis.call('HGET', KEYS[3], field) or '0')
    local v, union, bit = tonumber(value), 0, 1
    while seen > 0 or v > 0 do
      if seen % 2 == 1 or v % 2 == 1 then union = union + bit end
      seen, v, bit = math.floor(seen / 2), math.floor(v / 2), bit * 2
    end
    redis.call('HSET', KEYS[3], field, string.format('%.0f', union))
  else
    return redis.error_reply('unknown counter operation ' .. op)
  end
end
for i, z in ipairs(a.recent) do
  redis.call('ZADD', KEYS[4 + nd + i], z[1], z[2])
end
for _, z in ipairs(a.rated) do
  redis.call('ZADD', KEYS[4], z[1], z[2])
end
redis.call('HSET', KEYS[1], 'position', a.position)
redis.call('HINCRBY', KEYS[1], 'applied', a.applied)
return {'ok'}
"""

APPLIED = "ok"
STALE = "stale"
RETIRED = "retired"


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def stream_id(text: str) -> tuple[int, int]:
    """A stream id as a comparable pair."""
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def new_generation_id() -> str:
    return f"g{int(time.time() * 1000):x}{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """How far a generation has applied one partition's log."""

    partition: int
    position: str | None  # the last entry applied; None before the first
    applied: int  # entries applied

    def covers(self, entry_id: str) -> bool:
        return self.position is not None and stream_id(self.position) >= stream_id(entry_id)


@dataclass(frozen=True, slots=True)
class AsOf:
    """Up to where a generation's read models are current."""

    generation: str | None
    checkpoints: tuple[Checkpoint, ...]
    log_lengths: tuple[int, ...]

    @property
    def lag(self) -> int:
        return sum(
            max(0, n - c.applied) for n, c in zip(self.log_lengths, self.checkpoints, strict=True)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "positions": [c.position for c in self.checkpoints],  # by partition
            "lag": self.lag,
        }


@dataclass(frozen=True, slots=True)
class _RatingsCache:
    generation: str
    counts: tuple[int, ...]  # rated games read per partition
    game_ids: set[str]
    last: tuple[int, str]  # the order of the last game folded
    ratings: dict[str, PlayerRating]
    cleared: dict[str, int]  # the operators' clearings folded with (service/store/fairplay.py)


@dataclass(frozen=True, slots=True)
class RecentGame:
    game_id: str
    board: Scoreboard | None


class ProjectionStore:
    """The read models of an event store's log, in the same Redis under the same prefix."""

    def __init__(self, store: RedisEventStore, count_arranged: bool = False) -> None:
        """``count_arranged``: arranged games (deals chosen by their creator) count in the
        player statistics (``HEARTS_COUNT_ARRANGED_GAMES``); the live projector and a rebuild
        must be given the same, and a change takes a rebuild."""
        self.store = store
        self.count_arranged = count_arranged
        self.redis = store.redis
        self.prefix = store.prefix
        self.partitions = store.partitions
        self._apply_script = self.redis.register_script(_APPLY_LUA)
        self._players_cache: tuple[Any, dict[str, PlayerStats]] | None = None
        self._ratings_cache: _RatingsCache | None = None
        self._cache_lock = threading.Lock()

    # Keys -----------------------------------------------------------------

    @property
    def pointer_key(self) -> str:
        return f"{self.prefix}:projections:current"

    def _base(self, generation: str, partition: int) -> str:
        return f"{self.prefix}:{{p{partition}}}:proj:{generation}"

    def checkpoint_key(self, generation: str, partition: int) -> str:
        return f"{self._base(generation, partition)}:checkpoint"

    def game_key(self, generation: str, game_id: str) -> str:
        return f"{self._base(generation, self.store.partition_of(game_id))}:game:{game_id}"

    def drop_boards(self, generation: str, game_ids: Iterable[str]) -> None:
        """Delete games' scoreboard documents from a generation: an archived game's board is
        folded from the archive when read (service/app/archiver.py), not kept in Redis."""
        keys = [self.game_key(generation, game_id) for game_id in game_ids]
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:  # one key a command: on a cluster the games' slots differ
            pipe.unlink(key)
        pipe.execute()

    def stats_key(self, generation: str, partition: int) -> str:
        return f"{self._base(generation, partition)}:stats"

    def rated_key(self, generation: str, partition: int) -> str:
        return f"{self._base(generation, partition)}:rated"

    def recent_key(self, generation: str, partition: int, name: str) -> str:
        return f"{self._base(generation, partition)}:recent:{name}"

    def retired_key(self, generation: str, partition: int) -> str:
        return f"{self.prefix}:{{p{partition}}}:projretired:{generation}"

    def generation_pattern(self, generation: str) -> str:
        """A SCAN pattern matching every read-model key of a generation (not its markers)."""
        return f"{_glob_escape(self.prefix)}:{{p*}}:proj:{_glob_escape(generation)}:*"

    # The generation pointer ---------------------------------------------------

    def current_generation(self) -> str | None:
        value = self.redis.get(self.pointer_key)
        return _text(value) if value is not None else None

    def ensure_generation(self) -> str:
        """The current generation, creating the first one if there is none."""
        current = self.current_generation()
        if current is not None:
            return current
        self.redis.set(self.pointer_key, new_generation_id(), nx=True)
        current = self.current_generation()
        assert current is not None
        return current

    def swap(self, generation: str) -> str | None:
        """Make ``generation`` current (one SET); returns the generation it replaced."""
        old = self.redis.set(self.pointer_key, generation, get=True)
        return _text(old) if old is not None else None

    def retire(self, generation: str, ttl_seconds: int = 7 * 86400) -> None:
        """Mark a swapped-out generation so no projector writes to it any more."""
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.set(self.retired_key(generation, p), "1", ex=ttl_seconds)
        pipe.execute()

    def drop(self, generation: str, grace_seconds: int = 60) -> int:
        """Expire (or, with no grace, delete) a generation's keys; returns how many.

        The grace lets reads that started before the swap finish on the old models.
        """
        count = 0
        pipe = self.redis.pipeline(transaction=False)
        for key in self.redis.scan_iter(match=self.generation_pattern(generation), count=1000):
            if grace_seconds > 0:
                pipe.expire(key, grace_seconds)
            else:
                pipe.unlink(key)
            count += 1
            if len(pipe) >= 500:
                pipe.execute()
        pipe.execute()
        return count

    # Checkpoints --------------------------------------------------------------

    def checkpoint(self, generation: str, partition: int) -> Checkpoint:
        position, applied = self.redis.hmget(
            self.checkpoint_key(generation, partition), ["position", "applied"]
        )
        return Checkpoint(
            partition,
            _text(position) if position is not None else None,
            int(applied) if applied is not None else 0,
        )

    def as_of(self, generation: str | None = None) -> AsOf:
        """Every partition's checkpoint and log length (one round trip)."""
        if generation is None:
            generation = self.current_generation()
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            if generation is not None:
                pipe.hmget(self.checkpoint_key(generation, p), ["position", "applied"])
            pipe.xlen(self.store.log_key(p))
            pipe.get(removed_key(self.store, p))  # entries moved to the archive count too
        replies = pipe.execute()
        checkpoints = []
        lengths = []
        step = 3 if generation is not None else 2
        for p in range(self.partitions):
            if generation is not None:
                position, applied = replies[step * p]
                checkpoints.append(
                    Checkpoint(
                        p,
                        _text(position) if position is not None else None,
                        int(applied) if applied is not None else 0,
                    )
                )
            else:
                checkpoints.append(Checkpoint(p, None, 0))
            lengths.append(
                int(replies[step * p + step - 2]) + int(replies[step * p + step - 1] or 0)
            )
        return AsOf(generation, tuple(checkpoints), tuple(lengths))

    # The atomic apply step ----------------------------------------------------

    def boards(self, generation: str, game_ids: Sequence[str]) -> dict[str, Scoreboard | None]:
        """The stored scoreboards of ``game_ids`` (None where there is none yet), one MGET."""
        keys = [self.game_key(generation, g) for g in game_ids]
        return {
            game_id: Scoreboard.from_dict(json.loads(raw)) if raw is not None else None
            for game_id, raw in zip(game_ids, self.redis.mget(keys), strict=True)
        }

    def write_batch(
        self,
        generation: str,
        partition: int,
        after: str | None,
        position: str,
        applied: int,
        batch: Batch,
    ) -> tuple[str, str | None]:
        """Write a folded run of ``applied`` entries of ``partition`` that follow position
        ``after`` (``projections.batch.fold_batch``), moving the checkpoint to ``position``.

        Returns ``(APPLIED, None)``, ``(STALE, current position)`` (nothing written: the
        checkpoint is not at ``after`` any more) or ``(RETIRED, None)`` (nothing written).
        """
        for game_id in batch.boards:
            if self.store.partition_of(game_id) != partition:
                raise ValueError(f"game {game_id!r} is not in partition {partition}")
        keys = [
            self.checkpoint_key(generation, partition),
            self.retired_key(generation, partition),
            self.stats_key(generation, partition),
            self.rated_key(generation, partition),
            *(self.game_key(generation, g) for g in batch.boards),
            *(self.recent_key(generation, partition, name) for name, _ in batch.listings),
        ]
        argument = {
            "after": after or "",
            "position": position,
            "applied": applied,
            "docs": [
                json.dumps(board.to_dict(), separators=(",", ":"), ensure_ascii=False)
                for board in batch.boards.values()
            ],
            "counters": [[op, field, str(value)] for op, field, value in batch.counters],
            "recent": [[str(score), game_id] for (_, game_id), score in batch.listings.items()],
            "rated": [[str(game.finished_us), game.to_json()] for game in batch.rated],
        }
        args = [json.dumps(argument, separators=(",", ":"), ensure_ascii=False)]
        reply = self._apply_script(keys=keys, args=args)
        status = _text(reply[0])
        if status == STALE:
            return STALE, _text(reply[1]) or None
        if status not in (APPLIED, RETIRED):
            raise RuntimeError(f"unexpected reply from the apply script: {reply!r}")
        return status, None

    # Reads ----------------------------------------------------------------------

    def scoreboard(self, game_id: str, generation: str | None = None) -> Scoreboard | None:
        generation = generation or self.current_generation()
        if generation is None:
            return None
        raw = self.redis.get(self.game_key(generation, game_id))
        return Scoreboard.from_dict(json.loads(raw)) if raw is not None else None

    def players(self, as_of: AsOf) -> dict[str, PlayerStats]:
        """Every player's statistics, summed over the partitions (cached per checkpoint vector)."""
        if as_of.generation is None:
            return {}
        key = (as_of.generation, tuple(c.position for c in as_of.checkpoints))
        with self._cache_lock:
            cached = self._players_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.hgetall(self.stats_key(as_of.generation, p))
        parts: list[PlayerStats] = []
        for raw in pipe.execute():
            per_name: dict[str, dict[str, int]] = defaultdict(dict)
            for field, value in raw.items():
                counter, _, name = _text(field).partition(":")
                per_name[name][counter] = int(value)
            parts += [PlayerStats(name, counters) for name, counters in per_name.items()]
        players = merge_stats(parts)
        with self._cache_lock:
            self._players_cache = (key, players)
        return players

    def ratings(self, as_of: AsOf) -> dict[str, PlayerRating]:
        """Every rated player's rating by player id.

        Rated games are only ever added to a generation, so the number recorded per partition
        says whether anything changed (one ZCARD each); new games that all finished after the
        last one folded are folded onto the cached ratings, anything else refolds them all.
        Either way the result is the fold of every rated game in order.
        """
        generation = as_of.generation
        if generation is None:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.zcard(self.rated_key(generation, p))
        pipe.hgetall(cleared_key(self.prefix))
        *replies, raw_cleared = pipe.execute()
        counts = tuple(int(n) for n in replies)
        cleared = read_cleared(raw_cleared)
        with self._cache_lock:
            cached = self._ratings_cache
        if cached is not None and (cached.generation, cached.cleared) != (generation, cleared):
            cached = None  # another generation, or an operator cleared someone: fold it all
        if cached is not None and cached.counts == counts:
            return cached.ratings
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.zrange(self.rated_key(generation, p), 0, -1, withscores=True)
        replies = pipe.execute()
        games = [
            RatedGame.from_json(_text(member), int(score))
            for reply in replies
            for member, score in reply
        ]
        counts = tuple(len(reply) for reply in replies)
        new = games
        start: dict[str, PlayerRating] | None = None
        if cached is not None:
            new = [g for g in games if g.game_id not in cached.game_ids]
            if all(g.order > cached.last for g in new):
                start = cached.ratings
            else:
                new = games
        ratings = fold(new, start, cleared)
        last = max((g.order for g in games), default=(0, ""))
        found = _RatingsCache(
            generation, counts, {g.game_id for g in games}, last, ratings, cleared
        )
        with self._cache_lock:
            self._ratings_cache = found
        return ratings

    def player(self, name: str, generation: str) -> PlayerStats | None:
        pipe = self.redis.pipeline(transaction=False)
        fields = [f"{counter}:{name}" for counter in COUNTERS]
        for p in range(self.partitions):
            pipe.hmget(self.stats_key(generation, p), fields)
        parts = [
            {c: int(v) for c, v in zip(COUNTERS, values, strict=True) if v is not None}
            for values in pipe.execute()
        ]
        counters = merge_counters(parts)  # the one merge: players() merges with it too
        return PlayerStats(name, counters) if counters else None

    def recent_games(self, name: str, generation: str, limit: int = 10) -> list[RecentGame]:
        """The player's most recently started games, newest first, with their scoreboards."""
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.zrevrange(self.recent_key(generation, p, name), 0, limit - 1, withscores=True)
        rows: list[tuple[float, str]] = []
        for reply in pipe.execute():
            rows += [(score, _text(member)) for member, score in reply]
        rows.sort(key=lambda r: (-r[0], r[1]))
        game_ids = [game_id for _, game_id in rows[:limit]]
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.get(self.game_key(generation, game_id))
        out = []
        for game_id, raw in zip(game_ids, pipe.execute(), strict=True):
            board = Scoreboard.from_dict(json.loads(raw)) if raw is not None else None
            out.append(RecentGame(game_id, board))
        return out

    def dump(self, generation: str) -> dict[str, Any]:
        """Every read-model value of a generation, keyed without the generation (for tests
        and ops: two generations built from the same log dump equal)."""
        out: dict[str, Any] = {}
        pattern = self.generation_pattern(generation)
        marker = f":proj:{generation}:"
        for key in sorted(_text(k) for k in self.redis.scan_iter(match=pattern, count=1000)):
            kind = _text(self.redis.type(key))
            name = key.replace(marker, ":proj:*:")
            if kind == "string":
                out[name] = json.loads(self.redis.get(key))
            elif kind == "hash":
                out[name] = {_text(k): _text(v) for k, v in self.redis.hgetall(key).items()}
            elif kind == "zset":
                out[name] = [
                    (_text(m), s) for m, s in self.redis.zrange(key, 0, -1, withscores=True)
                ]
            else:  # pragma: no cover - nothing else is written
                out[name] = kind
        return out
