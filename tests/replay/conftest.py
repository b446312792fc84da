from __future__ import annotations

import fakeredis
import pytest
import redis

from service.api.factory import create_app
from service.settings import Settings
from tests.api.helpers import Hearts


@pytest.fixture
def fake_app(key_prefix):
    """The app on a private fakeredis server."""
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return create_app(Settings(key_prefix=key_prefix), redis=client)


@pytest.fixture
def real_app(redis_server, key_prefix):
    """The app on the throwaway redis-server."""
    client = redis.Redis.from_url(redis_server)
    yield create_app(Settings(key_prefix=key_prefix), redis=client)
    client.close()


@pytest.fixture
def client(fake_app):
    return fake_app.test_client()


@pytest.fixture
def hearts(client) -> Hearts:
    return Hearts(client)
