"""The archive's tests run on each archive backend: local disk and S3 (moto's server, or the
one .ci/run starts; tests/blob_helpers.py).

A ``hub`` is one (Redis, backend) pair. The backend holds the archive's objects and nothing
else, so S3 runs on one Redis kind (the throwaway redis-server) rather than all three: what the
S3 runs add is the objects' round trip through the protocol, not another Redis.
"""

from __future__ import annotations

import pytest

from tests.archive.helpers import World, redis_of, world
from tests.blob_helpers import archive_url

HUBS = ["fake-disk", "real-disk", "cluster-disk", "real-s3"]


@pytest.fixture(params=HUBS)
def hub(request, key_prefix, tmp_path) -> World:
    """The service on a Redis (fakeredis, the throwaway redis-server, the cluster) archiving to
    a backend (a directory of the test's, or a prefix of its own on S3): ``<redis>-<backend>``."""
    redis_kind, backend = request.param.split("-")
    client = redis_of(request, redis_kind)
    built = world(client, key_prefix, archive_url(request, backend, tmp_path))
    yield built
    built.app.extensions["hearts.stop"]()
    client.close()


@pytest.fixture(params=["disk", "s3"])
def backend_url(request, tmp_path) -> str:
    """An empty archive's HEARTS_ARCHIVE_URL on each backend."""
    return archive_url(request, request.param, tmp_path)
