"""The public log of games: one append-only Merkle tree (RFC 9162) of finished games' heads,
kept as tiles (c2sp.org/tlog-tiles) in the blob store and its right edge in Redis.

Each finished game is one leaf, appended once: the leaf's data is the game's final head (the
text of :class:`hearts_client.note.Head`: origin, game id, version, chain hash), its hash
``SHA-256(0x00 || data)``. The hashing, roots and proofs are :mod:`hearts_client.merkle`'s and
:mod:`hearts_client.tiles`', the code the independent verifier checks them with.

Where the tree is: a *full* tile (256 hashes of a level) is written once to the blob store,
``tile/<L>/<N>`` (and, for level 0, its entry bundle ``tile/entries/<N>``: the 256 heads), and
then removed from Redis. Redis keeps what is not tiled yet: per level, the hashes after the
last full tile (fewer than 256 once tiles are cut), and the heads of the leaves after the last
full bundle. A proof reads O(log n) hashes: a run of one tile per subtree it needs.

The blob store is also a complete static mirror of the log (:meth:`GameTree.mirror`): for each
checkpoint published, once its full tiles are all stored, its partial tiles and bundles
(``tile/<L>/<N>.p/<W>``, immutable like full ones: a width names its content) and then the
signed note itself (``checkpoint``, the one object replaced, so never naming a tile the store
lacks; and only over an earlier checkpoint of this log, never another deployment's). Partial
tiles whose full tile is stored are deleted (c2sp.org/tlog-tiles allows it; clients fall back
on the full tile), so the store keeps at most one tile's worth of them.

Key layout (``{tlog}`` is a Redis Cluster hash tag: every key below is in one slot, so the
scripts may name them all)::

    <prefix>:{tlog}:leaves        list: the leaf hashes (32 raw bytes each) not tiled yet
    <prefix>:{tlog}:level:<L>     list: the hashes of level L >= 1 not tiled yet
    <prefix>:{tlog}:tiled         hash: level -> how many of its hashes are in full tiles (the
                                  index of the list's first element); absent: 0
    <prefix>:{tlog}:edge          hash: leaf index -> its head, for leaves not tiled yet
    <prefix>:{tlog}:games         hash: game id -> JSON {"index": i, "head": leaf data}; the
                                  head is dropped once it is in a cut bundle
    <prefix>:{tlog}:published     hash: the size and time of the checkpoint published last;
                                  ``stored``/``stored-note``: the size and SHA-256 of the
                                  checkpoint last put in the blob store
    <prefix>:{tlog}:partials      set: the partial tiles put in the blob store and not yet
                                  deleted (at most a few per level)
    <prefix>:{tlog}:mirroring     string: held (SET NX PX) by the process mirroring now
    <prefix>:{tlog}:cosig:<size>  hash: witness name -> its cosignature line on the checkpoint
                                  of that size; kept for the last COSIGNED_SIZES_KEPT sizes
    <prefix>:{tlog}:cosigned      sorted set: the sizes with cosignatures kept (score: size)

A log written before tiles (every leaf hash in ``:leaves``, no ``:tiled`` or ``:edge``) is the
same layout with nothing tiled: it proves as it is, and its first cut moves its full tiles out
(the heads of its leaves are found in ``:games``).

The append is one Lua script: a game already in the tree is answered with its index and nothing
is written, so appending again (a projector re-delivered the game's end) is harmless. Leaves are
never removed or reordered. Tiles are cut (:meth:`GameTree.cut_tiles`) only up to a size about
to be signed, once its replicas hold it: a tile is never written from leaves a failover could
lose and re-append in another order. A cut writes the tile, then removes it from Redis in one
script that does nothing if another cutter did it first; a crash between the two leaves the
tile written and Redis whole, and the next cut writes the same bytes again (a no-op).
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from hearts_client import merkle, tiles
from hearts_client.note import Checkpoint, Note, NoteError

from service.store.append import fence_and_wait
from service.store.blobs import BlobConflict, BlobStore

# The scripts name their KEYS at the top and take their data as one JSON argument (decoded with
# cjson), read by field name. A hash is not JSON (it is 32 raw bytes): it goes beside the JSON,
# as ARGV[2], and is stored as it comes. Measured (issue 35): sent as hex in the JSON instead,
# its decoding in Lua (string.gsub over 32 pairs) doubled the append's Redis CPU per call.

# Appends a game's leaf unless the game is in the tree: {1, its record} if added, else
# {0, the record it has}.
_APPEND_LUA = r"""
local leaves = KEYS[1]  -- the leaf hashes not tiled yet
local games = KEYS[2]   -- game id -> {index, head}
local tiled = KEYS[3]   -- level -> how many of its hashes are in full tiles
local edge = KEYS[4]    -- leaf index -> head, for the leaves not tiled yet

