"""Issue 34: the suite runs the rate limits ``hearts serve`` users get, and a test that goes
beyond them says why with ``@pytest.mark.unlimited("<reason>")`` (tests/conftest.py)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import fakeredis
import pytest

from service.api.factory import create_app
from service.settings import Settings
from tests.conftest import unlimited_reason

GAMES = "/api/v1/games"


def app_from_settings(key_prefix: str):
    app = create_app(
        Settings(key_prefix=key_prefix, bot_runner=False),
        redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()),
    )
    return app


def test_an_app_built_from_settings_has_the_limits_of_hearts_serve(key_prefix):
    assert Settings().rate_limits is True
    assert Settings.from_env({}).rate_limits is True
    assert "HEARTS_RATE_LIMITS" not in os.environ  # nothing of the suite turns them off
    app = app_from_settings(key_prefix)
    assert "hearts.limiter" in app.extensions
    # The default create limit (10 a second) answers 429 to the eleventh create in a burst.
    client = app.test_client()
    statuses = [client.post(GAMES, json={}).status_code for _ in range(11)]
    assert statuses[:10] == [201] * 10
    assert statuses[10] == 429


@pytest.mark.unlimited("checks that the marker turns the limits off")
def test_a_test_marked_unlimited_builds_apps_and_servers_without_limits(key_prefix):
    assert os.environ["HEARTS_RATE_LIMITS"] == "0"  # for the servers it starts
    app = app_from_settings(key_prefix)
    assert "hearts.limiter" not in app.extensions
    client = app.test_client()
    assert {client.post(GAMES, json={}).status_code for _ in range(11)} == {201}


def test_the_limits_are_back_after_a_marked_test(key_prefix):
    assert "HEARTS_RATE_LIMITS" not in os.environ
    assert "hearts.limiter" in app_from_settings(key_prefix).extensions


def marked(*args, **kwargs):
    marker = pytest.mark.unlimited(*args, **kwargs).mark
    return SimpleNamespace(nodeid="t::x", get_closest_marker=lambda name: marker)


def test_the_marker_carries_its_reason():
    assert unlimited_reason(marked("races the matchmaker")) == "races the matchmaker"
    assert unlimited_reason(marked(reason="races the matchmaker")) == "races the matchmaker"
    unmarked = SimpleNamespace(nodeid="t::x", get_closest_marker=lambda name: None)
    assert unlimited_reason(unmarked) is None


@pytest.mark.parametrize("args", [(), ("",), ("  ",), (3,)])
def test_a_marker_without_a_reason_fails_the_test(args):
    with pytest.raises(pytest.fail.Exception, match="needs its reason"):
        unlimited_reason(marked(*args))
