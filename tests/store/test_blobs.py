"""The blob store contract (service/store/blobs.py), on local disk, on S3 (moto's server) and in
memory.

Every backend passes the same tests: write-once objects, names that cannot leave the store,
missing objects read as None, big objects whole, racing writers of one name.
"""

from __future__ import annotations

import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from service.store.blobs import (
    BlobConflict,
    BlobStoreError,
    DiskBlobStore,
    MemoryBlobStore,
    blob_store_from_url,
    check_name,
)
from service.store.s3_blobs import S3BlobStore
from tests.blob_helpers import make_blob_store


@pytest.fixture(params=["disk", "s3", "memory"])
def blob_store(request, tmp_path):
    """conftest's ``blob_store`` and the in-memory one (apps handed their Redis use it)."""
    return make_blob_store(request, request.param, tmp_path)


def test_put_get_exists_size(blob_store):
    blob_store.put("games/g1.zst", b"hello")
    assert blob_store.get("games/g1.zst") == b"hello"
    assert blob_store.exists("games/g1.zst")
    assert blob_store.size("games/g1.zst") == 5


def test_an_empty_object_is_an_object(blob_store):
    blob_store.put("empty", b"")
    assert blob_store.get("empty") == b""
    assert blob_store.exists("empty")
    assert blob_store.size("empty") == 0


def test_names_lists_every_object_under_a_prefix(blob_store):
    for name in ("games/a", "games/b", "tile/0/x001/234", "tile/0/001.p/17", "tile/entries/000"):
        blob_store.put(name, name.encode())
    assert sorted(blob_store.names()) == [
        "games/a",
        "games/b",
        "tile/0/001.p/17",
        "tile/0/x001/234",
        "tile/entries/000",
    ]
    assert sorted(blob_store.names("games/")) == ["games/a", "games/b"]
    assert sorted(blob_store.names("tile/0/")) == ["tile/0/001.p/17", "tile/0/x001/234"]
    assert list(blob_store.names("nothing/")) == []


def test_the_same_bytes_again_is_a_no_op(blob_store):
    blob_store.put("games/g1", b"one")
    blob_store.put("games/g1", b"one")
    assert blob_store.get("games/g1") == b"one"
    assert list(blob_store.names()) == ["games/g1"]


def test_other_bytes_under_a_name_are_a_conflict(blob_store):
    blob_store.put("games/g1", b"one")
    with pytest.raises(BlobConflict):
        blob_store.put("games/g1", b"two")
    with pytest.raises(BlobConflict):
        blob_store.put("games/g1", b"")
    assert blob_store.get("games/g1") == b"one"


def test_missing_objects_read_as_none(blob_store):
    assert blob_store.get("games/none") is None
    assert blob_store.size("games/none") is None
    assert not blob_store.exists("games/none")
    blob_store.put("games/some", b"x")
    assert blob_store.get("games/some/deeper") is None
    # A prefix of other objects' names is not an object (a directory on disk).
    assert not blob_store.exists("games")
    assert blob_store.get("games") is None
    assert blob_store.size("games") is None


@pytest.mark.parametrize(
    "name",
    [
        "",
        "/abs",
        "../escape",
        "games/../../escape",
        "games/./g1",
        "games//g1",
        "games/",
        ".hidden",
        "games/.tmp-1.part",
        "back\\slash",
        "games/g1\x00",
        "spa ce",
        "é",
        "a" * 129,
        "/".join(["a"] * 300),
    ],
)
def test_invalid_names_are_refused_everywhere(blob_store, name):
    for call in (
        lambda: blob_store.put(name, b"x"),
        lambda: blob_store.get(name),
        lambda: blob_store.exists(name),
        lambda: blob_store.size(name),
    ):
        with pytest.raises(ValueError):
            call()
    assert list(blob_store.names()) == []


def test_check_name_takes_tile_paths():
    # c2sp.org/tlog-tiles: tiles and entry bundles, full and partial, are object names as-is.
    tiles = ("tile/0/000", "tile/3/x001/x234/067", "tile/0/x001/234.p/17", "tile/entries/5.p/1")
    for name in tiles:
        assert check_name(name) == name


def test_a_big_object_is_stored_whole(blob_store):
    data = os.urandom(5 * 1024 * 1024 + 17)  # past S3's multipart threshold of some clients
    blob_store.put("games/big", data)
    assert blob_store.size("games/big") == len(data)
    assert blob_store.get("games/big") == data
    blob_store.put("games/big", data)  # again: a no-op
    with pytest.raises(BlobConflict):
        blob_store.put("games/big", data[:-1] + bytes([data[-1] ^ 1]))


def test_concurrent_puts_of_the_same_bytes_all_succeed(blob_store):
    data = os.urandom(256 * 1024)
    start = threading.Barrier(8)

    def put() -> None:
        start.wait()
        blob_store.put("games/raced", data)

    with ThreadPoolExecutor(8) as pool:
        for future in [pool.submit(put) for _ in range(8)]:
            future.result()
    assert blob_store.get("games/raced") == data
    assert list(blob_store.names()) == ["games/raced"]


