"""Fixtures of the projection tests: a store and its read models on the throwaway redis-server
and on the throwaway Redis Cluster."""

from __future__ import annotations

import pytest

from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from service.store.redis_server import client_for
from tests import backends


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Both for the projector's consumer groups and the read models' Lua, one for the rest.
    backends.parametrize(metafunc, "redis_url", ("real", "cluster"))


@pytest.fixture
def redis_url(request) -> str:
    """The throwaway single redis-server's URL, or the throwaway cluster's redis+cluster:// one;
    which one a test gets: tests/backends.py."""
    if request.param == "real":
        return request.getfixturevalue("redis_server")
    return request.getfixturevalue("redis_cluster").url


@pytest.fixture
def real_redis(redis_url):
    client = client_for(redis_url)
    yield client
    client.close()


@pytest.fixture
def store(real_redis, key_prefix) -> RedisEventStore:
    return RedisEventStore(real_redis, prefix=key_prefix)


@pytest.fixture
def projections(store) -> ProjectionStore:
    return ProjectionStore(store)
