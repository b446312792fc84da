from __future__ import annotations

import pytest

from service.api.factory import create_app
from service.settings import Settings


@pytest.fixture
def app(redis_client, key_prefix):
    app = create_app(Settings(key_prefix=key_prefix, bot_poll_seconds=0.05), redis=redis_client)
    yield app
    app.extensions["hearts.stop"]()


@pytest.fixture
def client(app):
    return app.test_client()
