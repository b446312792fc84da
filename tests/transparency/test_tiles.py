"""The public log as tiles (c2sp.org/tlog-tiles): paths and bundles as the spec writes them,
proofs from tiles equal to the merkle module's, full tiles moved out of Redis into the blob
store, served by the API, and a log written before tiles (Redis' old layout) proving the same
after: its checkpoint byte for byte, its proofs, the witness and hearts-verify."""

from __future__ import annotations

import base64
import functools
import hashlib
import json

import pytest
import redis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hearts_client import merkle, tiles
from hearts_client import verify as hv
from hearts_client.note import COSIGNATURE, Checkpoint, Head, Note, Signer, Verifier
from hearts_client.witness import witness_once
from hypothesis import given, settings
from hypothesis import strategies as st

from service.api.factory import create_app
from service.settings import Settings
from service.store.blobs import BlobStoreError, MemoryBlobStore
from service.store.game_tree import GameTree
from tests.api.helpers import Hearts
from tests.transparency.test_api import finished_games, project
from tests.transparency.test_witness import transport

ORIGIN = "hearts.localhost/log"

# The append script of the log before tiles, as it was (service/store/game_tree.py before
# c2sp.org/tlog-tiles): every leaf hash in :leaves, every head in :games, nothing else.
_OLD_APPEND_LUA = """
local known = redis.call('HGET', KEYS[2], ARGV[1])
if known then return {0, known} end
local size = redis.call('RPUSH', KEYS[1], ARGV[2])
local record = cjson.encode({index = size - 1, head = ARGV[3]})
redis.call('HSET', KEYS[2], ARGV[1], record)
return {1, record}
"""

# The tiled log's append and cut scripts as they were before they took one JSON argument (issue
# 35: positional ARGV). A log they wrote must be stored byte for byte as the JSON scripts store
# it, and read the same.
_POSITIONAL_APPEND_LUA = """
local known = redis.call('HGET', KEYS[2], ARGV[1])
if known then return {0, known} end
local tiled = tonumber(redis.call('HGET', KEYS[3], '0') or '0')
local index = tiled + redis.call('RPUSH', KEYS[1], ARGV[2]) - 1
local record = cjson.encode({index = index, head = ARGV[3]})
redis.call('HSET', KEYS[2], ARGV[1], record)
redis.call('HSET', KEYS[4], string.format('%d', index), ARGV[3])
return {1, record}
"""
_POSITIONAL_COMMIT_LUA = """
local tiled = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tiled ~= tonumber(ARGV[2]) or redis.call('LLEN', KEYS[2]) < 256 then return 0 end
redis.call('LTRIM', KEYS[2], 256, -1)
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d', tiled + 256))
redis.call('RPUSH', KEYS[3], ARGV[3])
if ARGV[1] == '0' then
  for i = tiled, tiled + 255 do redis.call('HDEL', KEYS[4], string.format('%d', i)) end
  for k = 4, #ARGV do
    local record = redis.call('HGET', KEYS[5], ARGV[k])
    if record and cjson.decode(record)['index'] == tiled + k - 4 then
      redis.call('HSET', KEYS[5], ARGV[k], cjson.encode({index = tiled + k - 4}))
    end
  end
end
return 1
"""


def head(i: int) -> str:
    """A finished game's head, made up: leaf ``i``'s data."""
    return Head(ORIGIN, f"g{i:020x}", 10 + i % 7, hashlib.sha256(b"%d" % i).hexdigest()).text()


def write_old_log(redis, prefix: str, start: int, count: int) -> list[bytes]:
    """Leaves start .. start + count - 1 appended as the log before tiles did; their hashes."""
    old = redis.register_script(_OLD_APPEND_LUA)
    keys = [f"{prefix}:{{tlog}}:leaves", f"{prefix}:{{tlog}}:games"]
    hashes = []
    for i in range(start, start + count):
        leaf = merkle.leaf_hash(head(i).encode())
        old(keys=keys, args=[f"g{i:020x}", leaf, head(i)])
        hashes.append(leaf)
    return hashes


