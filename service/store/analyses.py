"""Finished analyses of hands, kept as a read model so that asking twice costs nothing.

Key layout (``{p<N>}`` the game's partition hash tag, the same as the event store's)::

    <prefix>:{p<N>}:analysis:<game id>:<hand>:v<version>:s<samples>   string: the analysis JSON

An analysis is a function of the hand (a finished hand never changes), the analysis version
(``bots.analysis.ANALYSIS_VERSION``) and the budget in deals, for the default seed: so a key
names its document for good and a write may race another only with the same bytes. Analyses
under a time budget or another seed depend on more than the key says and are not kept.
"""

from __future__ import annotations

import json
from typing import Any

from service.store.event_store import RedisEventStore


class AnalysisStore:
    def __init__(self, store: RedisEventStore) -> None:
        self.store = store
        self.redis = store.redis

    def key(self, game_id: str, number: int, version: int, samples: int) -> str:
        partition = self.store.partition_of(game_id)  # checks the game id
        return (
            f"{self.store.prefix}:{{p{partition}}}:analysis:{game_id}:{int(number)}"
            f":v{int(version)}:s{int(samples)}"
        )

    def get(self, game_id: str, number: int, version: int, samples: int) -> dict[str, Any] | None:
        raw = self.redis.get(self.key(game_id, number, version, samples))
        return None if raw is None else json.loads(raw)

    def put(
        self, game_id: str, number: int, version: int, samples: int, document: dict[str, Any]
    ) -> None:
        self.redis.set(
            self.key(game_id, number, version, samples),
            json.dumps(document, separators=(",", ":")),
        )
