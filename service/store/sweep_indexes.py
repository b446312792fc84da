"""The per-partition indexes the sweeps read instead of every game: games waiting for players
(expiry), turn-clock deadlines (the timekeeper) and silent games (abandonment). The append
script keeps them (service/store/append.py); these are their reads, and the repairs of an
entry a sweep found stale."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from service.store.keys import KeyLayout, time_score
from service.store.stream_entries import text


class SweepIndexes:
    def __init__(self, redis: Any, keys: KeyLayout) -> None:
        self.redis = redis
        self.keys = keys

    def _before(
        self, key_of: Any, cutoff: str, limit: int, partitions: Iterable[int] | None
    ) -> list[str]:
        pipe = self.redis.pipeline(transaction=False)
        for partition in range(self.keys.partitions) if partitions is None else partitions:
            pipe.zrangebyscore(key_of(partition), "-inf", cutoff, 0, limit)
        return [text(game_id) for ids in pipe.execute() for game_id in ids]

    def waiting_since_before(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        cutoff = f"({time_score(time)}"
        return self._before(self.keys.waiting_key, cutoff, limit, partitions)

    def forget_waiting(self, game_id: str) -> None:
        self.redis.zrem(self.keys.waiting_key(self.keys.partition_of(game_id)), game_id)

    def wait_earlier(self, game_id: str, seconds: float) -> None:
        key = self.keys.waiting_key(self.keys.partition_of(game_id))
        score = self.redis.zscore(key, game_id)
        if score is not None:
            # XX: a game that left the index meanwhile (its seats taken) is not put back.
            self.redis.zadd(key, {game_id: int(score) - int(seconds * 1_000_000)}, xx=True)

    def deadlines_due(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        cutoff = str(time_score(time))
        return self._before(self.keys.deadlines_key, cutoff, limit, partitions)

    def set_deadline(self, game_id: str, time: str | None) -> None:
        self._set(self.keys.deadlines_key(self.keys.partition_of(game_id)), game_id, time)

    def silent_since_before(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        cutoff = f"({time_score(time)}"
        return self._before(self.keys.silent_key, cutoff, limit, partitions)

    def silent_before(self, game_id: str, time: str) -> bool:
        score = self.redis.zscore(self.keys.silent_key(self.keys.partition_of(game_id)), game_id)
        return score is not None and score < time_score(time)

    def set_silent(self, game_id: str, time: str | None) -> None:
        self._set(self.keys.silent_key(self.keys.partition_of(game_id)), game_id, time)

    def _set(self, key: str, game_id: str, time: str | None) -> None:
        if time is None:
            self.redis.zrem(key, game_id)
        else:
            self.redis.zadd(key, {game_id: time_score(time)})
