"""The blob store as a complete static mirror of the public log (c2sp.org/tlog-tiles): a plain
copy of its ``checkpoint`` and ``tile/`` files, and nothing else, verifies the log's signature,
inclusion and consistency proofs with the hearts_client code, across a growth of the tree that
cuts a full tile and deletes the partial tiles it replaces; the witness's cosignature reaches
the copy; Redis keeps only what is not tiled yet."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hearts_client import merkle, tiles
from hearts_client.note import COSIGNATURE, Note, Signer, Verifier, open_checkpoint
from hearts_client.witness import witness_once

from service.api.factory import create_app
from service.app.transparency import DEFAULT_CHECKPOINT_INTERVAL
from service.settings import Settings
from service.store.blobs import BlobConflict, BlobStore, blob_store_from_url
from service.store.game_tree import GameTree
from tests.blob_helpers import archive_url
from tests.transparency.test_tiles import head
from tests.transparency.test_witness import transport


@pytest.fixture
def served(redis_client, key_prefix, blob_store):
    """The service, its public log signing every request's tree (as an app built in a test
    does) and keeping its tiles in an empty blob store of each backend (disk, S3)."""
    witness = Signer("witness.test/w1", Ed25519PrivateKey.generate(), COSIGNATURE)
    settings = Settings(key_prefix=key_prefix, log_witnesses=witness.verifier.vkey())
    app = create_app(settings, redis=redis_client)
    log = app.extensions["hearts.log"]
    log.tree.blobs = blob_store
    yield app, log, witness
    app.extensions["hearts.stop"]()


def grow(log, start: int, count: int) -> None:
    for i in range(start, start + count):
        log.tree.append(f"g{i:020x}", head(i))


def static_copy(store: BlobStore, where: Path) -> Path:
    """What a static host would serve: the store's ``checkpoint`` and ``tile/`` objects, as
    plain files in a directory."""
    for name in store.names():
        if name == tiles.CHECKPOINT or name.startswith("tile/"):
            path = where.joinpath(*name.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(store.get(name))
    return where


def files(root: Path) -> Callable[[str], bytes | None]:
    def fetch(path: str) -> bytes | None:
        found = root.joinpath(*path.split("/"))
        return found.read_bytes() if found.is_file() else None

    return fetch


def checkpoint_of(root: Path, log_key: Verifier):
    """The copy's checkpoint, its log signature checked: (note, checkpoint)."""
    return open_checkpoint((root / tiles.CHECKPOINT).read_text(), log_key)


def entry(fetch, size: int, index: int) -> bytes:
    """Leaf ``index``'s data from the copy's entry bundles (the partial one of the tree's width,
    else the full one)."""
    bundle, offset = divmod(index, tiles.TILE_WIDTH)
    width = min(tiles.TILE_WIDTH, size - bundle * tiles.TILE_WIDTH)
    data = fetch(tiles.tile_path(tiles.ENTRIES, bundle, None if width == 256 else width))
    if data is None:
        data = fetch(tiles.tile_path(tiles.ENTRIES, bundle))
    assert data is not None
    return tiles.parse_entry_bundle(data)[offset]


def check_inclusion(fetch, size: int, root: bytes, index: int) -> None:
    read = tiles.tile_reader(fetch, size)
    data = entry(fetch, size, index)
    assert data == head(index).encode()
    proof = tiles.inclusion_proof(read, size, index)
    merkle.verify_inclusion(merkle.leaf_hash(data), index, size, proof, root)


