"""Editing a game's Redis stream by hand, as a tamperer would (optionally re-hashing the chain)."""

from __future__ import annotations

import json
from collections.abc import Callable

from service.store.envelope import GENESIS_HASH, canonical_body, canonical_json, chain_hash
from service.store.event_store import RedisEventStore

Envelope = dict


def read_raw(store: RedisEventStore, game_id: str) -> list[Envelope]:
    entries = store.redis.xrange(store.game_key(game_id), "-", "+")
    out = []
    for _, fields in entries:
        raw = fields.get(b"event", fields.get("event"))
        out.append(json.loads(raw))
    return out


def write_raw(store: RedisEventStore, game_id: str, envelopes: list[Envelope]) -> None:
    key = store.game_key(game_id)
    pipe = store.redis.pipeline(transaction=True)
    pipe.delete(key)
    for env in envelopes:
        pipe.xadd(key, {"hash": env["hash"], "event": canonical_json(env)}, id=f"{env['seq']}-0")
    pipe.execute()


def rehash(envelopes: list[Envelope], renumber: bool = False) -> list[Envelope]:
    """The chain recomputed from scratch (and seqs renumbered 1.. when ``renumber``)."""
    prev = GENESIS_HASH
    out = []
    for i, env in enumerate(envelopes, start=1):
        env = dict(env)
        if renumber:
            env["seq"] = i
        body = {k: env[k] for k in ("type", "schema_version", "game_id", "seq", "time")}
        body.update(command_id=env["command_id"], payload=env["payload"])
        env["prev_hash"] = prev
        env["hash"] = chain_hash(prev, canonical_body(**body))
        prev = env["hash"]
        out.append(env)
    return out


def tamper(
    store: RedisEventStore,
    game_id: str,
    edit: Callable[[list[Envelope]], list[Envelope]],
    *,
    rehash_chain: bool,
) -> None:
    """Apply ``edit`` to the stored envelopes; with ``rehash_chain`` cover the tracks."""
    envelopes = edit(read_raw(store, game_id))
    if rehash_chain:
        envelopes = rehash(envelopes, renumber=True)
    write_raw(store, game_id, envelopes)


def find(envelopes: list[Envelope], type_: str, nth: int = 0, **payload) -> int:
    """Index of the ``nth`` envelope of ``type_`` whose payload has the given members."""
    hits = [
        i
        for i, env in enumerate(envelopes)
        if env["type"] == type_ and all(env["payload"].get(k) == v for k, v in payload.items())
    ]
    return hits[nth]