def write_old_log_fast(redis, prefix: str, count: int) -> list[bytes]:
    """The same layout as write_old_log, its writes pipelined (tens of thousands of leaves)."""
    hashes = [merkle.leaf_hash(head(i).encode()) for i in range(count)]
    for lo in range(0, count, 5000):
        pipe = redis.pipeline(transaction=False)
        pipe.rpush(f"{prefix}:{{tlog}}:leaves", *hashes[lo : lo + 5000])
        records = {
            f"g{i:020x}": json.dumps({"index": i, "head": head(i)})
            for i in range(lo, min(lo + 5000, count))
        }
        pipe.hset(f"{prefix}:{{tlog}}:games", mapping=records)
        pipe.execute()
    return hashes


# -- paths and bundles ----------------------------------------------------------------------------


def test_tile_paths_as_the_spec_writes_them() -> None:
    assert tiles.index_path(1234067) == "x001/x234/067"
    assert tiles.index_path(0) == "000"
    assert tiles.index_path(1000) == "x001/000"
    assert tiles.tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tiles.tile_path(2, 5, 17) == "tile/2/005.p/17"
    assert tiles.tile_path(tiles.ENTRIES, 1234, 255) == "tile/entries/x001/234.p/255"
    for level, index, width in [(0, 0, None), (63, 10**9, 1), (tiles.ENTRIES, 999, None)]:
        path = tiles.tile_path(level, index, width)
        assert tiles.parse_tile_path(path) == (level, index, width)


@pytest.mark.parametrize(
    "path",
    [
        "tile/00/000",  # a leading zero
        "tile/64/000",  # past level 63
        "tile/-1/000",
        "tile/0/1234",  # not 3 digits
        "tile/0/x1/234",
        "tile/0/x000/123",  # the index 123, not its path
        "tile/0/001/234",  # all but the last element start with x
        "tile/0/x001",
        "tile/0/000.p/0",
        "tile/0/000.p/256",
        "tile/0/000.p/017",
        "tile/0/000.p",
        "tile/0/000/",
        "tile/entries",
        "tile/Entries/000",
        "tiles/0/000",
        "tile/0/+12",
        "tile/0/١٢٣",  # digits of another script
    ],
)
def test_paths_that_are_not_a_tiles_are_refused(path: str) -> None:
    with pytest.raises(tiles.TileError):
        tiles.parse_tile_path(path)


def test_which_tiles_a_tree_has() -> None:
    # The spec's example: a tree of 70,000 has 273 full level-0 tiles and one of width 112, one
    # full level-1 tile and one of width 17, one level-2 tile of width 1.
    size = 70_000
    assert tiles.tile_exists(0, 272, None, size) and not tiles.tile_exists(0, 273, None, size)
    assert tiles.tile_exists(0, 273, 112, size) and not tiles.tile_exists(0, 273, 113, size)
    assert tiles.tile_exists(1, 0, None, size) and not tiles.tile_exists(1, 1, None, size)
    assert tiles.tile_exists(1, 1, 17, size) and not tiles.tile_exists(1, 1, 18, size)
    assert tiles.tile_exists(2, 0, 1, size) and not tiles.tile_exists(2, 0, 2, size)
    assert not tiles.tile_exists(3, 0, 1, size)
    # ...and a tree of 256: a full level-0 tile and a level-1 tile of width 1.
    assert tiles.tile_exists(0, 0, None, 256) and tiles.tile_exists(1, 0, 1, 256)
    assert tiles.tile_exists(tiles.ENTRIES, 0, None, 256)
    assert not tiles.tile_exists(tiles.ENTRIES, 1, 1, 256)


def test_entry_bundles_round_trip_and_refuse_a_cut() -> None:
    entries = [b"", b"a", head(1).encode(), b"x" * 65535]
    bundle = tiles.entry_bundle(entries)
    assert bundle[:4] == b"\x00\x00\x00\x01"
    assert tiles.parse_entry_bundle(bundle) == entries
    for cut in (1, 3, len(bundle) - 1):
        with pytest.raises(tiles.TileError):
            tiles.parse_entry_bundle(bundle[:cut])
    with pytest.raises(ValueError):
        tiles.entry_bundle([b"x" * 65536])


# -- proofs from tiles ----------------------------------------------------------------------------

TREE = 70_000  # two levels of full tiles and a third partial one


