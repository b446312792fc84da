"""The games of bots only in play: one Redis sorted set, the index the total cap counts.

Key layout::

    <prefix>:bots:playing   sorted set of game ids, score = the Redis server's time (ms) when
                            the game became one of bots only: each a game whose seats are all
                            bots, from its creation (or the hand-over that made its last person's
                            seat a bot's: issue 42) until it ends or a person takes a seat back

A game of bots only costs the server a whole game of moves and a whole log with nobody to
watch it (issue 33: one such game wrote 105,765 events in a minute), so a deployment has a cap
on how many are played at once (``Settings.max_bot_games``). ``claim`` counts and adds in one
Lua script, so concurrent creates never pass the cap together; ``release`` removes a game when
it ends (or when its create was not appended). Counting is ZCARD: one key, never a scan of the
games. One key: on a Redis Cluster it lives in one slot.

Retention: an entry lives while its game is played. A process that dies between a game's end
and its ``release`` (or between a claim and its create's append) leaves an entry behind; each
``claim`` first drops the entries older than ``lifetime_ms`` (a game of bots only lasts at most
``domain.rules.MAX_HAND_LIMIT`` hands, minutes), so none stays for good and the set holds at
most the cap's worth of games.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

_NOW_MS = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) "

# Counts a game among those in play unless the cap is reached: {1, count} if claimed (count with
# it), {0, count, ms until the oldest entry's lifetime ends} if not.
_CLAIM_LUA = (
    _NOW_MS
    + r"""
local playing = KEYS[1]  -- the games of bots only in play, by when claimed

-- ARGV[1] (BotGames.claim): {game_id, cap, lifetime_ms, force}
local claim = cjson.decode(ARGV[1])

-- Entries a process left behind (it died before its release) drop out after their lifetime.
redis.call('ZREMRANGEBYSCORE', playing, '-inf', now - claim.lifetime_ms)
if redis.call('ZSCORE', playing, claim.game_id) then
  return {1, redis.call('ZCARD', playing)}
end
local count = redis.call('ZCARD', playing)
if count >= claim.cap and not claim.force then
  local oldest = redis.call('ZRANGE', playing, 0, 0, 'WITHSCORES')
  return {0, count, math.max(0, tonumber(oldest[2]) + claim.lifetime_ms - now)}
end
redis.call('ZADD', playing, now, claim.game_id)
return {1, count + 1}
"""
)


class Claim(NamedTuple):
    claimed: bool
    count: int  # the games of bots only in play (with this one, if claimed)
    wait_ms: int = 0  # refused: until the oldest entry drops out at the latest


class BotGames:
    """The games of bots only in play (see the module docstring)."""

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.key = f"{prefix}:bots:playing"
        self._claim = redis.register_script(_CLAIM_LUA)

    def claim(self, game_id: str, cap: int, lifetime_ms: int, *, force: bool = False) -> Claim:
        """Count ``game_id`` among the games in play unless ``cap`` are already (``force``:
        count it anyway: a change nobody asked for, such as a turn clock's time-out)."""
        claim = {"game_id": game_id, "cap": cap, "lifetime_ms": lifetime_ms, "force": force}
        reply = self._claim(keys=[self.key], args=[json.dumps(claim, ensure_ascii=False)])
        if int(reply[0]):
            return Claim(True, int(reply[1]))
        return Claim(False, int(reply[1]), int(reply[2]))

    def release(self, game_id: str) -> None:
        """The game ended (or was never created): it no longer counts."""
        self.redis.zrem(self.key, game_id)

    def count(self) -> int:
        return int(self.redis.zcard(self.key))
