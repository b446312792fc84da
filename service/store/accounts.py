"""Registered players in Redis: a name claimed once, a key's hash, and the player's games.

Key layout (every key carries the ``{accounts}`` Redis Cluster hash tag, so each script below
runs on one slot and is atomic on a cluster as on one server)::

    <prefix>:{accounts}:name:<sha256 of the name's key>  string: the id of the player who holds
                                                         the name (SET NX: claimed once, ever)
    <prefix>:{accounts}:player:<id>    hash: name (as registered), key (sha256 of the API key,
                                       "" once revoked), created (ISO-8601 UTC)
    <prefix>:{accounts}:key:<sha256>   string: the id of the player whose key hashes to it
    <prefix>:{accounts}:games:<id>     sorted set: the player's game ids, score = when joined
                                       (microseconds)
    <prefix>:{accounts}:skeleton:<sha256 of a skeleton>  string: the id of the player whose name
                                       has that UTS #39 skeleton (domain.names.skeletons: up
                                       to three per name), so a look-alike is one MGET away;
                                       written with the account, kept as long as it is

The name key is the SHA-256 of ``domain.names.name_key`` (the RFC 8266 comparison form), so a
look-alike ("ANN", "ａｎｎ") finds the same key, and any name makes a bounded, printable key.
Accounts registered before skeletons were kept get their entries from ``hearts players
index-names`` (``index_skeletons``: idempotent, the oldest account keeps a shared skeleton).
One tag puts every account on one slot: enough for a first slice (one small hash per player);
spreading them means giving up the one-script registration (name claim + record + key index).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

# Registers a player: 'ok', or 'taken' / 'confusable' (nothing written) if the name, or a
# look-alike of it, is anyone's already.
_REGISTER_LUA = r"""
local name = KEYS[1]     -- the name's claim: the holder's id
local player = KEYS[2]   -- the player's record
local key = KEYS[3]      -- the key index: the id of the player whose key hashes to it
local skeletons = {}     -- the name's skeletons' entries (KEYS[4]..)
for i = 4, #KEYS do skeletons[#skeletons + 1] = KEYS[i] end

-- ARGV[1] (Accounts.register): {id, name (as registered), key_hash, created}
local account = cjson.decode(ARGV[1])

if redis.call('EXISTS', name) == 1 then return 'taken' end
for _, skeleton in ipairs(skeletons) do
  if redis.call('EXISTS', skeleton) == 1 then return 'confusable' end
end
redis.call('SET', name, account.id)
redis.call('HSET', player,
  'name', account.name, 'key', account.key_hash, 'created', account.created)
redis.call('SET', key, account.id)
for _, skeleton in ipairs(skeletons) do redis.call('SET', skeleton, account.id) end
return 'ok'
"""

# Replaces (or revokes) a player's key: 'ok', 'gone' (no such player) or 'stale' (the key was
# changed since the caller read it); nothing written unless 'ok'.
_REKEY_LUA = r"""
local player = KEYS[1]     -- the player's record
local old_index = KEYS[2]  -- the old key's index entry
local new_index = KEYS[3]  -- the new key's (may be old_index: then the key is only revoked)

-- ARGV[1] (Accounts.rekey): {id, old_hash (the key hash expected), new_hash ('' to revoke)}
local rekey = cjson.decode(ARGV[1])

if redis.call('EXISTS', player) == 0 then return 'gone' end
if redis.call('HGET', player, 'key') ~= rekey.old_hash then return 'stale' end
if rekey.old_hash ~= '' then redis.call('DEL', old_index) end
redis.call('HSET', player, 'key', rekey.new_hash)
if rekey.new_hash ~= '' then redis.call('SET', new_index, rekey.id) end
return 'ok'
"""


@dataclass(frozen=True, slots=True)
class StoredPlayer:
    player_id: str
    name: str
    key_hash: str  # "" once revoked
    created: str


class NameClaimed(Exception):
    """The name (as compared) belongs to a registered player already."""


class NameLookalike(Exception):
    """The name shares a UTS #39 skeleton with a registered player's."""


class PlayerGone(Exception):
    """No such player (or it changed under a key rotation too often)."""