def test_a_copy_of_the_store_alone_verifies_the_log_as_it_grows(served, tmp_path):
    app, log, _ = served
    store = log.tree.blobs
    log_key = Verifier.parse(log.vkey)

    grow(log, 0, 100)
    log.checkpoint()  # published: its partial tiles, then the note, go to the store
    first = static_copy(store, tmp_path / "first")
    _, old = checkpoint_of(first, log_key)
    assert old.size == 100
    assert tiles.tree_root(tiles.tile_reader(files(first), 100), 100) == old.root
    for index in (0, 57, 99):
        check_inclusion(files(first), 100, old.root, index)

    grow(log, 100, 200)  # 300: tile 0 is full now, its partial tiles obsolete
    log.checkpoint()
    second = static_copy(store, tmp_path / "second")
    _, new = checkpoint_of(second, log_key)
    assert new.size == 300
    fetch = files(second)
    assert tiles.tree_root(tiles.tile_reader(fetch, 300), 300) == new.root
    for index in (0, 57, 255, 256, 299):
        check_inclusion(fetch, 300, new.root, index)
    proof = tiles.consistency_proof(tiles.tile_reader(fetch, 300), 300, 100)
    merkle.verify_consistency(100, 300, old.root, new.root, proof)
    # The old checkpoint's tree, from the new copy: its partial tiles were deleted once tile 0
    # was full, and the reader falls back on the full tile (as the spec lets a client).
    assert fetch("tile/0/000.p/100") is None and fetch("tile/entries/000.p/100") is None
    assert tiles.tree_root(tiles.tile_reader(fetch, 100), 100) == old.root

    # What the store holds of the log: full tiles, this tree's partial ones, the note.
    assert sorted(name for name in store.names() if name.startswith("tile/")) == [
        "tile/0/000",
        "tile/0/001.p/44",
        "tile/1/000.p/1",
        "tile/entries/000",
        "tile/entries/001.p/44",
    ]
    # ... and Redis: the leaves not tiled yet, their heads, the partial tiles to delete later.
    redis = log.tree.redis
    assert redis.llen(log.tree.leaves_key) == 44 and redis.hlen(log.tree.edge_key) == 44
    assert redis.scard(log.tree.partials_key) == 3
    # The store's copy answers as the API does.
    http = app.test_client()
    assert http.get("/api/v1/log/checkpoint").get_data() == fetch(tiles.CHECKPOINT)
    for path in ("tile/0/001.p/44", "tile/1/000.p/1", "tile/entries/001.p/44", "tile/0/000"):
        assert http.get(f"/api/v1/log/{path}").get_data() == fetch(path)


def test_the_store_keeps_the_newest_checkpoint_and_the_witness_cosignature(served, tmp_path):
    app, log, witness = served
    store = log.tree.blobs
    log_key = Verifier.parse(log.vkey)
    grow(log, 0, 20)
    assert log.checkpoint() == store.get(tiles.CHECKPOINT).decode()
    assert witness_once(*transport(app), tmp_path / "w.json", witness, log_key).size == 20
    cosigned = log.checkpoint()  # the next publication puts the cosigned note in the store
    assert store.get(tiles.CHECKPOINT).decode() == cosigned
    assert Note.parse(cosigned).cosigners([witness.verifier]) == [witness.name]
    # A tree signed on request at an older size never replaces the store's newer note.
    log.checkpoint(10)
    assert store.get(tiles.CHECKPOINT).decode() == cosigned
    assert not log.tree.mirror(10, log.checkpoint(10))
    assert log.tree.stored_size() == 20


def test_nothing_goes_to_the_store_until_every_full_tile_is_there(served):
    """A log written before tiles cuts 16 tiles a checkpoint: the store's note waits for all."""
    _, log, _ = served
    store = log.tree.blobs
    grow(log, 0, 300)
    log.tree.cut_tiles(300, most=0)  # as if nothing was cut yet
    assert log.tree.mirror(300, "note") is False
    assert store.get(tiles.CHECKPOINT) is None
    assert log.tree.cut_tiles(300) >= 1
    assert log.tree.mirror(300, log.checkpoint(300)) is True


def test_the_checkpoint_is_replaced_and_partial_tiles_deleted_on_each_backend(blob_store):
    """The two exceptions to write-once objects, both the public log's."""
    blob_store.replace(tiles.CHECKPOINT, b"size 1")
    blob_store.replace(tiles.CHECKPOINT, b"size 2")
    assert blob_store.get(tiles.CHECKPOINT) == b"size 2"
    with pytest.raises(BlobConflict):  # a put is still write-once
        blob_store.put(tiles.CHECKPOINT, b"size 3")
    blob_store.put("tile/0/000.p/3", b"x" * 96)
    blob_store.delete("tile/0/000.p/3")
    blob_store.delete("tile/0/000.p/4")  # not there: nothing to do
    assert blob_store.get("tile/0/000.p/3") is None
    assert sorted(blob_store.names()) == [tiles.CHECKPOINT]
    with pytest.raises(ValueError):
        blob_store.delete("../escape")