-- ARGV[1] (GameTree.append): {game_id, head (the leaf's data)}
local leaf = cjson.decode(ARGV[1])
local hash = ARGV[2]  -- the leaf's hash, 32 raw bytes

local known = redis.call('HGET', games, leaf.game_id)
if known then return {0, known} end
-- The leaf's index: the hashes in full tiles, then its place in the list.
local before = tonumber(redis.call('HGET', tiled, '0') or '0')
local index = before + redis.call('RPUSH', leaves, hash) - 1
local record = cjson.encode({index = index, head = leaf.head})
redis.call('HSET', games, leaf.game_id, record)
redis.call('HSET', edge, string.format('%d', index), leaf.head)
return {1, record}
"""

# The tree's size: the leaves in full tiles and those after.
_SIZE_LUA = r"""
local leaves = KEYS[1]  -- the leaf hashes not tiled yet
local tiled = KEYS[2]   -- level -> how many of its hashes are in full tiles
return tonumber(redis.call('HGET', tiled, '0') or '0') + redis.call('LLEN', leaves)
"""

# The size of the checkpoint published now: the tree's size, published again once the interval
# has passed since the last publication (the Redis server's time: every process agrees).
_PUBLISH_LUA = r"""
local leaves = KEYS[1]     -- the leaf hashes not tiled yet
local published = KEYS[2]  -- the published checkpoint's record: {size, at}
local tiled = KEYS[3]      -- level -> how many of its hashes are in full tiles

-- ARGV[1] (GameTree.published_size): {every_ms}
local publish = cjson.decode(ARGV[1])

local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local at = tonumber(redis.call('HGET', published, 'at') or '-1')
local size = tonumber(redis.call('HGET', published, 'size') or '-1')
if size < 0 or now - at >= publish.every_ms then
  size = tonumber(redis.call('HGET', tiled, '0') or '0') + redis.call('LLEN', leaves)
  redis.call('HSET', published, 'size', size, 'at', now)
end
return size
"""

# {tiled, hashes...}: the level's hashes start .. start + count - 1 still in Redis (as many as
# there are, raw bytes), or only {tiled} if start is in a full tile already. One script: a cut
# between the two reads cannot shift the list under the index.
_READ_LUA = r"""
local tiled = KEYS[1]  -- level -> how many of its hashes are in full tiles
local level = KEYS[2]  -- the level's hashes not tiled yet

-- ARGV[1] (GameTree.hashes, GameTree.cut_tiles): {level, start, count}
local read = cjson.decode(ARGV[1])

local cut = tonumber(redis.call('HGET', tiled, string.format('%d', read.level)) or '0')
if read.start < cut then return {cut} end
local first = read.start - cut  -- the list's first element is the hash at index cut
local found = redis.call('LRANGE', level, first, first + read.count - 1)
table.insert(found, 1, cut)
return found
"""

# Removes the level's first full tile from Redis (it is in the blob store) and appends its root
# to the next level; for level 0, the heads too (in its bundle now), from :edge and from each
# game's index record. 0 (nothing written) if another cutter did it first, else 1.
_COMMIT_LUA = r"""
local tiled = KEYS[1]  -- level -> how many of its hashes are in full tiles
local level = KEYS[2]  -- the level's hashes not tiled yet
local above = KEYS[3]  -- the next level's
local edge = KEYS[4]   -- leaf index -> head, for the leaves not tiled yet
local games = KEYS[5]  -- game id -> {index, head}

-- ARGV[1] (GameTree.cut_tiles): {level, tiled (the level's count the cut was made at),
--   games (level 0: the game id of each of its 256 leaves)}
local tile = cjson.decode(ARGV[1])
local root = ARGV[2]  -- the tile's Merkle root, 32 raw bytes

local field = string.format('%d', tile.level)
local cut = tonumber(redis.call('HGET', tiled, field) or '0')
if cut ~= tile.tiled or redis.call('LLEN', level) < 256 then return 0 end
redis.call('LTRIM', level, 256, -1)
redis.call('HSET', tiled, field, string.format('%d', cut + 256))
redis.call('RPUSH', above, root)
if tile.level == 0 then
  for i = cut, cut + 255 do redis.call('HDEL', edge, string.format('%d', i)) end
  -- A game's record loses its head (the bundle has it), if the record is this leaf's.
  for k, game_id in ipairs(tile.games) do
    local record = redis.call('HGET', games, game_id)
    if record and cjson.decode(record)['index'] == cut + k - 1 then
      redis.call('HSET', games, game_id, cjson.encode({index = cut + k - 1}))
    end
  end
end
return 1
"""

# Heads of a log written before tiles, found in the games hash, kept for the leaves not tiled
# yet (never for a tiled one: a cut may have removed it since they were read).
_FILL_EDGE_LUA = r"""
local tiled = KEYS[1]  -- level -> how many of its hashes are in full tiles
local edge = KEYS[2]   -- leaf index -> head, for the leaves not tiled yet

-- ARGV[1] (GameTree._fill_edge_from_games): {heads: {leaf index (a decimal string): head}}
local fill = cjson.decode(ARGV[1])

local cut = tonumber(redis.call('HGET', tiled, '0') or '0')
for index, head in pairs(fill.heads) do
  if tonumber(index) >= cut then redis.call('HSET', edge, index, head) end
end
return 1
"""

# Gives the lock back if the owner still holds it (another process may hold it since ours
# expired).
_UNLOCK_LUA = r"""
local lock = KEYS[1]  -- the mirroring lock

-- ARGV[1] (GameTree.mirror): {owner}
local unlock = cjson.decode(ARGV[1])

if redis.call('GET', lock) == unlock.owner then return redis.call('DEL', lock) end
return 0
"""

WIDTH = tiles.TILE_WIDTH
# Cosignatures kept for this many checkpoint sizes, the newest: a witness cosigns each checkpoint
# it sees, one per publication, so without a bound they pile up for good. Older sizes' notes
# are still served, signed by the log, without their cosignatures (the store's mirrored note
# keeps the newest's).
COSIGNED_SIZES_KEPT = 1024
MIRROR_LOCK_MS = 60_000  # a mirroring process that died holds the others off this long


class TileMissing(Exception):
    """Redis says a tile was cut, but the blob store has no such object (a blob store that
    lost data, or another store configured than the one tiles were written to)."""


@dataclass(frozen=True, slots=True)
class Leaf:
    game_id: str
    index: int
    head: str  # the leaf's data: the game's final head text

    @property
    def hash(self) -> bytes:
        return merkle.leaf_hash(self.head.encode())


def _argument(**fields: Any) -> str:
    """A script's JSON argument: its fields (text as UTF-8, which cjson passes through as it
    is; a hash goes beside it, raw)."""
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _game_id(head: bytes) -> str:
    """The game id a head names (its second line, ``game <id>``); "" if it names none."""
    lines = head.split(b"\n")
    if len(lines) > 1 and lines[1].startswith(b"game "):
        return lines[1][len(b"game ") :].decode(errors="replace")
    return ""


def _checkpoint_size(note: bytes) -> int:
    """The tree size a signed checkpoint note names (its second line); 0 if unreadable."""
    lines = note.decode(errors="replace").splitlines()
    return int(lines[1]) if len(lines) > 1 and lines[1].isdigit() else 0


class _TileCache:
    """Full tiles read from the blob store, the most recently used kept (they never change)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._tiles: OrderedDict[str, list[bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str) -> list[bytes] | None:
        with self._lock:
            found = self._tiles.get(path)
            if found is not None:
                self._tiles.move_to_end(path)
            return found

    def put(self, path: str, hashes: list[bytes]) -> None:
        with self._lock:
            self._tiles[path] = hashes
            while len(self._tiles) > self.capacity:
                self._tiles.popitem(last=False)


class GameTree:
    """The tree: append a finished game, read sizes, roots, proofs and tiles, cut full tiles
    into ``blobs`` (None: nothing is cut, the whole tree stays in Redis)."""

    def __init__(
        self, redis: Any, prefix: str, blobs: BlobStore | None = None, cached_tiles: int = 512
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.blobs = blobs
        self._cache = _TileCache(cached_tiles)  # 512 tiles: 4 MB
        self._append = redis.register_script(_APPEND_LUA)
        self._size = redis.register_script(_SIZE_LUA)
        self._publish = redis.register_script(_PUBLISH_LUA)
        self._read = redis.register_script(_READ_LUA)
        self._commit = redis.register_script(_COMMIT_LUA)
        self._fill_edge = redis.register_script(_FILL_EDGE_LUA)
        self._unlock = redis.register_script(_UNLOCK_LUA)

    # -- keys ------------------------------------------------------------------------------------

    def _key(self, name: str) -> str:
        return f"{self.prefix}:{{tlog}}:{name}"

    @property
    def leaves_key(self) -> str:
        return self._key("leaves")

    @property
    def games_key(self) -> str:
        return self._key("games")

    @property
    def published_key(self) -> str:
        return self._key("published")

    @property
    def tiled_key(self) -> str:
        return self._key("tiled")

    @property
    def edge_key(self) -> str:
        return self._key("edge")

    def level_key(self, level: int) -> str:
        """The list of the level's hashes not tiled yet (level 0: the leaf hashes)."""
        return self.leaves_key if level == 0 else self._key(f"level:{level}")

    @property
    def partials_key(self) -> str:
        return self._key("partials")

    def cosig_key(self, size: int) -> str:
        return self._key(f"cosig:{size}")

    # -- appending and sizes ---------------------------------------------------------------------

    def append(self, game_id: str, head: str) -> tuple[Leaf, bool]:
        """Append the game's head unless the game is in the tree; (its leaf, whether added)."""
        leaf_hash = merkle.leaf_hash(head.encode())
        added, record = self._append(
            keys=[self.leaves_key, self.games_key, self.tiled_key, self.edge_key],
            args=[_argument(game_id=game_id, head=head), leaf_hash],
        )
        found = json.loads(_text(record))
        return Leaf(game_id, int(found["index"]), found["head"]), bool(added)

    def size(self) -> int:
        return int(self._size(keys=[self.leaves_key, self.tiled_key]))

    def published_size(self, every_ms: int) -> int:
        """The size of the checkpoint published now: the tree's size as it was at the last
        publication, unless ``every_ms`` have passed since (then the tree's size now)."""
        return int(
            self._publish(
                keys=[self.leaves_key, self.published_key, self.tiled_key],
                args=[_argument(every_ms=every_ms)],
            )
        )

    def last_published(self) -> int | None:
        """The size of the checkpoint published last (None: none was, or every request signs
        the tree as it is)."""
        size = self.redis.hget(self.published_key, "size")
        return None if size is None else int(size)

    def leaf(self, game_id: str) -> Leaf | None:
        record = self.redis.hget(self.games_key, game_id)
        if record is None:
            return None
        found = json.loads(_text(record))
        index = int(found["index"])
        head = found.get("head")
        if head is None:  # tiled: its head is in its entry bundle
            head = self.heads(index, 1)[0].decode()
        return Leaf(game_id, index, head)

    # -- hashes, roots, proofs -------------------------------------------------------------------

    def tiled(self, level: int) -> int:
        """How many hashes of ``level`` are in full tiles of the blob store."""
        return int(self.redis.hget(self.tiled_key, str(level)) or 0)

    def hashes(self, level: int, start: int, count: int) -> list[bytes]:
        """The hashes of ``level`` at ``start`` .. ``start + count - 1``, within one tile: from
        the tile if it was cut, else from Redis (a hash of a level above 0 whose tile below
        was not cut yet is computed from the 256 hashes below it). ValueError past the tree."""
        index, offset = divmod(start, WIDTH)
        if offset + count > WIDTH:
            raise ValueError(f"hashes {start}..{start + count - 1} span two tiles")
        reply = self._read(
            keys=[self.tiled_key, self.level_key(level)],
            args=[_argument(level=level, start=start, count=count)],
        )
        if start < int(reply[0]):
            return self._full_tile(level, index)[offset : offset + count]
        found = [bytes(h) for h in reply[1:]]
        if len(found) < count and level == 0:
            raise ValueError(f"leaves {start}..{start + count - 1} are not all in the tree")
        for missing in range(start + len(found), start + count):
            found.append(merkle.root(self.hashes(level - 1, missing * WIDTH, WIDTH)))
        return found

    def _full_tile(self, level: int | str, index: int) -> list[bytes]:
        path = tiles.tile_path(level, index)
        found = self._cache.get(path)
        if found is None:
            data = self.blobs.get(path) if self.blobs is not None else None
            if data is None:
                raise TileMissing(f"{path} was cut but is not in the blob store")
            if level == tiles.ENTRIES:
                found = tiles.parse_entry_bundle(data)
            else:
                found = tiles.tile_hashes(data)
            if len(found) != WIDTH:
                raise TileMissing(f"{path} holds {len(found)} of 256 entries")
            if level != tiles.ENTRIES:  # bundles are 5x a tile, and only an inclusion reads one
                self._cache.put(path, found)
        return found

    def root(self, size: int) -> bytes:
        return tiles.tree_root(self.hashes, size)

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return tiles.inclusion_proof(self.hashes, size, index)

    def consistency(self, old: int, new: int) -> list[bytes]:
        return tiles.consistency_proof(self.hashes, new, old)

    # -- tiles -----------------------------------------------------------------------------------

    def heads(self, start: int, count: int) -> list[bytes]:
        """The leaves' data at ``start`` .. ``start + count - 1``, within one bundle."""
        index, offset = divmod(start, WIDTH)
        if start < self.tiled(0):
            return self._full_tile(tiles.ENTRIES, index)[offset : offset + count]
        indices = [str(i) for i in range(start, start + count)]
        found = self.redis.hmget(self.edge_key, indices)
        if any(head is None for head in found):
            if start < self.tiled(0):  # cut meanwhile: its heads are in its bundle now
                return self.heads(start, count)
            self._fill_edge_from_games()  # a log written before tiles
            found = self.redis.hmget(self.edge_key, indices)
            if any(head is None for head in found):
                raise ValueError(f"leaves {start}..{start + count - 1} are not all in the tree")
        return [bytes(head) if isinstance(head, bytes) else head.encode() for head in found]

    def _fill_edge_from_games(self) -> None:
        """Keep the heads of the leaves not tiled yet in ``:edge`` from ``:games`` (a log
        written before tiles has none there): one pass over the games, once."""
        tiled = self.tiled(0)
        heads: dict[str, str] = {}
        for _game, record in self.redis.hscan_iter(self.games_key, count=1000):
            found = json.loads(_text(record))
            if int(found["index"]) >= tiled and "head" in found:
                heads[str(int(found["index"]))] = found["head"]
            if len(heads) >= 1000:
                self._fill_edge(keys=[self.tiled_key, self.edge_key], args=[_argument(heads=heads)])
                heads = {}
        if heads:
            self._fill_edge(keys=[self.tiled_key, self.edge_key], args=[_argument(heads=heads)])

    def tile(self, level: int | str, index: int, width: int | None, size: int) -> bytes | None:
        """The bytes of ``tile/<level>/<index>[.p/<width>]`` in a tree of ``size`` (an entry
        bundle for level ``ENTRIES``); None if that tree has no such tile."""
        if not tiles.tile_exists(level, index, width, size):
            return None
        count = WIDTH if width is None else width
        if level == tiles.ENTRIES:
            return tiles.entry_bundle(self.heads(index * WIDTH, count))
        return b"".join(self.hashes(int(level), index * WIDTH, count))

    def cut_tiles(self, upto: int, most: int | None = None) -> int:
        """Write every full tile of the tree's first ``upto`` leaves that is still in Redis to
        the blob store, then remove it from Redis; how many were cut (by this call). At most
        ``most`` (None: all), so that a log written before tiles is moved out a part at a
        time, in the requests that sign checkpoints."""
        if self.blobs is None:
            return 0
        cut, level = 0, 0
        while tiles.hashes_below(level, upto) >= WIDTH and (most is None or cut < most):
            while most is None or cut < most:
                tiled = self.tiled(level)
                if tiled + WIDTH > tiles.hashes_below(level, upto):
                    break
                reply = self._read(
                    keys=[self.tiled_key, self.level_key(level)],
                    args=[_argument(level=level, start=tiled, count=WIDTH)],
                )
                hashes = [bytes(h) for h in reply[1:]]
                if int(reply[0]) != tiled:
                    continue  # another cutter moved on: look again
                if len(hashes) < WIDTH:
                    break  # the tile below is not cut yet (cut by its own cutter)
                games = self._write_tile(level, tiled // WIDTH, hashes)
                root = merkle.root(hashes)
                keys = [
                    self.tiled_key,
                    self.level_key(level),
                    self.level_key(level + 1),
                    self.edge_key,
                    self.games_key,
                ]
                tile = _argument(level=level, tiled=tiled, games=games)
                cut += int(self._commit(keys=keys, args=[tile, root]))
            level += 1
        if cut:
            self._check_edge()
        return cut

    def _write_tile(self, level: int, index: int, hashes: list[bytes]) -> list[str]:
        """Put the tile (and for level 0 its bundle); the game ids of its leaves (level 0)."""
        assert self.blobs is not None
        games = []
        if level == 0:
            heads = self.heads(index * WIDTH, WIDTH)
            for i, (head, leaf_hash) in enumerate(zip(heads, hashes, strict=True)):
                if merkle.leaf_hash(head) != leaf_hash:
                    raise ValueError(f"leaf {index * WIDTH + i}'s head does not hash to its leaf")
                games.append(_game_id(head))
            self.blobs.put(tiles.tile_path(tiles.ENTRIES, index), tiles.entry_bundle(heads))
        self.blobs.put(tiles.tile_path(level, index), b"".join(hashes))
        return games

    # -- the static mirror -------------------------------------------------------------------

    def mirror(self, size: int, note: str) -> bool:
        """Put the tree of ``size`` in the blob store as a static log mirror: its partial tiles
        and bundles, then the signed checkpoint ``note`` (of that size) as ``checkpoint``; then
        delete the partial tiles whose full tile is stored. Whether it was put: not if the
        store holds this note or a larger tree's already, if a full tile of ``size`` is still
        in Redis (cut over the next checkpoints), or if another process is mirroring now.
        BlobConflict if the store holds a tile or a checkpoint of another log.
        ``size`` must be one whose replicas hold it (a signed one), like a cut's."""
        if self.blobs is None:
            return False
        digest = hashlib.sha256(note.encode()).hexdigest()
        if not self._newer(size, digest) or not self._all_cut(size):  # one read, most often
            return False
        lock, owner = self._key("mirroring"), uuid.uuid4().hex
        if not self.redis.set(lock, owner, nx=True, px=MIRROR_LOCK_MS):
            return False
        try:
            if not self._newer(size, digest):  # another process put it meanwhile
                return False
            self._check_stored_checkpoint(size, note)
            edge = tiles.partial_tiles(size)
            paths = [tiles.tile_path(level, index, width) for level, index, width in edge]
            if paths:  # recorded first: a crash after a put still leaves it to delete
                self.redis.sadd(self.partials_key, *paths)
            for (level, index, width), path in zip(edge, paths, strict=True):
                data = self.tile(level, index, width, size)
                assert data is not None  # partial_tiles names only tiles of the tree
                self.blobs.put(path, data)
            self.blobs.replace(tiles.CHECKPOINT, note.encode())
            self.redis.hset(self.published_key, mapping={"stored": size, "stored-note": digest})
            self._delete_partials()
        finally:
            self._unlock(keys=[lock], args=[_argument(owner=owner)])
        return True

    def _check_stored_checkpoint(self, size: int, note: str) -> None:
        """BlobConflict unless the store's checkpoint (if any) is this log's, at ``size`` or
        before: its origin ``note``'s, its root this tree's at its size. Another deployment's
        log sharing the store would otherwise have its checkpoint replaced by this one's, and
        the copy's readers would see one origin sign two trees that do not agree."""
        assert self.blobs is not None
        stored = self.blobs.get(tiles.CHECKPOINT)
        if stored is None:
            return
        try:
            theirs = Checkpoint.parse(Note.parse(stored.decode()).text)
        except (NoteError, UnicodeDecodeError):
            raise BlobConflict(f"{tiles.CHECKPOINT} (not a signed checkpoint)") from None
        origin = note.split("\n", 1)[0]
        if theirs.origin != origin:
            raise BlobConflict(f"{tiles.CHECKPOINT} (another log's: {theirs.origin!r})")
        if theirs.size > size:
            raise BlobConflict(
                f"{tiles.CHECKPOINT} (a tree of {theirs.size} leaves, past this one's {size}: "
                "after a restore, `hearts archive prune-tiles`)"
            )
        if theirs.root != self.root(theirs.size):
            raise BlobConflict(
                f"{tiles.CHECKPOINT} (a tree of {theirs.size} leaves with another root: "
                "another log's, under the same origin)"
            )

    def _all_cut(self, size: int) -> bool:
        """Whether every full tile of the tree of ``size`` is in the blob store."""
        level = 0
        while (below := tiles.hashes_below(level, size)) >= WIDTH:
            if self.tiled(level) < below - below % WIDTH:
                return False
            level += 1
        return True

    def _newer(self, size: int, digest: str) -> bool:
        """Whether the note of ``size`` (SHA-256 ``digest``) is newer than the store's: a larger
        tree, or the same with other cosignatures."""
        stored, stored_note = self.redis.hmget(self.published_key, ["stored", "stored-note"])
        if stored is None:
            return True
        return size > int(stored) or (size == int(stored) and _text(stored_note) != digest)

    def _delete_partials(self) -> None:
        """Delete from the blob store the partial tiles whose full tile is stored."""
        for raw in self.redis.smembers(self.partials_key):
            path = _text(raw)
            level, index, _width = tiles.parse_tile_path(path)
            if self.tiled(0 if level == tiles.ENTRIES else int(level)) >= (index + 1) * WIDTH:
                assert self.blobs is not None
                self.blobs.delete(path)
                self.redis.srem(self.partials_key, path)

    def tiles_past_tree(self) -> list[str]:
        """The blob store's tiles and bundles whose leaves reach past this tree's size: after a
        restore of Redis from a copy older than the archive's, the tiles the lost future cut,
        which the restored log would cut again over other games (a BlobConflict). Nothing of
        the tree's own: its tiles never reach past its size."""
        if self.blobs is None:
            return []
        size, past = self.size(), []
        for path in self.blobs.names("tile/"):
            try:
                level, index, width = tiles.parse_tile_path(path)
            except tiles.TileError:
                continue  # not a tile: not the log's to judge
            height = 0 if level == tiles.ENTRIES else int(level)
            reach = (index * WIDTH + (WIDTH if width is None else width)) * WIDTH**height
            if reach > size:
                past.append(path)
        return sorted(past)

    def forget_tiles_past_tree(self) -> list[str]:
        """Delete :meth:`tiles_past_tree` from the blob store (and the store's checkpoint, if
        it is of a larger tree); what was deleted. For an operator after a restore only: run
        on a store that another log shares, it would delete that log's tiles."""
        past = self.tiles_past_tree()
        assert self.blobs is not None or not past
        for path in past:
            self.blobs.delete(path)  # type: ignore[union-attr]
        note = self.blobs.get(tiles.CHECKPOINT) if self.blobs is not None else None
        if note is not None and _checkpoint_size(note) > self.size():
            self.blobs.delete(tiles.CHECKPOINT)  # type: ignore[union-attr]
            self.redis.hdel(self.published_key, "stored", "stored-note")
            past.append(tiles.CHECKPOINT)
        self._cache = _TileCache(self._cache.capacity)
        return past

    def stored_size(self) -> int | None:
        """The size of the checkpoint in the blob store (None: none was put there)."""
        stored = self.redis.hget(self.published_key, "stored")
        return None if stored is None else int(stored)

    def _check_edge(self) -> None:
        """After a cut of a log written before tiles: its right edge's heads into ``:edge``."""
        untiled = self.redis.llen(self.leaves_key)
        if self.redis.hlen(self.edge_key) < untiled:
            self._fill_edge_from_games()

    # -- replicas and cosignatures ---------------------------------------------------------------

    def replicas_holding(self, size: int, wanted: int, timeout_ms: int) -> int:
        """How many replicas (up to ``wanted``) hold the tree's first ``size`` leaves and all
        before: a fence key written on the slot's master, then WAIT on the same connection
        (WAIT counts its own connection's writes: see RedisEventStore.await_replicas)."""
        return fence_and_wait(self.redis, self._key("fence"), size, wanted, timeout_ms)

    def add_cosignature(self, size: int, witness: str, line: str) -> None:
        cosigned = self._key("cosigned")
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(self.cosig_key(size), witness, line)
        pipe.zadd(cosigned, {str(size): size})
        pipe.zrange(cosigned, 0, -COSIGNED_SIZES_KEPT - 1)  # the oldest beyond the bound
        old = [_text(found) for found in pipe.execute()[2]]
        if old:  # a crash here leaves them for the next cosignature to drop
            self.redis.delete(*(self.cosig_key(int(found)) for found in old))
            self.redis.zrem(cosigned, *old)

    def cosignatures(self, size: int) -> list[str]:
        found = self.redis.hgetall(self.cosig_key(size))
        return [_text(found[name]) for name in sorted(found)]
