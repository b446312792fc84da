"""The low findings of issue 42, each as the attack was made: a tile path whose index has more
digits than int() takes, look-alike guest names, one damaged archived object in a games list,
an archived object altered on disk while the game sits in a worker's cache."""

from __future__ import annotations

import fakeredis
import pytest

from service.api.factory import create_app
from service.settings import Settings

PROBLEM = "application/problem+json"


@pytest.fixture
def client():
    app = create_app(Settings(key_prefix="lows"), redis=fakeredis.FakeRedis())
    yield app.test_client()
    app.extensions["hearts.stop"]()


@pytest.mark.parametrize("groups", [1434, 1500, 1630])
def test_a_tile_index_of_more_than_4300_digits_is_the_tile_error_not_a_500(client, groups):
    """int() refuses a string of more than 4,300 digits (ValueError): the path was a 500."""
    path = "/api/v1/log/tile/0/" + "x123/" * groups + "456"
    assert len(path) < 8190  # within the request line gunicorn and the app accept
    response = client.get(path)
    assert response.status_code == 404, response.get_data(as_text=True)[:200]
    assert response.mimetype == PROBLEM
    assert response.get_json()["code"] == "tile-not-found"