@functools.cache
def levels() -> list[list[bytes]]:
    """The hashes of every level of a tree of TREE leaves, made from the leaves here."""
    found = [[merkle.leaf_hash(b"%d" % i) for i in range(TREE)]]
    while len(found[-1]) >= tiles.TILE_WIDTH:
        below = found[-1]
        found.append([merkle.root(below[j : j + 256]) for j in range(0, len(below) - 255, 256)])
    return found


def read_levels(level: int, start: int, count: int) -> list[bytes]:
    return levels()[level][start : start + count]


def check_proofs(size: int, index: int, old: int) -> None:
    leaves = levels()[0][:size]
    assert tiles.tree_root(read_levels, size) == merkle.root(leaves)
    assert tiles.inclusion_proof(read_levels, size, index) == merkle.inclusion_proof(leaves, index)
    assert tiles.consistency_proof(read_levels, size, old) == merkle.consistency_proof(leaves, old)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_proofs_from_tiles_are_the_merkle_modules(data) -> None:
    size = data.draw(st.integers(1, 1200), label="size")
    check_proofs(size, data.draw(st.integers(0, size - 1)), data.draw(st.integers(0, size)))


@pytest.mark.parametrize(
    ("size", "index", "old"),
    [(65_536, 65_535, 256), (65_537, 65_536, 65_536), (TREE, 12_345, 65_537), (TREE, 0, 1)],
)
def test_proofs_from_three_levels_of_tiles_are_the_merkle_modules(size, index, old) -> None:
    check_proofs(size, index, old)


