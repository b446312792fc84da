"""A throwaway S3-protocol server for tests: moto's server mode, in a thread of this process.

``start_s3_server()`` serves the S3 API on a free loopback port (moto keeps objects in memory:
nothing outlives the process) and returns a :class:`S3Server` whose ``url(prefix)`` is an
``HEARTS_ARCHIVE_URL`` for a bucket it created. Credentials: moto accepts any, and the fixture
sets the usual AWS environment variables to dummies, so a developer's real ones are never used.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

# An s3:// URL of a scratch bucket of a real store: the `s3` blob store tests run there instead
# of on moto (docs/operations.md), each test under a prefix of its own.
REAL_S3_ENV = "HEARTS_TEST_S3_URL"

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
    server: Any

    def url(self, prefix: str = "") -> str:
        """An s3:// archive URL under ``prefix`` of the server's bucket."""
        path = f"/{prefix}" if prefix else ""
        return f"s3://{self.bucket}{path}?endpoint={self.endpoint}&region={REGION}"

    def unique_url(self) -> str:
        """An s3:// URL under a prefix of its own (one per test: tests never share objects)."""
        return unique_url(self.url())

    def stop(self) -> None:
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


def make_blob_store(request: Any, kind: str, tmp_path: Path) -> Any:
    """An empty blob store of ``kind`` (disk, s3, memory) for the test of ``request``."""
    from service.store.blobs import MemoryBlobStore, blob_store_from_url

    if kind == "disk":
        return blob_store_from_url((tmp_path / "archive").as_uri())
    if kind == "memory":
        return MemoryBlobStore()
    if os.environ.get(REAL_S3_ENV):  # a real store's scratch bucket (docs/operations.md)
        return blob_store_from_url(unique_url(os.environ[REAL_S3_ENV]))
    return blob_store_from_url(request.getfixturevalue("s3_server").unique_url())
