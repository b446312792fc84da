"""Issue 42, "hand_over": a create of a game with three bots and a guest's join is ~17 KB of
Redis (the game is dealt as soon as its one open seat is taken), twice a game that waits for
people; counted only as a create, 600 a minute from one address was ~8 MB a minute. Games
created with a bot seated now count, on top of the create limit, against
HEARTS_RATE_LIMIT_BOT_SEATS (200 a minute by default): ~3.5 MB a minute on that path."""

from __future__ import annotations

from typing import Any

import fakeredis

from service.api.factory import create_app
from service.settings import Settings
from tests.security.test_rate_limits import assert_limited

GAMES = "/api/v1/games"
HOME, AWAY = {"REMOTE_ADDR": "10.43.0.1"}, {"REMOTE_ADDR": "10.43.0.2"}
WITH_BOTS = {"seats": [None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}]}


def app_with(key_prefix: str, **settings: Any):
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return create_app(Settings(key_prefix=key_prefix, rate_limits=True, **settings), redis=redis)


def test_one_address_creates_two_hundred_games_with_bots_a_minute_on_defaults(key_prefix):
    # The create limit's 10 a second off, so that the minute's budget is met in a test's time;
    # the bot-seats limit at its default.
    client = app_with(key_prefix, rate_limit_create="off").test_client()
    answers = [client.post(GAMES, json=WITH_BOTS, environ_base=HOME) for _ in range(200)]
    assert [a.status_code for a in answers] == [201] * 200
    refused = client.post(GAMES, json=WITH_BOTS, environ_base=HOME)
    assert_limited(refused)
    assert "200 per 1 minute" in refused.get_json()["detail"]
    # Nothing stored for the refused one; a game that waits for people still passes, and
    # another address has a budget of its own.
    assert client.post(GAMES, json={}, environ_base=HOME).status_code == 201
    assert client.post(GAMES, json=WITH_BOTS, environ_base=AWAY).status_code == 201


def test_a_game_of_open_seats_does_not_spend_the_bot_seats_budget(key_prefix):
    client = app_with(key_prefix, rate_limit_create="off", rate_limit_bot_seats="2/minute")
    client = client.test_client()
    for _ in range(5):
        assert client.post(GAMES, json={"seats": [None] * 4}, environ_base=HOME).status_code == 201
    for _ in range(2):
        assert client.post(GAMES, json=WITH_BOTS, environ_base=HOME).status_code == 201
    assert_limited(client.post(GAMES, json=WITH_BOTS, environ_base=HOME))
