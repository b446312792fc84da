"""Finished analyses of hands, kept as a read model so that asking twice costs nothing.

Key layout (``{p<N>}`` the game's partition hash tag, the same as the event store's)::

    <prefix>:{p<N>}:analysis:<game id>:<hand>:v<version>:s<samples>   string: the analysis JSON
    <prefix>:{p<N>}:analysisjob:<game id>:<hand>:v<version>:s<samples>  string: the status of
        the job computing it (queued, running with its progress, failed), with a time to live
        so that a job whose worker died is forgotten and can be asked for again

An analysis is a function of the hand (a finished hand never changes), the analysis version
(``bots.analysis.ANALYSIS_VERSION``) and the budget in deals, for the default seed: so a key
names its document for good and a write may race another only with the same bytes. Analyses
under a time budget or another seed depend on more than the key says and are not kept.

A kept analysis is a cache of that function, not a record: it lives ``KEPT_SECONDS`` after it
was worked out, and one asked for after that is worked out again. Without the bound every hand
anybody ever had analysed would stay in Redis for good (~20 KB each), beside games that long
moved to the archive.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import redis

from service.store.event_store import RedisEventStore

# How long an analysis is kept after it was worked out (docs/operations.md, the retention table).
KEPT_SECONDS = 30 * 24 * 3600


class AnalysisStore:
    def __init__(self, store: RedisEventStore) -> None:
        self.store = store
        self.redis = store.redis

    def key(
        self, game_id: str, number: int, version: int, samples: int, kind: str = "analysis"
    ) -> str:
        partition = self.store.partition_of(game_id)  # checks the game id
        return (
            f"{self.store.prefix}:{{p{partition}}}:{kind}:{game_id}:{int(number)}"
            f":v{int(version)}:s{int(samples)}"
        )

    def get(self, game_id: str, number: int, version: int, samples: int) -> dict[str, Any] | None:
        key = self.key(game_id, number, version, samples)
        pipe = self.redis.pipeline(transaction=False)
        pipe.get(key)
        pipe.ttl(key)
        raw, ttl = pipe.execute()
        if raw is None:
            return None
        if ttl == -1:  # kept before analyses had a time to live: given one now
            with contextlib.suppress(redis.RedisError):  # a refused write leaves the read be
                self.redis.expire(key, KEPT_SECONDS)
        return json.loads(raw)

    def put(
        self, game_id: str, number: int, version: int, samples: int, document: dict[str, Any]
    ) -> None:
        self.redis.set(
            self.key(game_id, number, version, samples),
            json.dumps(document, separators=(",", ":")),
            ex=KEPT_SECONDS,
        )

    def job_key(self, game_id: str, number: int, version: int, samples: int) -> str:
        return self.key(game_id, number, version, samples, "analysisjob")

    def claim_job(self, key: str, status: dict[str, Any], ttl: int) -> bool:
        """Record a new job's status unless one is recorded already: whether this call did."""
        return bool(self.redis.set(key, json.dumps(status), nx=True, ex=ttl))

    def set_job(self, key: str, status: dict[str, Any], ttl: int) -> None:
        self.redis.set(key, json.dumps(status), ex=ttl)

    def get_job(self, key: str) -> dict[str, Any] | None:
        raw = self.redis.get(key)
        return None if raw is None else json.loads(raw)

    def drop_job(self, key: str) -> None:
        self.redis.delete(key)
