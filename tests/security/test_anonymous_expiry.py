"""Issue 42, "Preset deals": a waiting game (with its preset deals) was kept 24 h whoever created
it. A game created without a player's key now expires after HEARTS_ANONYMOUS_WAITING_GAME_TTL
(an hour by default); a registered player's waits HEARTS_WAITING_GAME_TTL. A key that no longer
works is 401, and nothing is created. Time is injected (the store's clock, the sweep's now)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import fakeredis

from service.api.factory import create_app
from service.app.expiry import anonymous_head_start, expire_waiting, iso
from service.app.game_service import GameService
from service.settings import Settings
from service.store.event_store import RedisEventStore
from tests.api.helpers import PROBLEM, auth

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
DAY, HOUR = 86400, 3600
GAMES = "/api/v1/games"


def build(**settings):
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    service = GameService(RedisEventStore(redis, prefix="anon", now=lambda: iso(T0)))
    app = create_app(Settings(key_prefix="anon", **settings), service=service)
    return app.test_client(), service


def create(client, headers=None):
    return client.post(GAMES, json={"seats": [None] * 4}, headers=headers or {})


def register(client, name: str) -> str:
    response = client.post("/api/v1/players", json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["key"]


def phase(client, game: str) -> str:
    return client.get(f"{GAMES}/{game}").get_json()["phase"]


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_an_anonymous_waiting_game_expires_after_the_shorter_time():
    client, service = build()  # the defaults: a day, an hour for an anonymous creator
    anonymous = create(client).get_json()["id"]
    keyed = create(client, auth(register(client, "Ann"))).get_json()["id"]

    assert expire_waiting(service, at(HOUR - 1), DAY) == []
    assert expire_waiting(service, at(HOUR + 1), DAY) == [anonymous]
    assert phase(client, anonymous) == "expired"
    assert phase(client, keyed) == "waiting"
    assert expire_waiting(service, at(DAY - 1), DAY) == []
    assert expire_waiting(service, at(DAY + 1), DAY) == [keyed]


def test_the_setting_sets_the_anonymous_time_and_zero_is_the_waiting_time():
    client, service = build(anonymous_waiting_game_ttl=2 * HOUR)
    game = create(client).get_json()["id"]
    assert expire_waiting(service, at(2 * HOUR - 1), DAY) == []
    assert expire_waiting(service, at(2 * HOUR + 1), DAY) == [game]

    client, service = build(anonymous_waiting_game_ttl=0)
    game = create(client).get_json()["id"]
    assert expire_waiting(service, at(DAY - 1), DAY) == []
    assert expire_waiting(service, at(DAY + 1), DAY) == [game]
    assert anonymous_head_start(DAY, 2 * DAY) == 0  # never longer than a keyed creator's
    assert anonymous_head_start(0, HOUR) == 0  # waiting games that never expire


def test_a_revoked_key_is_401_and_creates_nothing():
    client, _ = build()
    key = register(client, "Bea")
    assert client.delete("/api/v1/players/me/key", headers=auth(key)).status_code == 200
    refused = create(client, auth(key))
    assert refused.status_code == 401
    assert refused.mimetype == PROBLEM
    assert client.get(GAMES).get_json()["games"] == []
