"""Challenges: one registered player's offer of a game to another, named (issue 44).

Key layout; ``{ch}`` is a Redis Cluster hash tag, so a challenge and both players' indexes live
in one slot and each change is one script (challenges are few: every one is counted against
its challenger's key by the rate limits and the cap on open ones)::

    <prefix>:{ch}:c:<id>          hash: the challenge (see ``Challenge``)
    <prefix>:{ch}:out:<player>    sorted set: the player's open challenges, score = expiry (ms)
    <prefix>:{ch}:all:<player>    sorted set: every challenge to or from the player still kept,
                                  score = when its record goes (ms)

Retention: a challenge's record goes ``KEEP_SECONDS`` after its expiry, answered or not (Redis
PEXPIRE, relative: the service's clock decides, not Redis's; long enough for both players to
read how it ended); its index entries are trimmed as they go by every write to the index, and
each index key itself expires with its newest entry (every entry lives as long).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

KEEP_SECONDS = 60 * 60  # an ended challenge's record, for both players to read its end
OPEN = "open"

# Stores a new open challenge: 0 (nothing written) if its challenger has ``cap`` open already.
_ADD_LUA = """
local record = KEYS[1]    -- the challenge's hash
local out = KEYS[2]       -- the challenger's open challenges
local mine = KEYS[3]      -- the challenger's index
local theirs = KEYS[4]    -- the challenged player's index
-- ARGV[1] (ChallengeStore.add): {id, now, expires, gone (ms), cap, fields}
local add = cjson.decode(ARGV[1])

redis.call('ZREMRANGEBYSCORE', out, '-inf', add.now)
if redis.call('ZCARD', out) >= add.cap then return 0 end
for name, value in pairs(add.fields) do redis.call('HSET', record, name, value) end
redis.call('PEXPIRE', record, add.gone - add.now)
redis.call('ZADD', out, add.expires, add.id)
redis.call('PEXPIRE', out, add.expires - add.now)
for _, index in ipairs({mine, theirs}) do
  redis.call('ZREMRANGEBYSCORE', index, '-inf', add.now)
  redis.call('ZADD', index, add.gone, add.id)
  redis.call('PEXPIRE', index, add.gone - add.now)
end
return 1
"""


# Ends an open challenge: "ok", or why not: "missing" (no such record), "expired", or the
# state it ended in already.
_END_LUA = """
local record = KEYS[1]  -- the challenge's hash
local out = KEYS[2]     -- its challenger's open challenges
-- ARGV[1] (ChallengeStore.end): {id, now (ms), fields: state and what goes with it}
local ending = cjson.decode(ARGV[1])

if redis.call('EXISTS', record) == 0 then return 'missing' end
local state = redis.call('HGET', record, 'state')
if state ~= 'open' then return state end
if tonumber(redis.call('HGET', record, 'expires_ms')) <= ending.now then return 'expired' end
for name, value in pairs(ending.fields) do redis.call('HSET', record, name, value) end
redis.call('ZREM', out, ending.id)
return 'ok'
"""


@dataclass(frozen=True, slots=True)
class Challenge:
    id: str
    challenger_id: str
    challenger: str  # names, as registered
    challenged_id: str
    challenged: str
    rules: dict[str, Any]
    seats: tuple[str | None, ...]  # per seat: a player id, or the bot's name
    created: float  # seconds since the epoch
    expires: float
    state: str = OPEN  # open, accepted, declined, cancelled (expired: open past ``expires``)
    game_id: str | None = None
    answered: float | None = None

    def state_at(self, now: float) -> str:
        return "expired" if self.state == OPEN and now >= self.expires else self.state

    def seat_of(self, player_id: str) -> int | None:
        return self.seats.index(player_id) if player_id in self.seats else None

    def to_hash(self) -> dict[str, str]:
        return {
            "id": self.id,
            "challenger_id": self.challenger_id,
            "challenger": self.challenger,
            "challenged_id": self.challenged_id,
            "challenged": self.challenged,
            "rules": json.dumps(self.rules, separators=(",", ":")),
            "seats": json.dumps(list(self.seats)),
            "created": repr(self.created),
            "expires": repr(self.expires),
            "expires_ms": str(int(self.expires * 1000)),
            "state": self.state,
        }

    @classmethod
    def from_hash(cls, raw: dict[Any, Any]) -> Challenge:
        h = {_text(k): _text(v) for k, v in raw.items()}
        return cls(
            id=h["id"],
            challenger_id=h["challenger_id"],
            challenger=h["challenger"],
            challenged_id=h["challenged_id"],
            challenged=h["challenged"],
            rules=json.loads(h["rules"]),
            seats=tuple(json.loads(h["seats"])),
            created=float(h["created"]),
            expires=float(h["expires"]),
            state=h.get("state", OPEN),
            game_id=h.get("game") or None,
            answered=float(h["answered"]) if h.get("answered") else None,
        )


class ChallengeStore:
    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._add = redis.register_script(_ADD_LUA)
        self._end = redis.register_script(_END_LUA)

    def record_key(self, challenge_id: str) -> str:
        return f"{self.prefix}:{{ch}}:c:{challenge_id}"

    def open_key(self, player_id: str) -> str:
        return f"{self.prefix}:{{ch}}:out:{player_id}"

    def index_key(self, player_id: str) -> str:
        return f"{self.prefix}:{{ch}}:all:{player_id}"

    def add(self, challenge: Challenge, cap: int, now: float) -> bool:
        """Store an open challenge; False (nothing stored) if its challenger has ``cap`` open."""
        expires = int(challenge.expires * 1000)
        add = {
            "id": challenge.id,
            "now": int(now * 1000),
            "expires": expires,
            "gone": expires + KEEP_SECONDS * 1000,
            "cap": cap,
            "fields": challenge.to_hash(),
        }
        keys = [
            self.record_key(challenge.id),
            self.open_key(challenge.challenger_id),
            self.index_key(challenge.challenger_id),
            self.index_key(challenge.challenged_id),
        ]
        return bool(self._add(keys=keys, args=[json.dumps(add)]))

    def end(self, challenge: Challenge, state: str, now: float, game_id: str | None = None) -> str:
        """Move an open challenge to ``state`` (at most once): "ok", else why not."""
        fields = {"state": state, "answered": repr(now)}
        if game_id is not None:
            fields["game"] = game_id
        ending = {"id": challenge.id, "now": int(now * 1000), "fields": fields}
        keys = [self.record_key(challenge.id), self.open_key(challenge.challenger_id)]
        return _text(self._end(keys=keys, args=[json.dumps(ending)]))

    def get(self, challenge_id: str) -> Challenge | None:
        raw = self.redis.hgetall(self.record_key(challenge_id))
        return Challenge.from_hash(raw) if raw else None

    def of_player(self, player_id: str, now: float, limit: int) -> list[Challenge]:
        """The player's challenges still kept (to and from it), newest first."""
        ids = self.redis.zrevrangebyscore(
            self.index_key(player_id), "+inf", int(now * 1000), start=0, num=limit
        )
        pipe = self.redis.pipeline(transaction=False)
        for challenge_id in ids:
            pipe.hgetall(self.record_key(_text(challenge_id)))
        found = [Challenge.from_hash(raw) for raw in pipe.execute() if raw]
        return sorted(found, key=lambda c: c.created, reverse=True)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
