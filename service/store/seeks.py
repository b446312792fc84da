"""Seeks: registered players waiting to be paired into a game (issue 20), kept in Redis.

One pool per kind of table (players, rules preset, time control). Key layout; ``{m:<pool>}`` is a
Redis Cluster hash tag, so a pool's keys all live in one slot and a claim is one script::

    <prefix>:seek-pools                  set of the pools ever used (the sweep's list)
    <prefix>:{m:<pool>}:waiting          sorted set of the pool's waiting seek ids, score = when
                                         posted (ms since the epoch)
    <prefix>:{m:<pool>}:seek:<id>        hash: the seek (see ``Seek``), kept a day after it ends
    <prefix>:{m:<pool>}:of:<player id>   string: the player's waiting seek in this pool

A seek leaves ``waiting`` exactly once, by one script that checks it is still there: a claim
(paired into a game, or given bots), an expiry or a cancel. So two workers pairing the same
seekers at once seat each seeker once: the second claim finds a seek gone and changes nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

KEEP_SECONDS = 24 * 60 * 60  # an ended seek's record, for its status
POOL = re.compile(r"^([3-6])-([a-z_]{1,20})-([a-z_]{1,20})$")
SEEK_ID = re.compile(r"^sk_([3-6]-[a-z_]{1,20}-[a-z_]{1,20})_([0-9a-f]{20})$")

# KEYS: 1 waiting, then per seek its hash and its player's pointer.
# ARGV: 1 new state, 2 claim id, 3 game id, then per seek its seat (or '' for none).
# All or nothing: 0 if any seek has left ``waiting`` already, else 1 and every one has ended.
_END_LUA = """
local n = (#KEYS - 1) / 2
for i = 1, n do
  local id = redis.call('HGET', KEYS[2 * i], 'id')
  if not id or not redis.call('ZSCORE', KEYS[1], id) then return 0 end
end
for i = 1, n do
  local seek = KEYS[2 * i]
  local id = redis.call('HGET', seek, 'id')
  redis.call('ZREM', KEYS[1], id)
  redis.call('HSET', seek, 'state', ARGV[1], 'claim', ARGV[2], 'game', ARGV[3],
             'seat', ARGV[3 + i])
  redis.call('EXPIRE', seek, tonumber(ARGV[3 + n + 1]))
  if redis.call('GET', KEYS[2 * i + 1]) == id then redis.call('DEL', KEYS[2 * i + 1]) end
end
return 1
"""

# KEYS: 1 waiting, 2 the seek's hash, 3 the player's pointer. ARGV: 1 id, 2 score, 3 ttl,
# then the hash's fields and values. 0 if the player already waits in this pool.
_ADD_LUA = """
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]))
redis.call('SET', KEYS[3], ARGV[1], 'EX', tonumber(ARGV[3]))
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""


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
        fields = [x for pair in seek.to_hash().items() for x in pair]
        added = self._add(
            keys=[
                self.waiting_key(seek.pool),
                self.seek_key(seek.pool, seek.id),
                self.player_key(seek.pool, seek.player_id),
            ],
            args=[seek.id, int(seek.posted * 1000), ttl_seconds + KEEP_SECONDS, *fields],
        )
        if added:
            self.redis.sadd(self.pools_key, seek.pool)
        return bool(added)

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
        keys = [self.waiting_key(pool)]
        for seek in seeks:
            keys += [self.seek_key(pool, seek.id), self.player_key(pool, seek.player_id)]
        places = list(seats) if seats is not None else [None] * len(seeks)
        args = [state, claim, game_id, *["" if s is None else s for s in places], KEEP_SECONDS]
        return bool(self._end(keys=keys, args=args))

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
        """The pool's waiting seeks, oldest first (at most ``limit``)."""
        ids = [_text(i) for i in self.redis.zrange(self.waiting_key(pool), 0, limit - 1)]
        pipe = self.redis.pipeline(transaction=False)
        for seek_id in ids:
            pipe.hgetall(self.seek_key(pool, seek_id))
        return [Seek.from_hash(raw) for raw in pipe.execute() if raw]

    def pools(self) -> list[str]:
        return sorted(_text(p) for p in self.redis.smembers(self.pools_key))


def pool_of(players: int, preset: str, time_control: str) -> str:
    return f"{players}-{preset}-{time_control}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
