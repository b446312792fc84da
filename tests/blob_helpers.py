"""A throwaway S3-protocol server for tests: moto's server mode.

``start_s3_server()`` serves the S3 API on a free loopback port in a thread of this process
(moto keeps objects in memory: nothing outlives the process) and returns a :class:`S3Server`
whose ``url(prefix)`` is an ``HEARTS_ARCHIVE_URL`` for a bucket it created. Under ``.ci/run``
the server is moto's standalone one, a separate process the script starts with a bucket and
names in ``HEARTS_TEST_S3_SERVER`` (:func:`s3_server_from_env`): one server for every test
process. Credentials: moto accepts any, and the fixture sets the usual AWS environment variables
to dummies, so a developer's real ones are never used.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

# An s3:// URL of a scratch bucket of a real store: the `s3` blob store and archive tests run
# there instead of on moto (docs/operations.md), each test under a prefix of its own.
REAL_S3_ENV = "HEARTS_TEST_S3_URL"
# An s3:// URL (``s3://bucket?endpoint=http://127.0.0.1:PORT&region=R``) of a bucket on an
# S3-protocol server that exists for the test run only: moto's, started by .ci/run. The
# ``s3_server`` fixture uses it instead of starting moto in a thread of each test process.
S3_SERVER_ENV = "HEARTS_TEST_S3_SERVER"

REGION = "us-east-1"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
}


@dataclass
class S3Server:
    endpoint: str
    bucket: str
    server: Any  # moto's ThreadedMotoServer, or None: a server this process did not start

    def url(self, prefix: str = "") -> str:
        """An s3:// archive URL under ``prefix`` of the server's bucket."""
        path = f"/{prefix}" if prefix else ""
        return f"s3://{self.bucket}{path}?endpoint={self.endpoint}&region={REGION}"

    def unique_url(self) -> str:
        """An s3:// URL under a prefix of its own (one per test: tests never share objects)."""
        return unique_url(self.url())

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def unique_url(url: str) -> str:
    """``url`` (s3://bucket[/prefix][?query]) with a fresh prefix of its own under its prefix."""
    parsed = urlparse(url)
    path = f"{parsed.path.rstrip('/')}/t-{uuid.uuid4().hex[:12]}"
    return parsed._replace(path=path).geturl()


def start_s3_server() -> S3Server:
    """moto's S3 server on a free loopback port, with one bucket made (credentials: set
    ``CREDENTIALS`` in the environment first)."""
    import boto3
    from moto.server import ThreadedMotoServer

    # Werkzeug logs every request moto serves: thousands of lines in a failing test's output.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    bucket = f"hearts-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=endpoint, region_name=REGION).create_bucket(Bucket=bucket)
    return S3Server(endpoint, bucket, server)


def s3_server_from_env() -> S3Server | None:
    """The server ``HEARTS_TEST_S3_SERVER`` names (its bucket exists), or None if unset."""
    url = os.environ.get(S3_SERVER_ENV)
    if not url:
        return None
    parsed = urlparse(url)
    query = parse_qs(parsed.query)
    if parsed.scheme != "s3" or not parsed.netloc or "endpoint" not in query:
        raise ValueError(f"{S3_SERVER_ENV} is s3://bucket?endpoint=http://host:port: {url!r}")
    return S3Server(query["endpoint"][-1], parsed.netloc, None)


def s3_url(request: Any) -> str:
    """An s3:// URL under a prefix of its own, for the test of ``request``: in a real store's
    scratch bucket (``HEARTS_TEST_S3_URL``), else in the session's S3 server's bucket."""
    if os.environ.get(REAL_S3_ENV):  # a real store's scratch bucket (docs/operations.md)
        return unique_url(os.environ[REAL_S3_ENV])
    return request.getfixturevalue("s3_server").unique_url()


def archive_url(request: Any, kind: str, tmp_path: Path) -> str:
    """An ``HEARTS_ARCHIVE_URL`` of an empty archive of ``kind`` (disk, s3) for the test of
    ``request``: a directory of the test's, or a prefix of its own on S3."""
    if kind == "disk":
        return (tmp_path / "archive").as_uri()
    if kind == "s3":
        return s3_url(request)
    raise ValueError(f"no archive backend {kind!r}")


def make_blob_store(request: Any, kind: str, tmp_path: Path) -> Any:
    """An empty blob store of ``kind`` (disk, s3, memory) for the test of ``request``."""
    from service.store.blobs import MemoryBlobStore, blob_store_from_url

    if kind == "memory":
        return MemoryBlobStore()
    return blob_store_from_url(archive_url(request, kind, tmp_path))


def drop_object(blobs: Any, name: str) -> None:
    """Delete an object behind the store's back (the service never deletes one): a lost object."""
    from service.store.blobs import DiskBlobStore

    blobs = getattr(blobs, "inner", blobs)  # behind the guard (service/store/blob_guard.py)
    if isinstance(blobs, DiskBlobStore):
        (blobs.root / name).unlink()
    else:
        blobs.client.delete_object(Bucket=blobs.bucket, Key=blobs._key(name))


def overwrite_object(blobs: Any, name: str, data: bytes) -> None:
    """Replace an object's bytes behind the store's back (objects are write-once): damage."""
    from service.store.blobs import DiskBlobStore

    blobs = getattr(blobs, "inner", blobs)  # behind the guard (service/store/blob_guard.py)
    if isinstance(blobs, DiskBlobStore):
        (blobs.root / name).write_bytes(data)
    else:
        blobs.client.put_object(Bucket=blobs.bucket, Key=blobs._key(name), Body=data)