def test_a_store_holding_another_tree_is_not_mirrored_over(served, caplog):
    """A partial tile of other bytes under the name (another log wrote this store): the
    checkpoint is answered all the same, the store's copy is left alone, and it is logged."""
    _, log, _ = served
    grow(log, 0, 5)
    log.tree.blobs.put("tile/0/000.p/5", b"\0" * 160)
    assert Note.parse(log.checkpoint()).text.splitlines()[1] == "5"
    assert log.tree.blobs.get(tiles.CHECKPOINT) is None
    assert "holds another tile" in caplog.text


def test_two_logs_sharing_a_store_never_replace_each_others_checkpoint(
    served, redis_client, key_prefix, caplog
):
    """Two deployments' logs given one archive (docs/operations.md says not to): their partial
    tiles have other names, so only the checkpoint would tell. Neither replaces the other's,
    whether it has the same origin (a root that is not its own at the stored size), another,
    or a smaller tree; each is answered and logged. The log that owns the copy goes on."""
    _, first, _ = served
    store = first.tree.blobs
    grow(first, 0, 3)
    first.checkpoint()
    owned = store.get(tiles.CHECKPOINT)
    assert owned is not None

    def other_log(suffix: str, origin: str, games: int):
        settings = Settings(key_prefix=f"{key_prefix}-{suffix}", log_origin=origin)
        app = create_app(settings, redis=redis_client)
        log = app.extensions["hearts.log"]
        log.tree.blobs = store
        for i in range(games):
            log.tree.append(f"g{i:020x}", head(i + 1_000))
        return app, log

    cases = [
        ("same", "hearts.localhost/log", 5, "with another root"),
        ("small", "hearts.localhost/log", 2, "a tree of 3 leaves, past this one's 2"),
        ("named", "other.example/log", 7, "another log's: 'hearts.localhost/log'"),
    ]
    for suffix, origin, games, why in cases:
        caplog.clear()
        app, log = other_log(suffix, origin, games)
        try:
            text = Note.parse(log.checkpoint()).text.splitlines()
            assert text[:2] == [origin, str(games)]  # answered all the same
            assert store.get(tiles.CHECKPOINT) == owned
            assert "holds another tile or checkpoint at checkpoint" in caplog.text
            assert why in caplog.text
        finally:
            app.extensions["hearts.stop"]()

    grow(first, 3, 1)  # the log whose copy it is mirrors on
    first.checkpoint()
    assert Note.parse(store.get(tiles.CHECKPOINT).decode()).text.splitlines()[1] == "4"


def test_a_log_restored_from_an_older_copy_prunes_the_lost_futures_tiles(served, key_prefix):
    """Redis restored from a copy older than the archive's (docs/operations.md): the store holds
    the tiles the lost future cut, which the restored log, growing over other games, would cut
    again with other bytes. `hearts archive prune-tiles` lists exactly those (nothing of the
    restored tree) and deletes them; the restored log then cuts and mirrors, and verifies."""
    _, future, _ = served
    store = future.tree.blobs
    grow(future, 0, 600)  # the lost future: two full tiles cut, a partial edge, its note
    future.checkpoint()
    assert store.get("tile/0/001") is not None
    restored = GameTree(future.tree.redis, f"{key_prefix}-restored", store)
    for i in range(300):  # the copy held its first 300 leaves; then other games finish
        restored.append(f"g{i:020x}", head(i))
    for i in range(300, 600):
        restored.append(f"g{i:020x}", head(i + 10_000))
    restored.cut_tiles(256)  # tile 0: the same leaves, the same bytes
    with pytest.raises(BlobConflict):
        restored.cut_tiles(600)

    past = restored.tiles_past_tree()  # reaching past 600 leaves: none yet (both are 600)
    assert past == [] and restored.size() == 600
    trimmed = GameTree(future.tree.redis, f"{key_prefix}-copy", store)
    for i in range(300):  # as restored, before any new game: size 300
        trimmed.append(f"g{i:020x}", head(i))
    assert trimmed.tiles_past_tree() == [
        "tile/0/001",
        "tile/0/002.p/88",
        "tile/1/000.p/2",
        "tile/entries/001",
        "tile/entries/002.p/88",
    ]
    deleted = trimmed.forget_tiles_past_tree()
    assert "checkpoint" in deleted and store.get("tile/0/000") is not None  # its own stays
    assert sorted(name for name in store.names() if name.startswith("tile/")) == [
        "tile/0/000",
        "tile/entries/000",
    ]
    for i in range(300, 600):  # the restored log grows over other games, cut without conflict
        trimmed.append(f"g{i:020x}", head(i + 10_000))
    assert trimmed.cut_tiles(600) == 2
    assert trimmed.mirror(600, "the restored log's note") is True
    fetch = files_of(store)
    for index in (0, 299, 300, 511, 599):
        proof = tiles.inclusion_proof(tiles.tile_reader(fetch, 600), 600, index)
        data = entry(fetch, 600, index)
        merkle.verify_inclusion(merkle.leaf_hash(data), index, 600, proof, trimmed.root(600))


