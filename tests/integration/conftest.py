from __future__ import annotations

import pytest
import redis

from service.api.factory import create_app
from service.settings import Settings


@pytest.fixture
def real_redis(redis_server):
    client = redis.Redis.from_url(redis_server)
    yield client
    client.close()


@pytest.fixture
def make_app(real_redis, key_prefix):
    """Apps on one real Redis, as separate processes would be (each its own cache)."""

    def make(**overrides):
        return create_app(Settings(key_prefix=key_prefix, **overrides), redis=real_redis)

    return make
