"""The games due for bot moves: one Redis sorted set, shared by every process of a deployment.

Key layout::

    <prefix>:bots:due   sorted set of game ids, score = the Redis server's time (ms) from which
                        the game may be taken: when it was handed over, or when the lease of
                        the runner that took it ends

A request that leaves a game on a bot's turn hands it over (``hand_over``: ZADD NX, so a lease in
progress is left alone). A runner ``take``s the game due longest: one Lua script moves its score
to ``now + lease`` (the lease), so no other runner takes it until the lease ends; a runner that
dies holding it simply lets the lease run out, and the game is due again. After a turn of moves
the runner either puts the game back at the end of the queue (``requeue``, bots still to play)
or removes it (``done``). Time is always the Redis server's (``TIME``), so the clocks of the
hosts running the service do not matter. One key: on a Redis Cluster it lives in one slot.

Removal races with a hand-over (a human moved while the runner finished): the runner removes the
game, then looks at the game again and hands it over once more if a bot must act. A hand-over
happens after its append, so one of the two always sees the other's work.
"""

from __future__ import annotations

from typing import Any

_NOW_MS = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) "

# KEYS[1] due set; ARGV[1] game id, ARGV[2] delay (ms). Due after the delay (0: now), unless
# already queued (a lease is left alone).
_HAND_OVER_LUA = (
    _NOW_MS + "return redis.call('ZADD', KEYS[1], 'NX', now + tonumber(ARGV[2]), ARGV[1])"
)

# KEYS[1] due set; ARGV[1] lease (ms). The game due longest, leased until now + lease, or nil.
_TAKE_LUA = (
    _NOW_MS
    + """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1)
if #due == 0 then return false end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), due[1])
return due[1]
"""
)

# KEYS[1] due set; ARGV[1] game id, ARGV[2] delay (ms). Due again after the delay, at the end
# of the queue (if still queued).
_REQUEUE_LUA = (
    _NOW_MS + "return redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])"
)

# KEYS[1] due set. Milliseconds until the first game is due (0: due now), or nil if none is queued.
_NEXT_DUE_LUA = (
    _NOW_MS
    + """
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 0 then return false end
return math.max(0, tonumber(first[2]) - now)
"""
)


class BotQueue:
    """Games due for bot moves, with a lease per game (see the module docstring)."""

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.key = f"{prefix}:bots:due"
        self._hand_over = redis.register_script(_HAND_OVER_LUA)
        self._take = redis.register_script(_TAKE_LUA)
        self._requeue = redis.register_script(_REQUEUE_LUA)
        self._next_due = redis.register_script(_NEXT_DUE_LUA)

    def hand_over(self, game_id: str, delay_ms: int = 0) -> None:
        """Due ``delay_ms`` from now (0: at once), unless already queued."""
        self._hand_over(keys=[self.key], args=[game_id, max(0, int(delay_ms))])

    def take(self, lease_ms: int) -> str | None:
        """The game due longest, leased to the caller for ``lease_ms``; None if none is due."""
        taken = self._take(keys=[self.key], args=[lease_ms])
        if taken is None:
            return None
        return taken.decode() if isinstance(taken, bytes) else str(taken)

    def requeue(self, game_id: str, delay_ms: int = 0) -> None:
        """Due again ``delay_ms`` from now (0: at once), behind the games due before then."""
        self._requeue(keys=[self.key], args=[game_id, max(0, int(delay_ms))])

    def next_due_ms(self) -> int | None:
        """Milliseconds until the first game is due (a requeued game's delay, a lease's end; 0:
        due now), or None if the queue is empty."""
        due = self._next_due(keys=[self.key])
        return None if due is None else int(due)

    def done(self, game_id: str) -> None:
        self.redis.zrem(self.key, game_id)

    def queued(self) -> int:
        return int(self.redis.zcard(self.key))
