"""The public log of games: one append-only Merkle tree (RFC 9162) of finished games' heads.

Each finished game is one leaf, appended once: the leaf's data is the game's final head (the
text of :class:`hearts_client.note.Head`: origin, game id, version, chain hash), its hash
``SHA-256(0x00 || data)``. The hashing, roots and proofs are :mod:`hearts_client.merkle`'s, the
same code the independent verifier checks them with.

Key layout (``{tlog}`` is a Redis Cluster hash tag: every key below is in one slot, so the
append script may name them all)::

    <prefix>:{tlog}:leaves        list of leaf hashes (32 raw bytes each), in append order
    <prefix>:{tlog}:games         hash: game id -> JSON {"index": i, "head": leaf data}
    <prefix>:{tlog}:cosig:<size>  hash: witness name -> its cosignature line on the checkpoint
                                  of that size

The append is one Lua script: a game already in the tree is answered with its index and nothing
is written, so appending again (a projector re-delivered the game's end) is harmless. Leaves are
never removed or reordered.

Proofs read the leaf hashes up to the size asked (one LRANGE) and hash them here: O(size) per
proof. Fine for thousands of games; a very large log would keep interior nodes (tiles) instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hearts_client import merkle

from service.store.event_store import fence_and_wait

_APPEND_LUA = """
local known = redis.call('HGET', KEYS[2], ARGV[1])
if known then return {0, known} end
local size = redis.call('RPUSH', KEYS[1], ARGV[2])
local record = cjson.encode({index = size - 1, head = ARGV[3]})
redis.call('HSET', KEYS[2], ARGV[1], record)
return {1, record}
"""

# KEYS: 1 leaves, 2 the published checkpoint's record. ARGV: 1 interval (ms). The size of the
# checkpoint published now: the tree's size, published again once the interval has passed
# since the last publication (the Redis server's time: every process agrees).
_PUBLISH_LUA = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local at = tonumber(redis.call('HGET', KEYS[2], 'at') or '-1')
local size = tonumber(redis.call('HGET', KEYS[2], 'size') or '-1')
if size < 0 or now - at >= tonumber(ARGV[1]) then
  size = redis.call('LLEN', KEYS[1])
  redis.call('HSET', KEYS[2], 'size', size, 'at', now)
end
return size
"""


@dataclass(frozen=True, slots=True)
class Leaf:
    game_id: str
    index: int
    head: str  # the leaf's data: the game's final head text

    @property
    def hash(self) -> bytes:
        return merkle.leaf_hash(self.head.encode())


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else value


class GameTree:
    """The tree in Redis: append a finished game, read sizes, roots and proofs."""

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._append = redis.register_script(_APPEND_LUA)
        self._publish = redis.register_script(_PUBLISH_LUA)

    @property
    def leaves_key(self) -> str:
        return f"{self.prefix}:{{tlog}}:leaves"

    @property
    def games_key(self) -> str:
        return f"{self.prefix}:{{tlog}}:games"

    @property
    def published_key(self) -> str:
        return f"{self.prefix}:{{tlog}}:published"

    def published_size(self, every_ms: int) -> int:
        """The size of the checkpoint published now: the tree's size as it was at the last
        publication, unless ``every_ms`` have passed since (then the tree's size now)."""
        return int(self._publish(keys=[self.leaves_key, self.published_key], args=[every_ms]))

    def cosig_key(self, size: int) -> str:
        return f"{self.prefix}:{{tlog}}:cosig:{size}"

    def append(self, game_id: str, head: str) -> tuple[Leaf, bool]:
        """Append the game's head unless the game is in the tree; (its leaf, whether added)."""
        leaf_hash = merkle.leaf_hash(head.encode())
        added, record = self._append(
            keys=[self.leaves_key, self.games_key], args=[game_id, leaf_hash, head]
        )
        found = json.loads(_text(record))
        return Leaf(game_id, int(found["index"]), found["head"]), bool(added)

    def size(self) -> int:
        return int(self.redis.llen(self.leaves_key))

    def leaf(self, game_id: str) -> Leaf | None:
        record = self.redis.hget(self.games_key, game_id)
        if record is None:
            return None
        found = json.loads(_text(record))
        return Leaf(game_id, int(found["index"]), found["head"])

    def leaf_hashes(self, size: int) -> list[bytes]:
        """The first ``size`` leaf hashes (ValueError if the tree is smaller)."""
        if size == 0:
            return []
        hashes = [bytes(h) for h in self.redis.lrange(self.leaves_key, 0, size - 1)]
        if len(hashes) != size:
            raise ValueError(f"the tree has {len(hashes)} leaves, not {size}")
        return hashes

    def root(self, size: int) -> bytes:
        return merkle.root(self.leaf_hashes(size))

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return merkle.inclusion_proof(self.leaf_hashes(size), index)

    def consistency(self, old: int, new: int) -> list[bytes]:
        return merkle.consistency_proof(self.leaf_hashes(new), old)

    def replicas_holding(self, size: int, wanted: int, timeout_ms: int) -> int:
        """How many replicas (up to ``wanted``) hold the tree's first ``size`` leaves and all
        before: a fence key written on the slot's master, then WAIT on the same connection
        (WAIT counts its own connection's writes: see RedisEventStore.await_replicas)."""
        return fence_and_wait(self.redis, f"{self.prefix}:{{tlog}}:fence", size, wanted, timeout_ms)

    def add_cosignature(self, size: int, witness: str, line: str) -> None:
        self.redis.hset(self.cosig_key(size), witness, line)

    def cosignatures(self, size: int) -> list[str]:
        found = self.redis.hgetall(self.cosig_key(size))
        return [_text(found[name]) for name in sorted(found)]
