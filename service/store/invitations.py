"""Private tables: which games are unlisted, and the hash of each one's join code (issue 44).

Key layout (in the game's partition, beside its other keys)::

    <prefix>:{p<N>}:private     hash, game id -> the join code's credential (its SHA-256 in hex,
                                service/app/auth.py ``credential_of``: the code itself is never
                                stored, as a seat's token is not)

A field is written just before the game's creating append (HSETNX: never over another game's),
so no listing can catch the game public in between, and is removed if the create fails.
Retention: one field of 64 characters per private game, kept as long as the game's id is in
its partition's ``games`` index (the lobby's listing must keep leaving it out, archived or not).
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import Any

from service.store.event_store import RedisEventStore


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)


class Invitations:
    def __init__(self, store: RedisEventStore) -> None:
        self.store = store
        self.redis = store.redis

    def key(self, game_id: str) -> str:
        partition = self.store.partition_of(game_id)
        return f"{self.store.prefix}:{{p{partition}}}:private"

    def claim(self, game_id: str, credential: str) -> bool:
        """Mark ``game_id`` private with the join code's ``credential``; False (nothing
        written) if it is marked already."""
        return bool(self.redis.hsetnx(self.key(game_id), game_id, credential))

    def release(self, game_id: str) -> None:
        """Forget the mark of a game that was not created after all."""
        self.redis.hdel(self.key(game_id), game_id)

    def credential(self, game_id: str) -> str | None:
        """The join code's credential of a private game; None for a listed one."""
        return _text(self.redis.hget(self.key(game_id), game_id))

    def matches(self, game_id: str, credential: str) -> bool:
        stored = self.credential(game_id)
        return stored is not None and hmac.compare_digest(stored, credential)

    def private_among(self, game_ids: Sequence[str]) -> set[str]:
        """Those of ``game_ids`` that are private: one round trip (a pipeline of HEXISTS, each
        on its own partition's key)."""
        if not game_ids:
            return set()
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hexists(self.key(game_id), game_id)
        return {game_id for game_id, found in zip(game_ids, pipe.execute(), strict=True) if found}
