from __future__ import annotations

import pytest

from service.store.redis_server import client_for
from tests.archive.helpers import World, world


@pytest.fixture
def hub(redis_client, key_prefix, tmp_path) -> World:
    """The service on fakeredis, the throwaway redis-server and the cluster, archiving to a
    directory of the test's own."""
    built = world(redis_client, key_prefix, str(tmp_path / "archive"))
    yield built
    built.app.extensions["hearts.stop"]()


@pytest.fixture(params=["real", "cluster"])
def real_redis(request):
    """A client of the throwaway redis-server or of the throwaway cluster (as the projection
    tests': tests/projections/conftest.py)."""
    if request.param == "real":
        url = request.getfixturevalue("redis_server")
    else:
        url = request.getfixturevalue("redis_cluster").url
    client = client_for(url)
    yield client
    client.close()