def test_a_conflicting_full_tile_is_logged_and_the_checkpoint_answered(served, caplog):
    """A full tile the store holds with other bytes (a restore not pruned yet): the request
    that signs a checkpoint answers, and the log names the command that fixes it."""
    _, log, _ = served
    log.tree.blobs.put("tile/0/000", b"\1" * 32 * 256)
    grow(log, 0, 300)
    assert Note.parse(log.checkpoint()).text.splitlines()[1] == "300"
    assert "hearts archive prune-tiles" in caplog.text


def files_of(store: BlobStore) -> Callable[[str], bytes | None]:
    return store.get


def test_cosignatures_are_kept_for_the_newest_sizes_only(served, monkeypatch):
    """A witness cosigns every checkpoint it sees: the log keeps the newest sizes' only."""
    from service.store import game_tree

    _, log, _ = served
    monkeypatch.setattr(game_tree, "COSIGNED_SIZES_KEPT", 3)
    for size in range(1, 7):
        log.tree.add_cosignature(size, "witness.test/w1", f"line {size}\n")
    assert [log.tree.cosignatures(size) for size in range(1, 7)] == [
        [],
        [],
        [],
        ["line 4\n"],
        ["line 5\n"],
        ["line 6\n"],
    ]
    redis = log.tree.redis
    assert sorted(k for k in redis.scan_iter(f"{log.tree.prefix}:{{tlog}}:cosig:*")) == sorted(
        log.tree.cosig_key(size).encode() for size in (4, 5, 6)
    )


@pytest.mark.parametrize("kind", ["disk", "s3"])
def test_hearts_serve_puts_its_published_checkpoint_and_tiles_in_the_store(
    request, redis_client, key_prefix, tmp_path, kind
):
    """Issue 43: with `hearts serve`'s settings (a checkpoint published every
    HEARTS_CHECKPOINT_INTERVAL seconds, not signed per request; the archiver in the worker,
    whose pass publishes it) the store is the static mirror docs/verify.md promises: the
    signed checkpoint and the tiles at their C2SP tlog-tiles paths, as the API serves them."""
    settings = Settings(
        key_prefix=key_prefix,
        archive_url=archive_url(request, kind, tmp_path),
        archiver=True,
        checkpoint_interval=DEFAULT_CHECKPOINT_INTERVAL,
    )
    app = create_app(settings, redis=redis_client)
    try:
        log = app.extensions["hearts.log"]
        assert log.publish_every > 0
        archiver = app.extensions["hearts.archiver"]
        assert archiver.public_log is log
        # Its passes run here instead of in the background: else a pass while the tree grows
        # publishes a smaller tree, and the next publication is 10 s later.
        app.extensions["hearts.stop"]()
        grow(log, 0, 300)
        archiver.run_once()
        store = blob_store_from_url(settings.archive_url)
        assert sorted(name for name in store.names() if name.startswith("tile/")) == [
            "tile/0/000",
            "tile/0/001.p/44",
            "tile/1/000.p/1",
            "tile/entries/000",
            "tile/entries/001.p/44",
        ]
        stored = store.get(tiles.CHECKPOINT)
        assert stored is not None
        _, checkpoint = open_checkpoint(stored.decode(), Verifier.parse(log.vkey))
        assert checkpoint.size == 300
        assert tiles.tree_root(tiles.tile_reader(store.get, 300), 300) == checkpoint.root
        http = app.test_client()
        assert http.get("/api/v1/log/checkpoint").get_data() == stored
        for path in ("tile/0/000", "tile/0/001.p/44", "tile/entries/001.p/44"):
            assert http.get(f"/api/v1/log/{path}").get_data() == store.get(path)
    finally:
        app.extensions["hearts.stop"]()
