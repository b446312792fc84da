"""A registered player's own stream of what concerns it across all its games (issue 20).

Key layout (``{pl:<player id>}`` a Redis Cluster hash tag)::

    <prefix>:{pl:<player id>}:events   stream, one entry per notice: fields ``type`` and
                                       ``data`` (JSON), capped near ``MAX_LENGTH`` entries
    <prefix>:{pl:<player id>}:wake     pub/sub channel (nothing stored): each append of
                                       notices publishes there, waking the player's open
                                       streams in every process (service/store/live.py
                                       ``PlayerHub``)

The entries are notices, not the truth: each names a game and its version, and the game's log
says what happened. A reader resumes after an entry id (SSE ``Last-Event-ID``); a notice lost
by a crash between a game's append and its notice is made good by the snapshot a reader gets
when it (re)connects (``service/app/player_feed.py``).
"""

from __future__ import annotations

import json
from typing import Any

from service.store.redis_server import is_cluster

MAX_LENGTH = 1000
# The largest stream id: nothing comes after it, and Redis refuses an exclusive range from it.
LAST_ID = f"{2**64 - 1}-{2**64 - 1}"


class PlayerEvents:
    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self.cluster = is_cluster(redis)

    def key(self, player_id: str) -> str:
        return f"{self.prefix}:{{pl:{player_id}}}:events"

    def wake_channel(self, player_id: str) -> str:
        return f"{self.prefix}:{{pl:{player_id}}}:wake"

    def wake(self, player_id: str) -> None:
        """Wake the player's open streams (e.g. its key changed: they look at it again)."""
        self.redis.publish(self.wake_channel(player_id), "1")

    def add(self, notices: list[tuple[str, str, dict[str, Any]]]) -> None:
        """Append ``(player id, type, data)`` notices, each to its player's stream, and wake
        the players' open streams (one PUBLISH per player, after its notices)."""
        if not notices:
            return
        pipe = self.redis.pipeline(transaction=False)
        woken: dict[str, None] = {}
        for player_id, kind, data in notices:
            fields = {"type": kind, "data": json.dumps(data, separators=(",", ":"))}
            pipe.xadd(self.key(player_id), fields, maxlen=MAX_LENGTH, approximate=True)
            woken[player_id] = None
        if self.cluster:  # a cluster's pipeline takes no PUBLISH: after it, one each
            pipe.execute()
            for player_id in woken:
                self.wake(player_id)
            return
        for player_id in woken:
            pipe.publish(self.wake_channel(player_id), "1")
        pipe.execute()

    def last_id(self, player_id: str) -> str:
        """The id of the player's latest notice ("0-0" if none): where a new reader starts."""
        last = self.redis.xrevrange(self.key(player_id), count=1)
        return _text(last[0][0]) if last else "0-0"

    def after(self, player_id: str, after: str, count: int = 100) -> list[tuple[str, str, Any]]:
        """The player's notices after entry ``after`` (an id the API parsed:
        service/api/event_ids.py): ``(id, type, data)``, oldest first."""
        if after == LAST_ID:
            return []
        entries = self.redis.xrange(self.key(player_id), f"({after}", "+", count=count)
        out = []
        for entry_id, fields in entries:
            decoded = {_text(k): _text(v) for k, v in fields.items()}
            out.append((_text(entry_id), decoded["type"], json.loads(decoded["data"])))
        return out


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
