"""Tournaments' read models in Redis: one document per tournament and generation, and the set
of tournaments whose log moved on since the projector last folded them.

Key layout (``{p<N>}``: the tournament id's partition, ``<gen>`` a read-model generation, as in
service/store/read_models.py, whose generations, swaps and drops cover these keys too)::

    <prefix>:{p<N>}:proj:<gen>:tournament:<id>  string: the document (projections/tournaments.py)
    <prefix>:{p<N>}:tournaments-dirty           set: tournaments appended to since folded

A document is written only over an older version (one script), so projectors racing on the
same tournament, or a rebuild beside them, never write it backwards. A tournament leaves the
dirty set only if its log is still at the version just written (one script), so an append
between the fold and the clean-up keeps it there.
"""

from __future__ import annotations

import json
from typing import Any

from service.store.keys import KeyLayout
from service.store.read_models import ProjectionStore

_WRITE_LUA = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 'retired' end
local data = cjson.decode(ARGV[1])
local stored = redis.call('GET', KEYS[1])
if stored and cjson.decode(stored)['version'] >= data.version then return 'stale' end
redis.call('SET', KEYS[1], data.doc)
return 'ok'
"""

_CLEAN_LUA = """
local length = redis.call('XLEN', KEYS[1])
if length == tonumber(ARGV[2]) or length == 0 then
  redis.call('SREM', KEYS[2], ARGV[1])
  return 1
end
return 0
"""


def dirty_key(keys: KeyLayout, partition: int) -> str:
    return f"{keys.partition_prefix(partition)}:tournaments-dirty"


class TournamentModels:
    def __init__(self, projections: ProjectionStore) -> None:
        self.projections = projections
        self.redis = projections.redis
        self.keys: KeyLayout = projections.store.keys
        self._write = self.redis.register_script(_WRITE_LUA)
        self._clean = self.redis.register_script(_CLEAN_LUA)

    def key(self, generation: str, tournament_id: str) -> str:
        partition = self.keys.partition_of(tournament_id)
        base = self.projections.checkpoint_key(generation, partition).removesuffix(":checkpoint")
        return f"{base}:tournament:{tournament_id}"

    def read(self, generation: str, tournament_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(self.key(generation, tournament_id))
        return json.loads(raw) if raw is not None else None

    def write(self, generation: str, tournament_id: str, doc: dict[str, Any]) -> str:
        """'ok', 'stale' (as new or newer stored) or 'retired' (the generation swapped out)."""
        partition = self.keys.partition_of(tournament_id)
        keys = [
            self.key(generation, tournament_id),
            self.projections.retired_key(generation, partition),
        ]
        text = json.dumps(doc, separators=(",", ":"), sort_keys=True)
        data = json.dumps({"version": doc["version"], "doc": text})
        answer = self._write(keys=keys, args=[data])
        return answer.decode() if isinstance(answer, bytes) else str(answer)

    def dirty(self, partitions: list[int]) -> dict[int, list[str]]:
        pipe = self.redis.pipeline(transaction=False)
        for p in partitions:
            pipe.smembers(dirty_key(self.keys, p))
        out = {}
        for p, members in zip(partitions, pipe.execute(), strict=True):
            if members:
                out[p] = sorted(m.decode() if isinstance(m, bytes) else m for m in members)
        return out

    def clean(self, tournament_id: str, version: int) -> bool:
        partition = self.keys.partition_of(tournament_id)
        keys = [self.keys.tournament_key(tournament_id), dirty_key(self.keys, partition)]
        return int(self._clean(keys=keys, args=[tournament_id, version])) == 1
