"""Operators' fair-play decisions: the players whose flag an operator cleared (issue 42).

One hash, ``<prefix>:fairplay:cleared``: player id -> the time (microseconds since the Unix
epoch) up to which the player's fair-play evidence is cleared. It is not a read model (a rebuild
keeps it: the ratings' fold takes it as an input, ``projections.ratings.fold``'s ``cleared``),
and it is kept for good, one field per cleared player, like the accounts it names
(docs/operations.md, "Where the data lives").
"""

from __future__ import annotations

from typing import Any


def cleared_key(prefix: str) -> str:
    return f"{prefix}:fairplay:cleared"


def read_cleared(raw: dict[Any, Any]) -> dict[str, int]:
    """The hash as the fold takes it (fields and values as Redis returns them)."""
    return {_text(k): int(v) for k, v in raw.items()}


class FairPlayStore:
    def __init__(self, redis: Any, *, prefix: str = "hearts") -> None:
        self.redis = redis
        self.key = cleared_key(prefix)

    def cleared(self) -> dict[str, int]:
        return read_cleared(self.redis.hgetall(self.key))

    def clear(self, player_id: str, until_us: int) -> None:
        """Clear the player's evidence of games finished up to ``until_us``."""
        self.redis.hset(self.key, player_id, str(until_us))


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
