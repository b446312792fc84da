"""Fixtures of the projection tests: a store and its read models on the throwaway redis-server."""

from __future__ import annotations

import pytest
import redis

from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore


@pytest.fixture
def real_redis(redis_server):
    client = redis.Redis.from_url(redis_server)
    yield client
    client.close()


@pytest.fixture
def store(real_redis, key_prefix) -> RedisEventStore:
    return RedisEventStore(real_redis, prefix=key_prefix)


@pytest.fixture
def projections(store) -> ProjectionStore:
    return ProjectionStore(store)
