"""Issue 33, bounded games: no request makes the server keep a game of unbounded length.

One anonymous ``POST /games`` with ``"score_limit": 10000`` and four bots wrote 1,474 hands
(105,765 events) in a minute. Now: the score limit is at most 500 (a 422 naming it), every game
ends after at most 100 hands (``hand_limit``, docs/rules.md), and games with every seat a bot are
limited per client address (a rate limit of their own, on top of the create limit) and in play
at once on the whole server (503 ``bot-games-full``, counted in Redis by an index, not a scan).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import fakeredis
import pytest
import redis
from flask import Flask

from bench.randomplay import random_game
from domain.rules import MAX_HAND_LIMIT, MAX_SCORE_LIMIT, RuleOptions
from service.api.factory import create_app
from service.app.game import new_event
from service.app.game_service import GameService
from service.settings import Settings
from service.store.bot_games import BotGames
from tests.api.helpers import PROBLEM, Hearts, poll
from tests.security.test_rate_limits import assert_limited, limited_app

GAMES = "/api/v1/games"
BOTS = [{"bot": "random"}] * 4


@pytest.fixture
def build() -> Iterator[Callable[..., Flask]]:
    """``create_app``, each app built stopping its background threads when the test ends."""
    built: list[Flask] = []

    def make(*args: Any, **kwargs: Any) -> Flask:
        built.append(create_app(*args, **kwargs))
        return built[-1]

    yield make
    for app in built:
        app.extensions["hearts.stop"]()


def service_of(app: Flask) -> GameService:
    return app.extensions["hearts"]


def test_a_score_limit_of_10000_with_four_bots_is_refused_naming_the_maximum(build, key_prefix):
    app = build(Settings(key_prefix=key_prefix), redis=fakeredis.FakeRedis())
    client = app.test_client()
    answer = client.post(GAMES, json={"seats": BOTS, "rules": {"score_limit": 10_000}})
    assert answer.status_code == 422 and answer.mimetype == PROBLEM
    body = answer.get_json()
    assert body["code"] == "invalid-rules"
    assert f"score_limit must be 1 to {MAX_SCORE_LIMIT}" in body["detail"]
    assert client.get(GAMES).get_json()["games"] == []  # nothing written
    # The most is accepted; the OpenAPI document shows both bounds of a new game.
    assert client.post(GAMES, json={"rules": {"score_limit": MAX_SCORE_LIMIT}}).status_code == 201
    document = client.get("/api/v1/openapi.json").get_json()
    rules = _create_rules_schema(document)
    assert rules["score_limit"]["maximum"] == MAX_SCORE_LIMIT == 500
    assert rules["hand_limit"]["maximum"] == MAX_HAND_LIMIT == 100


def _create_rules_schema(document: dict) -> dict:
    body = document["paths"]["/api/v1/games"]["post"]["requestBody"]["content"]
    schema = body["application/json"]["schema"]
    if "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema["properties"]["rules"]["properties"]


def test_a_game_of_bots_ends_at_its_hand_limit_and_audits_clean(build, redis_client, key_prefix):
    settings = Settings(key_prefix=key_prefix, bot_poll_seconds=0.05)
    app = build(settings, redis=redis_client)
    hearts = Hearts(app.test_client())
    rules = {"score_limit": MAX_SCORE_LIMIT, "hand_limit": 2}
    game = hearts.create(BOTS, rules=rules)
    final = hearts.wait_for(game["id"], lambda v: v["phase"] == "finished", timeout=120)
    assert final["hand_number"] == 2 and max(final["scores"]) < MAX_SCORE_LIMIT
    assert final["rules"]["hand_limit"] == 2
    assert hearts.http.get(f"{GAMES}/{game['id']}/audit").get_json()["ok"]
    # It no longer counts among the games of bots in play.
    assert service_of(app).bot_games.count() == 0


def test_games_of_bots_only_are_limited_per_address(key_prefix):
    client = limited_app(key_prefix, rate_limit_bot_games="2/minute").test_client()
    for _ in range(2):
        assert client.post(GAMES, json={"seats": BOTS}).status_code == 201
    assert_limited(client.post(GAMES, json={"seats": BOTS}))
    # A game with a person's seat is a create like any other; another address has its own
    # budget of games of bots.
    assert client.post(GAMES, json={"seats": [None, *BOTS[1:]]}).status_code == 201
    assert client.post(GAMES, json={}).status_code == 201
    there = client.post(GAMES, json={"seats": BOTS}, environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert there.status_code == 201


@pytest.mark.unlimited(
    "the deployment's cap on games of bots in play is what it checks: 5 of them from one "
    "address within seconds (the default lets an address create 3 a minute)"
)
def test_games_of_bots_only_are_capped_in_play_at_once(build, redis_server, key_prefix):
    # Two processes on one Redis: the cap is the deployment's, counted in Redis.
    settings = Settings(key_prefix=key_prefix, max_bot_games=2, bot_runner=False)
    apps = [build(settings, redis=redis.Redis.from_url(redis_server)) for _ in range(2)]
    clients = [app.test_client() for app in apps]
    short = {"hand_limit": 1}
    games = [clients[i].post(GAMES, json={"seats": BOTS, "rules": short}) for i in range(2)]
    assert [g.status_code for g in games] == [201, 201]
    full = clients[0].post(GAMES, json={"seats": BOTS})
    assert full.status_code == 503 and full.mimetype == PROBLEM
    assert full.get_json()["code"] == "bot-games-full"
    assert 1 <= int(full.headers["Retry-After"]) <= 60
    assert "2 games of bots only" in full.get_json()["detail"]
    # A game a person sits at is not capped.
    assert clients[1].post(GAMES, json={"seats": [None, *BOTS[1:]]}).status_code == 201
    assert service_of(apps[0]).bot_games.count() == 2

    # A runner plays the two games to their end: their places are free again.
    runner = build(
        Settings(key_prefix=key_prefix, max_bot_games=2, bot_poll_seconds=0.05),
        redis=redis.Redis.from_url(redis_server),
    )
    hearts = Hearts(runner.test_client())
    for answer in games:
        hearts.wait_for(answer.get_json()["id"], lambda v: v["phase"] == "finished", timeout=120)
    # The place is given back right after the game's last append, which a view may see first.
    deadline = time.monotonic() + 10
    while service_of(runner).bot_games.count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert service_of(runner).bot_games.count() == 0
    assert clients[0].post(GAMES, json={"seats": BOTS}).status_code == 201


@pytest.mark.parametrize("kind", ["fake", "real"])
def test_a_place_left_by_a_crash_drops_out_after_its_lifetime(kind, redis_server, key_prefix):
    client = fakeredis.FakeRedis() if kind == "fake" else redis.Redis.from_url(redis_server)
    games = BotGames(client, key_prefix)
    assert games.claim("g1", 1, lifetime_ms=200).claimed
    assert games.claim("g1", 1, lifetime_ms=200).claimed  # the same game again: its place
    refused = games.claim("g2", 1, lifetime_ms=200)
    assert not refused.claimed and refused.count == 1 and 0 < refused.wait_ms <= 200
    time.sleep(0.3)  # g1's process died without releasing it: it drops out
    assert games.claim("g2", 1, lifetime_ms=200).claimed and games.count() == 1
    games.release("g2")
    assert games.count() == 0


def test_a_retried_create_of_a_game_that_ended_takes_no_place(build, redis_client, key_prefix):
    settings = Settings(key_prefix=key_prefix, max_bot_games=1, bot_poll_seconds=0.05)
    app = build(settings, redis=redis_client)
    client = app.test_client()
    body = {"seats": BOTS, "rules": {"hand_limit": 1}}
    key = {"Idempotency-Key": "bounded-games-retry-0001"}
    first = client.post(GAMES, json=body, headers=key)
    assert first.status_code == 201
    Hearts(client).wait_for(first.get_json()["id"], lambda v: v["phase"] == "finished")
    # The place is given back right after the game's last append, which a view may see first.
    poll(lambda: service_of(app).bot_games.count(), lambda n: n == 0, timeout=10)
    again = client.post(GAMES, json=body, headers=key)
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.get_json()["id"] == first.get_json()["id"]
    assert service_of(app).bot_games.count() == 0  # the one place is free
    assert client.post(GAMES, json=body).status_code == 201


def test_a_game_created_before_the_bounds_replays_and_audits_as_it_was_played(
    build, redis_client, key_prefix
):
    # An old log: a score limit of 10,000 and no hand_limit in its GameCreated's rules, 12
    # hands played (more than a new game with hand_limit 11 could have).
    rules = RuleOptions.from_dict({"score_limit": 10_000}, recorded=True)
    log = random_game("gold0000000000001", rules, random.Random(5), max_hands=12)
    records = [new_event(e) for e in log]
    assert records[0].type == "GameCreated"
    records[0].payload["rules"].pop("hand_limit")  # as written before the option existed
    app = build(Settings(key_prefix=key_prefix, bot_runner=False), redis=redis_client)
    service_of(app).store.append("gold0000000000001", 0, records, "old-game")
    client = app.test_client()
    view = client.get(f"{GAMES}/gold0000000000001").get_json()
    assert view["rules"]["score_limit"] == 10_000 and view["rules"]["hand_limit"] is None
    assert view["hand_number"] == 12 and view["phase"] != "finished"
    assert client.get(f"{GAMES}/gold0000000000001/audit").get_json()["ok"]
    hand = client.get(f"{GAMES}/gold0000000000001/hands/12")
    assert hand.status_code == 200