class AccountStore:
    def __init__(self, redis: Any, *, prefix: str = "hearts") -> None:
        self.redis = redis
        self.prefix = prefix
        self._register = redis.register_script(_REGISTER_LUA)
        self._rekey = redis.register_script(_REKEY_LUA)

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, "{accounts}", *parts))

    def name_key(self, compared: str) -> str:
        return self._key("name", hashlib.sha256(compared.encode("utf-8")).hexdigest())

    def player_key(self, player_id: str) -> str:
        return self._key("player", player_id)

    def key_index(self, key_hash: str) -> str:
        return self._key("key", key_hash)

    def games_key(self, player_id: str) -> str:
        return self._key("games", player_id)

    def skeleton_key(self, skeleton: str) -> str:
        return self._key("skeleton", hashlib.sha256(skeleton.encode("utf-8")).hexdigest())

    def register(
        self,
        player_id: str,
        name: str,
        compared: str,
        key_hash: str,
        created: str,
        skeletons: Iterable[str] = (),
    ) -> None:
        """Claim ``compared`` and ``skeletons`` for a new player: NameClaimed if anyone holds
        the name, NameLookalike if anyone's name has one of the skeletons (nothing written)."""
        keys = [self.name_key(compared), self.player_key(player_id), self.key_index(key_hash)]
        keys += [self.skeleton_key(s) for s in sorted(skeletons)]
        account = {"id": player_id, "name": name, "key_hash": key_hash, "created": created}
        reply = _text(self._register(keys=keys, args=[_argument(account)]))
        if reply == "taken":
            raise NameClaimed(name)
        if reply == "confusable":
            raise NameLookalike(name)

    def holder_of(self, compared: str) -> str | None:
        """The id of the player whose name compares as ``compared``, if any."""
        found = self.redis.get(self.name_key(compared))
        return None if found is None else _text(found)

    def holders(self, compared: str, skeletons: Iterable[str]) -> tuple[str | None, str | None]:
        """In one round trip: the player holding the name ``compared``, and one whose name has
        one of ``skeletons`` (a look-alike), each None if nobody."""
        keys = [self.name_key(compared), *(self.skeleton_key(s) for s in sorted(skeletons))]
        found = self.redis.mget(keys)  # one slot: every key has the {accounts} tag
        alike = next((_text(f) for f in found[1:] if f is not None), None)
        return (None if found[0] is None else _text(found[0])), alike

    def all_players(self, batch: int = 500) -> Iterator[StoredPlayer]:
        """Every account (a SCAN: for operators' tools, never a request)."""
        for key in self.redis.scan_iter(match=self.player_key("*"), count=batch):
            player = self.get(_text(key).rsplit(":", 1)[1])
            if player is not None:
                yield player

    def index_skeletons(self, player_id: str, skeletons: Iterable[str]) -> list[str]:
        """Index an account's skeletons where nobody holds them yet (SET NX each); returns
        the ids already holding the others (other players': look-alikes registered before)."""
        pipe = self.redis.pipeline(transaction=False)
        keys = [self.skeleton_key(s) for s in sorted(skeletons)]
        for key in keys:
            pipe.set(key, player_id, nx=True)
        for key in keys:
            pipe.get(key)
        held = pipe.execute()[len(keys) :]
        return sorted({_text(h) for h in held if h is not None and _text(h) != player_id})

    def by_key_hash(self, key_hash: str) -> StoredPlayer | None:
        found = self.redis.get(self.key_index(key_hash))
        if found is None:
            return None
        player = self.get(_text(found))
        # The index and the record are written together; the record has the last word.
        if player is None or player.key_hash != key_hash:
            return None
        return player

    def key_hash(self, player_id: str) -> str | None:
        """The hash of the player's key now ("" once revoked; None if there is no player): one
        HGET, for an open stream to see its key rotated or revoked."""
        found = self.redis.hget(self.player_key(player_id), "key")
        return None if found is None else _text(found)

    def get(self, player_id: str) -> StoredPlayer | None:
        data = self.redis.hgetall(self.player_key(player_id))
        if not data:
            return None
        fields = {_text(k): _text(v) for k, v in data.items()}
        return StoredPlayer(player_id, fields["name"], fields.get("key", ""), fields["created"])

    def names(self, player_ids: list[str]) -> dict[str, str]:
        """The registered names of those players (one round trip; unknown ids left out)."""
        if not player_ids:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for player_id in player_ids:
            pipe.hget(self.player_key(player_id), "name")
        return {
            player_id: _text(name)
            for player_id, name in zip(player_ids, pipe.execute(), strict=True)
            if name is not None
        }

    def rekey(self, player_id: str, old_hash: str, new_hash: str) -> None:
        """Replace the player's key hash (``new_hash`` "" revokes): the old key stops at once.

        PlayerGone if the player is gone or its key changed meanwhile (then nothing changed).
        """
        old_index = self.key_index(old_hash) if old_hash else self.player_key(player_id)
        new_index = self.key_index(new_hash) if new_hash else old_index
        keys = [self.player_key(player_id), old_index, new_index]
        rekey = {"id": player_id, "old_hash": old_hash, "new_hash": new_hash}
        reply = _text(self._rekey(keys=keys, args=[_argument(rekey)]))
        if reply != "ok":
            raise PlayerGone(reply)

    def add_game(self, player_id: str, game_id: str) -> None:
        """Index the game under the player (NX: the first join's time stays)."""
        score = int(time.time() * 1_000_000)
        self.redis.zadd(self.games_key(player_id), {game_id: score}, nx=True)

    def games(self, player_id: str, limit: int) -> list[str]:
        """The player's game ids, the latest joined first."""
        found = self.redis.zrevrange(self.games_key(player_id), 0, limit - 1)
        return [_text(g) for g in found]


def _argument(fields: dict[str, str]) -> str:
    """A script's one argument: its fields as JSON (text as UTF-8: cjson passes it through)."""
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
