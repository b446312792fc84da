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
    return create_app(settings, redis=redis_client)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def hearts(client) -> Hearts:
    return Hearts(client)
