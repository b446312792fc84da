"""Seeks: registered players waiting to be paired into a game (issue 20), kept in Redis.

One pool per kind of table (players, rules preset, time control). Key layout; ``{m:<pool>}`` is a
Redis Cluster hash tag, so a pool's keys all live in one slot and a claim is one script::

    <prefix>:seek-pools                  set of the pools ever used (the sweep's list)
    <prefix>:{m:<pool>}:waiting          sorted set of the pool's waiting seek ids, score = when
                                         posted (ms since the epoch)
    <prefix>:{m:<pool>}:open             the waiting seeks without a rating range, score = rating
    <prefix>:{m:<pool>}:ranged           the waiting seeks with one, score = rating
    <prefix>:{m:<pool>}:due              the waiting seeks to fill with bots, score = when (ms)
    <prefix>:{m:<pool>}:seek:<id>        hash: the seek (see ``Seek``), kept a day after it ends
    <prefix>:{m:<pool>}:of:<player id>   string: the player's waiting seek in this pool
    <prefix>:{sa:<address>}:seeks        sorted set: the waiting seeks posted from a client
                                         address (its rate-limit key), score = expiry (ms)

A seek leaves ``waiting`` (and its indexes) exactly once, by one script that checks it is still
there: a claim (paired into a game, or given bots), an expiry or a cancel. So two workers
pairing the same seekers at once seat each seeker once: the second claim finds a seek gone and
changes nothing.

Pairing never reads a pool from its oldest end (issue 32: 200 seeks nobody could accept sat
there and blocked everyone behind them): the candidates for a seek are read from the rating
indexes, at most ``CANDIDATES`` of each, so a look costs the same whatever the pool holds.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

KEEP_SECONDS = 24 * 60 * 60  # an ended seek's record, for its status
POOL = re.compile(r"^([3-6])-([a-z_]{1,20})-([a-z_]{1,20})$")
SEEK_ID = re.compile(r"^sk_([3-6]-[a-z_]{1,20}-[a-z_]{1,20})_([0-9a-f]{20})$")

# Ends a group of seeks at once (matched into a game, expired or cancelled). All or nothing: 0
# if any seek has left ``waiting`` already, else 1 and every one has ended.
_END_LUA = """
-- KEYS: 1-4 the pool's indexes a waiting seek is in (waiting, open, ranged, due), then for
-- each seek its hash and its player's pointer.
local indexes = {KEYS[1], KEYS[2], KEYS[3], KEYS[4]}
local waiting = KEYS[1]
local seeks = {}
for k = 5, #KEYS, 2 do seeks[#seeks + 1] = {hash = KEYS[k], pointer = KEYS[k + 1]} end
-- ARGV[1], the ending (SeekStore.end): {state, claim, game_id, seats (one per seek, '' for
-- none), keep (seconds an ended seek's record is kept)}
local ending = cjson.decode(ARGV[1])

for _, seek in ipairs(seeks) do
  seek.id = redis.call('HGET', seek.hash, 'id')
  if not seek.id or not redis.call('ZSCORE', waiting, seek.id) then return 0 end
end
for i, seek in ipairs(seeks) do
  for _, index in ipairs(indexes) do redis.call('ZREM', index, seek.id) end
  redis.call('HSET', seek.hash, 'state', ending.state, 'claim', ending.claim,
             'game', ending.game_id, 'seat', ending.seats[i])
  redis.call('EXPIRE', seek.hash, string.format('%d', ending.keep))
  if redis.call('GET', seek.pointer) == seek.id then redis.call('DEL', seek.pointer) end
end
return 1
"""

# Stores a waiting seek: 0 (nothing written) if its player already waits in the pool.
_ADD_LUA = """
local waiting = KEYS[1]  -- the pool's waiting seeks, by when they were posted
local seek = KEYS[2]     -- the seek's hash
local pointer = KEYS[3]  -- its player's pointer to it
local rated = KEYS[4]    -- its rating index (open or ranged)
local due = KEYS[5]      -- the seeks whose tables bots fill, by when
-- ARGV[1], the seek (SeekStore.add): {id, posted (score), ttl, rating, due (absent: never),
-- fields (its hash)}
local add = cjson.decode(ARGV[1])

if redis.call('EXISTS', pointer) == 1 then return 0 end
for name, value in pairs(add.fields) do redis.call('HSET', seek, name, value) end
redis.call('EXPIRE', seek, string.format('%d', add.ttl))
redis.call('SET', pointer, add.id, 'EX', string.format('%d', add.ttl))
redis.call('ZADD', waiting, add.posted, add.id)
redis.call('ZADD', rated, add.rating, add.id)
if add.due then redis.call('ZADD', due, add.due, add.id) end
return 1
"""

CANDIDATES = 32  # seeks read per index for one look at a seek's table
SWEEP_ANCHORS = 16  # seeks a sweep looks for a table around, per pool
SWEEP_BUDGET = 64  # seeks a sweep expires or fills, per pool


# Where a pairing reads the ranged seeks from: a generator of its own, so that the sweeps and
# pairings in background threads never move the process's global ``random`` (its users' state:
# a test framework drawing examples from it beside them, say).
_PLACES = random.Random()


@dataclass(frozen=True, slots=True)
class Seek:
    id: str
    pool: str
    player_id: str
    name: str
    rating: float  # the player's conservative rating when it posted (0 unrated)
    low: float | None  # the opponents' ratings it accepts (None: any)
    high: float | None
    fill_after: float | None  # seconds after which bots fill the table (None: never)
    posted: float  # seconds since the epoch
    expires: float
    state: str = "waiting"  # waiting, matched, expired, cancelled
    game_id: str | None = None
    seat: int | None = None
    claim: str | None = None
    address: str = ""  # the client address's key it was posted from (the per-address bound)

    @property
    def ranged(self) -> bool:
        return self.low is not None or self.high is not None

    def to_hash(self) -> dict[str, str]:
        return {
            "id": self.id,
            "pool": self.pool,
            "player_id": self.player_id,
            "name": self.name,
            "rating": repr(self.rating),
            "low": "" if self.low is None else repr(self.low),
            "high": "" if self.high is None else repr(self.high),
            "fill_after": "" if self.fill_after is None else repr(self.fill_after),
            "posted": repr(self.posted),
            "expires": repr(self.expires),
            "state": self.state,
            "address": self.address,
        }

    @classmethod
    def from_hash(cls, raw: dict[Any, Any]) -> Seek:
        h = {_text(k): _text(v) for k, v in raw.items()}

        def number(name: str) -> float | None:
            return float(h[name]) if h.get(name) else None

        return cls(
            id=h["id"],
            pool=h["pool"],
            player_id=h["player_id"],
            name=h["name"],
            rating=float(h["rating"]),
            low=number("low"),
            high=number("high"),
            fill_after=number("fill_after"),
            posted=float(h["posted"]),
            expires=float(h["expires"]),
            state=h.get("state", "waiting"),
            game_id=h.get("game") or None,
            seat=int(h["seat"]) if h.get("seat") else None,
            claim=h.get("claim") or None,
            address=h.get("address", ""),
        )


class SeekStore:
    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._add = redis.register_script(_ADD_LUA)
        self._end = redis.register_script(_END_LUA)

    # Keys -------------------------------------------------------------------------------------

    def _tag(self, pool: str) -> str:
        if not POOL.match(pool):
            raise ValueError(f"not a pool: {pool!r}")
        return f"{self.prefix}:{{m:{pool}}}"

    def waiting_key(self, pool: str) -> str:
        return f"{self._tag(pool)}:waiting"

    def index_keys(self, pool: str) -> list[str]:
        """waiting, open, ranged, due: every set a waiting seek is in (the end script's)."""
        tag = self._tag(pool)
        return [f"{tag}:waiting", f"{tag}:open", f"{tag}:ranged", f"{tag}:due"]

    def address_key(self, address: str) -> str:
        return f"{self.prefix}:{{sa:{address}}}:seeks"

    def seek_key(self, pool: str, seek_id: str) -> str:
        return f"{self._tag(pool)}:seek:{seek_id}"

    def player_key(self, pool: str, player_id: str) -> str:
        return f"{self._tag(pool)}:of:{player_id}"

    @property
    def pools_key(self) -> str:
        return f"{self.prefix}:seek-pools"

    # Writes -----------------------------------------------------------------------------------

    def add(self, seek: Seek, ttl_seconds: int) -> bool:
        """Store a waiting seek; False (nothing stored) if its player already waits in the pool."""
        waiting, open_, ranged, due = self.index_keys(seek.pool)
        add: dict[str, Any] = {
            "id": seek.id,
            "posted": str(int(seek.posted * 1000)),
            "ttl": ttl_seconds + KEEP_SECONDS,
            "rating": repr(seek.rating),
            "fields": seek.to_hash(),
        }
        if seek.fill_after is not None:
            add["due"] = str(int((seek.posted + seek.fill_after) * 1000))
        added = self._add(
            keys=[
                waiting,
                self.seek_key(seek.pool, seek.id),
                self.player_key(seek.pool, seek.player_id),
                ranged if seek.ranged else open_,
                due,
            ],
            args=[json.dumps(add, ensure_ascii=False)],
        )
        if added:
            self.redis.sadd(self.pools_key, seek.pool)
            if seek.address:
                key = self.address_key(seek.address)
                self.redis.zadd(key, {seek.id: int(seek.expires * 1000)})
                self.redis.expire(key, ttl_seconds + 60)
        return bool(added)

    def from_address(self, address: str, now: float) -> int:
        """How many seeks posted from ``address`` still wait (those ended are forgotten)."""
        key = self.address_key(address)
        self.redis.zremrangebyscore(key, "-inf", int(now * 1000))
        return int(self.redis.zcard(key))

    def end(
        self,
        pool: str,
        seeks: Iterable[Seek],
        state: str,
        *,
        claim: str = "",
        game_id: str = "",
        seats: Iterable[int | None] | None = None,
    ) -> bool:
        """End every one of ``seeks`` at once (matched into ``game_id`` at ``seats``, expired or
        cancelled) if every one is still waiting; False, changing nothing, otherwise."""
        seeks = list(seeks)
        keys = self.index_keys(pool)
        for seek in seeks:
            keys += [self.seek_key(pool, seek.id), self.player_key(pool, seek.player_id)]
        places = list(seats) if seats is not None else [None] * len(seeks)
        ending = {
            "state": state,
            "claim": claim,
            "game_id": game_id,
            "seats": ["" if s is None else str(s) for s in places],
            "keep": KEEP_SECONDS,
        }
        ended = bool(self._end(keys=keys, args=[json.dumps(ending, ensure_ascii=False)]))
        if ended:  # a crash here leaves an entry that its expiry (its score) forgets
            for seek in seeks:
                if seek.address:
                    self.redis.zrem(self.address_key(seek.address), seek.id)
        return ended

    def claim_key(self, pool: str, claim: str) -> str:
        return f"{self._tag(pool)}:claim:{claim}"

    def save_claim(
        self, pool: str, claim: str, game_id: str, seats: list[Any], ttl_seconds: int
    ) -> None:
        """What a claim seats where (per seat: ``[player id, name]`` or a bot's name), kept
        until it is surely carried out: a crash after the claim is finished from it."""
        body = json.dumps({"game_id": game_id, "seats": seats})
        self.redis.set(self.claim_key(pool, claim), body, ex=ttl_seconds + KEEP_SECONDS)

    def claim(self, pool: str, claim: str) -> tuple[str, list[Any]] | None:
        raw = self.redis.get(self.claim_key(pool, claim))
        if raw is None:
            return None
        body = json.loads(raw)
        return body["game_id"], body["seats"]

    # Reads ------------------------------------------------------------------------------------

    def get(self, seek_id: str) -> Seek | None:
        match = SEEK_ID.match(seek_id or "")
        if match is None:
            return None
        raw = self.redis.hgetall(self.seek_key(match.group(1), seek_id))
        return Seek.from_hash(raw) if raw else None

    def waiting(self, pool: str, limit: int = 200) -> list[Seek]:
        """The pool's waiting seeks, oldest first (at most ``limit``): for a look at a pool,
        never for pairing (see ``candidates``)."""
        ids = self.redis.zrange(self.waiting_key(pool), 0, limit - 1)
        return self._read(pool, ids)

    def candidates(self, anchor: Seek, limit: int = CANDIDATES) -> list[Seek]:
        """Waiting seeks whose rating ``anchor`` accepts, at most ``limit`` of each index: the
        seeks without a range first (each accepts anyone, so any of them fits), then those
        with one, from a random place among those in range, so no seeks a pool holds stand
        in front of the rest for good."""
        _, open_, ranged, _ = self.index_keys(anchor.pool)
        low = "-inf" if anchor.low is None else repr(anchor.low)
        high = "+inf" if anchor.high is None else repr(anchor.high)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrangebyscore(open_, low, high, start=0, num=limit + 1)
        pipe.zcount(ranged, low, high)
        open_ids, in_range = pipe.execute()
        start = _PLACES.randrange(max(1, in_range - limit))
        ranged_ids = self.redis.zrangebyscore(ranged, low, high, start=start, num=limit + 1)
        found = self._read(anchor.pool, [*open_ids, *ranged_ids])
        # The seeks without a range first (any of them fits), then the oldest first.
        return sorted((s for s in found if s.id != anchor.id), key=lambda s: (s.ranged, s.posted))

    def anchors(self, pool: str, count: int = SWEEP_ANCHORS) -> list[Seek]:
        """Up to ``count`` waiting seeks drawn at random: a sweep's looks at a pool."""
        return self._read(pool, self.redis.zrandmember(self.waiting_key(pool), count) or [])

    def expired(self, pool: str, now: float, ttl_seconds: int) -> list[Seek]:
        """Waiting seeks posted ``ttl_seconds`` or more before ``now``, the oldest first, at
        most ``SWEEP_BUDGET``; an id whose record is gone leaves the index here."""
        before = int((now - ttl_seconds) * 1000)
        return self._due(self.waiting_key(pool), pool, before)

    def due(self, pool: str, now: float) -> list[Seek]:
        """Waiting seeks whose time to be filled with bots has come (at most SWEEP_BUDGET)."""
        return self._due(self.index_keys(pool)[3], pool, int(now * 1000))

    def _due(self, key: str, pool: str, before: int) -> list[Seek]:
        ids = self.redis.zrangebyscore(key, "-inf", before, start=0, num=SWEEP_BUDGET)
        found = self._read(pool, ids)
        gone = {_text(i) for i in ids} - {s.id for s in found}
        if gone:  # a record expired while its id waited (an old crash): nothing to end
            for index in self.index_keys(pool):
                self.redis.zrem(index, *gone)
        return found

    def _read(self, pool: str, ids: Iterable[Any]) -> list[Seek]:
        pipe = self.redis.pipeline(transaction=False)
        for seek_id in ids:
            pipe.hgetall(self.seek_key(pool, _text(seek_id)))
        return [Seek.from_hash(raw) for raw in pipe.execute() if raw]

    def of_player(self, player_id: str) -> list[Seek]:
        """The player's waiting seeks (one a pool at most), oldest first: a pointer whose seek
        is gone or over is skipped."""
        pools = self.pools()
        pipe = self.redis.pipeline(transaction=False)
        for pool in pools:
            pipe.get(self.player_key(pool, player_id))
        ids = pipe.execute()
        pointers = [(pool, _text(i)) for pool, i in zip(pools, ids, strict=True) if i is not None]
        pipe = self.redis.pipeline(transaction=False)  # two round trips, however many pools
        for pool, seek_id in pointers:
            pipe.hgetall(self.seek_key(pool, seek_id))
        seeks = [Seek.from_hash(raw) for raw in pipe.execute() if raw]
        found = [s for s in seeks if s.player_id == player_id and s.state == "waiting"]
        return sorted(found, key=lambda seek: seek.posted)

    def pools(self) -> list[str]:
        return sorted(_text(p) for p in self.redis.smembers(self.pools_key))


def pool_of(players: int, preset: str, time_control: str) -> str:
    return f"{players}-{preset}-{time_control}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
