from __future__ import annotations

import pytest

from service.api.factory import create_app
from service.settings import Settings
from tests.api.helpers import Hearts


@pytest.fixture
def settings(key_prefix) -> Settings:
    return Settings(key_prefix=key_prefix)


@pytest.fixture
def app(redis_client, settings):
    app = create_app(settings, redis=redis_client)
    yield app
    app.extensions["hearts.bots_stop"]()  # before its Redis client is closed (as tests/api does)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def hearts(client) -> Hearts:
    return Hearts(client)