def test_concurrent_puts_of_other_bytes_keep_one_winner(blob_store):
    start = threading.Barrier(8)

    def put(i: int) -> bytes | None:
        data = bytes([i]) * 65536
        start.wait()
        try:
            blob_store.put("games/raced", data)
        except BlobConflict:
            return None
        return data

    with ThreadPoolExecutor(8) as pool:
        results = [f.result() for f in [pool.submit(put, i) for i in range(8)]]
    winners = [r for r in results if r is not None]
    assert winners, "some writer must have created the object"
    assert blob_store.get("games/raced") in winners
    if isinstance(getattr(blob_store, "inner", blob_store), DiskBlobStore | MemoryBlobStore):
        # link(2) is atomic: exactly one writer wins. (moto checks If-None-Match before it
        # writes, not atomically, so on it two racing writers can both succeed: AWS S3's
        # conditional write is atomic; see service/store/s3_blobs.py for stores without one.)
        assert len(winners) == 1


# --- S3 only -------------------------------------------------------------------------------------


def test_s3_url_names_bucket_prefix_endpoint_and_region(s3_server):
    prefix = f"p-{uuid.uuid4().hex[:12]}/some"
    store = S3BlobStore.from_url(s3_server.url(prefix))
    assert (store.bucket, store.prefix) == (s3_server.bucket, prefix)
    assert store.url == f"s3://{s3_server.bucket}/{prefix}"
    store.put("games/g1", b"x")
    # Under the prefix: a store on the bucket's root sees the object under its full key.
    root = S3BlobStore.from_url(s3_server.url())
    assert root.get(f"{prefix}/games/g1") == b"x"
    assert isinstance(blob_store_from_url(s3_server.url()).inner, S3BlobStore)  # guarded


@pytest.mark.parametrize(
    "url",
    [
        "s3:///prefix",  # no bucket
        "s3://bucket/x?endpoint=http://h&color=red",  # unknown parameter
        "s3://bucket/x?addressing=sideways",
        "s3://bucket/../up",
        "s3://bucket/x?read_timeout=0",  # a wait on the store is bounded, and above 0
        "s3://bucket/x?connect_timeout=1e9",
        "s3://bucket/x?attempts=many",
    ],
)
def test_bad_s3_urls_are_refused(url):
    with pytest.raises(ValueError):
        S3BlobStore.from_url(url)


class _NoConditionalWrites:
    """The moto client, as a store without conditional writes answers: 501 to If-None-Match."""

    def __init__(self, client) -> None:
        self.client = client
        self.refused = 0

    def put_object(self, **kwargs):
        if "IfNoneMatch" in kwargs:
            from botocore.exceptions import ClientError

            self.refused += 1
            error = {"Code": "NotImplemented", "Message": "If-None-Match"}
            meta = {"HTTPStatusCode": 501}
            raise ClientError({"Error": error, "ResponseMetadata": meta}, "PutObject")
        return self.client.put_object(**kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_a_store_without_conditional_writes_falls_back_to_check_then_put(s3_server):
    plain = S3BlobStore.from_url(s3_server.unique_url())
    client = _NoConditionalWrites(plain.client)
    store = S3BlobStore(plain.bucket, plain.prefix, client=client)
    store.put("games/g1", b"one")
    store.put("games/g2", b"two")
    assert client.refused == 1  # asked once, then remembered
    store.put("games/g1", b"one")
    with pytest.raises(BlobConflict):
        store.put("games/g1", b"other")
    assert (store.get("games/g1"), store.get("games/g2")) == (b"one", b"two")


def test_an_s3_store_that_does_not_answer_raises_blob_store_error(s3_server) -> None:
    import boto3
    from botocore.config import Config

    from tests.redis_helpers import free_port

    # Nothing listens there; one attempt per call (the store's own client retries 3 times).
    config = Config(retries={"max_attempts": 1}, connect_timeout=2)
    endpoint = f"http://127.0.0.1:{free_port()}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", config=config)
    store = S3BlobStore(s3_server.bucket, "x", client=client)
    for call in (
        lambda: store.put("games/g1", b"x"),
        lambda: store.get("games/g1"),
        lambda: store.size("games/g1"),
        lambda: list(store.names()),
    ):
        with pytest.raises(BlobStoreError):
            call()


def test_s3_calls_are_bounded_by_the_urls_timeouts(s3_server):
    store = S3BlobStore.from_url(s3_server.url() + "&connect_timeout=1.5&read_timeout=3&attempts=2")
    config = store.client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (1.5, 3)
    assert config.retries["total_max_attempts"] == 2
    assert config.max_pool_connections >= 32  # no "Connection pool is full" under gevent
    assert store.timeouts.longest_call == 2 * (1.5 + 3)
    default = S3BlobStore.from_url(s3_server.url()).timeouts
    assert default.longest_call <= 15  # what docs/operations.md promises