def served_tiles(size: int) -> dict[str, bytes]:
    """Every tile a tree of ``size`` has, as a static host would serve them."""
    served = {}
    for level, hashes in enumerate(levels()):
        count = tiles.hashes_below(level, size)
        for index in range(0, (count + 255) // 256):
            width = min(256, count - index * 256)
            path = tiles.tile_path(level, index, None if width == 256 else width)
            served[path] = b"".join(hashes[index * 256 : index * 256 + width])
    return served


@pytest.mark.parametrize("size", [1, 255, 256, 257, 65_536, 65_537, TREE])
def test_a_client_makes_proofs_from_served_tiles(size: int) -> None:
    served = served_tiles(size)
    fetched = []

    def fetch(path: str) -> bytes:
        fetched.append(path)
        return served[path]

    read = tiles.tile_reader(fetch, size)
    root = tiles.tree_root(read, size)
    assert root == merkle.root(levels()[0][:size])
    for index in {0, size // 3, size - 1}:
        proof = tiles.inclusion_proof(read, size, index)
        merkle.verify_inclusion(levels()[0][index], index, size, proof, root)
    assert len(set(fetched)) == len(fetched)  # each tile fetched once
    assert len(fetched) <= 3 * (len(levels()) + 2)  # a few tiles per level, not the tree


# -- the tree in Redis and the blob store ---------------------------------------------------------


def tree_keys(redis, prefix: str) -> dict[str, int]:
    return {
        "leaves": redis.llen(f"{prefix}:{{tlog}}:leaves"),
        "edge": redis.hlen(f"{prefix}:{{tlog}}:edge"),
        "tiled": int(redis.hget(f"{prefix}:{{tlog}}:tiled", "0") or 0),
    }


def stored(redis, prefix: str) -> dict[str, object]:
    """Every key of the tree under ``prefix``, by name, as Redis holds it (raw bytes)."""
    found: dict[str, object] = {}
    for key in redis.scan_iter(match=f"{prefix}:{{tlog}}:*"):
        name = key.decode().split(":{tlog}:", 1)[1]
        kind = redis.type(key)
        found[name] = redis.lrange(key, 0, -1) if kind == b"list" else redis.hgetall(key)
    return found


def test_json_scripts_store_what_the_positional_scripts_stored(redis_client, key_prefix) -> None:
    tree = GameTree(redis_client, key_prefix, MemoryBlobStore())
    old = f"{key_prefix}-positional"
    append = redis_client.register_script(_POSITIONAL_APPEND_LUA)
    commit = redis_client.register_script(_POSITIONAL_COMMIT_LUA)
    leaves, games, tiled, edge = (
        f"{old}:{{tlog}}:{k}" for k in ("leaves", "games", "tiled", "edge")
    )
    for i in range(300):
        added = tree.append(f"g{i:020x}", head(i))[0]
        append(keys=[leaves, games, tiled, edge], args=[added.game_id, added.hash, added.head])
    tree.append(f"g{7:020x}", head(7))  # again: nothing written
    assert tree.cut_tiles(300) == 1
    hashes = [merkle.leaf_hash(head(i).encode()) for i in range(256)]
    ids = [f"g{i:020x}" for i in range(256)]
    keys = [tiled, leaves, f"{old}:{{tlog}}:level:1", edge, games]
    assert commit(keys=keys, args=[0, 0, merkle.root(hashes), *ids]) == 1
    written = stored(redis_client, key_prefix)
    assert set(written) == {"leaves", "games", "tiled", "edge", "level:1"}
    assert written == stored(redis_client, old)
    assert written["level:1"] == [merkle.root(hashes)]  # the root's 32 raw bytes
    # And a cut the positional script made reads the same through the JSON scripts.
    positional = GameTree(redis_client, old, tree.blobs)
    assert positional.root(300) == tree.root(300)
    assert positional.leaf(f"g{299:020x}") == tree.leaf(f"g{299:020x}")


def test_cutting_moves_full_tiles_from_redis_to_the_blob_store(redis_client, key_prefix) -> None:
    blobs = MemoryBlobStore()
    tree = GameTree(redis_client, key_prefix, blobs)
    hashes = [tree.append(f"g{i:020x}", head(i))[0].hash for i in range(600)]
    assert tree.append("g" + "0" * 20, head(0)) == (tree.leaf("g" + "0" * 20), False)
    assert tree.cut_tiles(300) == 1  # only tiles within the size asked
    assert tree.cut_tiles(600, most=1) == 1  # at most as many as asked
    assert tree.cut_tiles(600) == 0  # nothing left to cut
    assert tree_keys(redis_client, key_prefix) == {"leaves": 88, "edge": 88, "tiled": 512}
    assert sorted(blobs.names()) == [
        "tile/0/000",
        "tile/0/001",
        "tile/entries/000",
        "tile/entries/001",
    ]
    assert blobs.get("tile/0/001") == b"".join(hashes[256:512])
    bundle = tiles.parse_entry_bundle(blobs.get("tile/entries/000"))
    assert bundle == [head(i).encode() for i in range(256)]
    # The level above: each cut tile's root, in Redis until 256 of them make a tile.
    assert redis_client.lrange(f"{key_prefix}:{{tlog}}:level:1", 0, -1) == [
        merkle.root(hashes[:256]),
        merkle.root(hashes[256:512]),
    ]
    # Appends go on at the right index; proofs over tiles and Redis are the merkle module's.
    assert tree.append("g-new", head(600))[0].index == 600
    hashes.append(merkle.leaf_hash(head(600).encode()))
    for size in (1, 255, 256, 257, 512, 513, 601):
        assert tree.root(size) == merkle.root(hashes[:size])
        for index in {0, size // 2, size - 1}:
            assert tree.inclusion(index, size) == merkle.inclusion_proof(hashes[:size], index)
        for old in {0, 1, min(256, size), size // 2, size}:
            assert tree.consistency(old, size) == merkle.consistency_proof(hashes[:size], old)
    # A tiled game's index record keeps no head (its bundle has it); an untiled one does.
    records = redis_client.hmget(f"{key_prefix}:{{tlog}}:games", [f"g{5:020x}", f"g{550:020x}"])
    assert [set(json.loads(r)) for r in records] == [{"index"}, {"index", "head"}]
    leaf = tree.leaf(f"g{5:020x}")
    assert (leaf.index, leaf.head) == (5, head(5))
    assert tree.leaf(f"g{550:020x}").head == head(550)


def test_tiles_go_to_each_archive_backend(blob_store, key_prefix) -> None:
    import fakeredis

    tree = GameTree(fakeredis.FakeRedis(), key_prefix, blob_store)
    for i in range(300):
        tree.append(f"g{i:020x}", head(i))
    assert tree.cut_tiles(300) == 1
    assert sorted(blob_store.names("tile/")) == ["tile/0/000", "tile/entries/000"]
    again = GameTree(tree.redis, key_prefix, blob_store)  # another process: nothing cached
    assert again.heads(0, 3) == [head(i).encode() for i in range(3)]
    assert again.root(300) == tree.root(300)


def test_a_crash_between_writing_a_tile_and_trimming_redis_loses_nothing(key_prefix) -> None:
    import fakeredis

    blobs = MemoryBlobStore()
    tree = GameTree(fakeredis.FakeRedis(), key_prefix, blobs)
    for i in range(256):
        tree.append(f"g{i:020x}", head(i))
    root = tree.root(256)

    def crash(*args, **kwargs):
        raise RuntimeError("killed before the commit")

    committing, tree._commit = tree._commit, crash
    with pytest.raises(RuntimeError):
        tree.cut_tiles(256)
    assert blobs.exists("tile/0/000")  # written, and Redis still whole
    assert tree_keys(tree.redis, key_prefix) == {"leaves": 256, "edge": 256, "tiled": 0}
    assert tree.root(256) == root
    tree._commit = committing
    assert tree.cut_tiles(256) == 1  # the same bytes again: a no-op put, then the commit
    assert tree.root(256) == root


class CountingStore(MemoryBlobStore):
    def __init__(self, objects: dict[str, bytes]) -> None:
        super().__init__()
        self._objects = dict(objects)
        self.gets = 0

    def get(self, name: str) -> bytes | None:
        self.gets += 1
        return super().get(name)


def test_a_large_log_written_before_tiles_is_cut_and_proves_in_log_reads(
    redis_server, key_prefix
) -> None:
    # On a real redis-server only: fakeredis takes a minute over these 65,836 leaves.
    redis_client = redis.Redis.from_url(redis_server)
    size = 65_536 + 300  # a full level-1 tile, and a level-2 hash
    hashes = write_old_log_fast(redis_client, key_prefix, size)
    blobs = MemoryBlobStore()
    tree = GameTree(redis_client, key_prefix, blobs)
    assert tree.size() == size
    root = merkle.root(hashes)
    assert tree.root(size) == root  # before any cut: all from Redis, as before tiles
    assert tree.cut_tiles(size) == 257 + 1
    assert tree_keys(redis_client, key_prefix) == {"leaves": 44, "edge": 44, "tiled": 65_792}
    assert blobs.get("tile/1/000") == b"".join(
        merkle.root(hashes[j : j + 256]) for j in range(0, 65_536, 256)
    )
    assert tree.heads(65_800, 2) == [head(65_800).encode(), head(65_801).encode()]
    counting = CountingStore(blobs._objects)
    fresh = GameTree(redis_client, key_prefix, counting)  # no tile cached
    assert fresh.root(size) == root
    for index in (0, 4_321, 65_535, 65_536, size - 1):
        proof = fresh.inclusion(index, size)
        merkle.verify_inclusion(hashes[index], index, size, proof, root)
    for old in (1, 256, 65_536, 65_537):
        proof = fresh.consistency(old, size)
        merkle.verify_consistency(old, size, merkle.root(hashes[:old]), root, proof)
    # Twelve proofs and a root read a few dozen tiles (each once: cached), not 65,836 leaves.
    assert counting.gets <= 40
    redis_client.close()


# -- across the change: the API, the witness, hearts-verify ---------------------------------------


@pytest.fixture
def witness() -> Signer:
    return Signer("witness.test/w1", Ed25519PrivateKey.generate(), COSIGNATURE)


def test_a_log_written_before_tiles_proves_the_same_after(
    redis_client, key_prefix, tmp_path, witness
) -> None:
    hashes = write_old_log(redis_client, key_prefix, 0, 600)  # Redis' old layout
    settings_ = Settings(key_prefix=key_prefix, log_witnesses=witness.verifier.vkey())
    app = create_app(settings_, redis=redis_client)
    try:
        client = app.test_client()
        log = app.extensions["hearts.log"]
        log_key = Verifier.parse(log.vkey)
        state = tmp_path / "witness.json"

        # The checkpoint is the one the log before tiles signed, byte for byte (Ed25519 is
        # deterministic): the root of every leaf in Redis.
        before = Checkpoint(ORIGIN, 600, merkle.root(hashes)).text()
        assert witness_once(*transport(app), state, witness, log_key).size == 600
        served = client.get("/api/v1/log/checkpoint?size=600").get_data(as_text=True)
        assert served.startswith(before + "\n" + log.signer.sign(before))
        assert Note.parse(served).cosigners([witness.verifier]) == [witness.name]
        # Signing it cut the full tiles out of Redis.
        assert tree_keys(redis_client, key_prefix) == {"leaves": 88, "edge": 88, "tiled": 512}

        answer = client.get(f"/api/v1/log/games/g{5:020x}").get_json()
        assert answer["head"] == head(5) and answer["index"] == 5
        proof = [base64.b64decode(p) for p in answer["proof"]]
        assert proof == merkle.inclusion_proof(hashes, 5)

        # It grows (new code), the witness follows (a consistency proof from tiles).
        for i in range(600, 800):
            log.tree.append(f"g{i:020x}", head(i))
        hashes += [merkle.leaf_hash(head(i).encode()) for i in range(600, 800)]
        assert witness_once(*transport(app), state, witness, log_key).size == 800
        consistency = client.get("/api/v1/log/consistency?old=600&new=800").get_json()
        merkle.verify_consistency(
            600,
            800,
            merkle.root(hashes[:600]),
            merkle.root(hashes),
            [base64.b64decode(p) for p in consistency["proof"]],
        )
        assert tree_keys(redis_client, key_prefix)["tiled"] == 768

        # The tiles, served: full, partial, entry bundles; a client proves from them alone.
        def tile(path: str):
            return client.get(f"/api/v1/log/{path}")

        full = tile("tile/0/001")
        assert full.status_code == 200 and full.mimetype == "application/octet-stream"
        assert full.data == b"".join(hashes[256:512])
        assert full.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert tile("tile/0/003.p/32").data == b"".join(hashes[768:800])
        assert tile("tile/0/003.p/5").data == b"".join(hashes[768:773])
        assert tile("tile/1/000.p/3").data == b"".join(
            merkle.root(hashes[j : j + 256]) for j in (0, 256, 512)
        )
        bundle = tiles.parse_entry_bundle(tile("tile/entries/002").data)
        assert bundle == [head(i).encode() for i in range(512, 768)]
        assert tiles.parse_entry_bundle(tile("tile/entries/003.p/2").data) == [
            head(768).encode(),
            head(769).encode(),
        ]
        read = tiles.tile_reader(lambda path: tile(path).data, 800)
        assert tiles.tree_root(read, 800) == merkle.root(hashes)
        assert tiles.inclusion_proof(read, 800, 5) == merkle.inclusion_proof(hashes, 5)
        for missing in (
            "tile/0/004",
            "tile/0/003",  # not full yet
            "tile/0/003.p/33",
            "tile/1/000",
            "tile/entries/003.p/33",
            "tile/0/x000/001",
            "tile/0/001.p/256",
            "tile/00/001",
            "tile/../checkpoint",
        ):
            response = tile(missing)
            assert response.status_code == 404, missing
            assert response.get_json()["type"].endswith("/tile-not-found")
    finally:
        app.extensions["hearts.bots_stop"]()


def test_hearts_verify_proves_a_game_in_a_cut_tile(redis_client, key_prefix, tmp_path) -> None:
    write_old_log(redis_client, key_prefix, 0, 300)
    app = create_app(Settings(key_prefix=key_prefix), redis=redis_client)
    try:
        client = app.test_client()
        (game_id,) = finished_games(Hearts(client), 1)
        project(app)  # the projector appends it: leaf 300
        log = app.extensions["hearts.log"]
        for i in range(301, 512):
            log.tree.append(f"g{i:020x}", head(i))
        answer = client.get(f"/api/v1/log/games/{game_id}").get_json()  # signs 512: cuts
        assert (answer["index"], answer["tree_size"]) == (300, 512)
        assert log.tree.tiled(0) == 512
        (tmp_path / "proof.json").write_text(json.dumps(answer))
        exported = client.get(f"/api/v1/games/{game_id}/export")
        assert exported.status_code == 200
        (tmp_path / "game.json").write_bytes(exported.data)
        status = hv.main(
            [
                str(tmp_path / "game.json"),
                "--log-key",
                log.vkey,
                "--proof",
                str(tmp_path / "proof.json"),
            ]
        )
        assert status == 0
    finally:
        app.extensions["hearts.bots_stop"]()


def test_a_tile_beyond_the_published_checkpoint_is_not_cached(key_prefix) -> None:
    import fakeredis

    settings_ = Settings(key_prefix=key_prefix, checkpoint_interval=3600.0)
    app = create_app(settings_, redis=fakeredis.FakeRedis())
    try:
        client = app.test_client()
        tree = app.extensions["hearts.log"].tree
        for i in range(300):
            tree.append(f"g{i:020x}", head(i))
        assert client.get("/api/v1/log/checkpoint").status_code == 200  # publishes 300
        for i in range(300, 520):
            tree.append(f"g{i:020x}", head(i))
        published = client.get("/api/v1/log/tile/0/001.p/44")  # within the 300 published
        assert published.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        # A full tile the tree has, but no checkpoint published yet: a failover could still
        # reorder its leaves, so no cache may keep it.
        beyond = client.get("/api/v1/log/tile/0/001")
        assert beyond.status_code == 200 and beyond.data == b"".join(
            merkle.leaf_hash(head(i).encode()) for i in range(256, 512)
        )
        assert beyond.headers["Cache-Control"] == "no-store"
        assert tree.tiled(0) == 256  # and it was not cut: only the published size is
    finally:
        app.extensions["hearts.bots_stop"]()


class DownStore(MemoryBlobStore):
    """A blob store that cannot be reached (until ``up``)."""

    def __init__(self) -> None:
        super().__init__()
        self.up = False
        self.tries = 0

    def put(self, name: str, data: bytes) -> None:
        self.tries += 1
        if not self.up:
            raise BlobStoreError("unreachable")
        super().put(name, data)


def test_checkpoints_are_signed_while_the_blob_store_is_down(key_prefix, caplog) -> None:
    import fakeredis

    app = create_app(Settings(key_prefix=key_prefix), redis=fakeredis.FakeRedis())
    try:
        client = app.test_client()
        log = app.extensions["hearts.log"]
        store = DownStore()
        log.tree.blobs = store
        hashes = [log.tree.append(f"g{i:020x}", head(i))[0].hash for i in range(300)]
        first = client.get("/api/v1/log/checkpoint")
        assert first.status_code == 200
        assert Checkpoint.parse(Note.parse(first.get_data(as_text=True)).text).root == (
            merkle.root(hashes)
        )
        assert "not cut" in caplog.text and store.tries == 1
        assert client.get("/api/v1/log/checkpoint").status_code == 200
        assert store.tries == 1  # not tried again at once: each try costs the store's timeouts
        assert log.tree.tiled(0) == 0  # everything still in Redis, and proving from there
        assert client.get(f"/api/v1/log/games/g{5:020x}").status_code == 200
        store.up, log._cut_after = True, 0.0  # the store is back, the pause is over
        assert client.get("/api/v1/log/checkpoint").status_code == 200
        assert log.tree.tiled(0) == 256
    finally:
        app.extensions["hearts.bots_stop"]()


def test_cutters_racing_cut_each_tile_once(redis_server, key_prefix) -> None:
    from concurrent.futures import ThreadPoolExecutor

    client = redis.Redis.from_url(redis_server)
    blobs = MemoryBlobStore()
    appender = GameTree(client, key_prefix)
    hashes = [appender.append(f"g{i:020x}", head(i))[0].hash for i in range(1000)]
    cutters = [GameTree(redis.Redis.from_url(redis_server), key_prefix, blobs) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        cut = sum(pool.map(lambda tree: tree.cut_tiles(1000), cutters))
    assert cut == 3  # each tile committed by one of them
    assert tree_keys(client, key_prefix) == {"leaves": 232, "edge": 232, "tiled": 768}
    assert client.llen(f"{key_prefix}:{{tlog}}:level:1") == 3
    assert cutters[0].root(1000) == merkle.root(hashes)
    assert sorted(blobs.names("tile/0/")) == ["tile/0/000", "tile/0/001", "tile/0/002"]
    for tree in [*cutters, appender]:
        tree.redis.close()
