"""Issue 22 item 8 (and the waiting part of issue 19): a game whose seats are never all taken
does not wait forever. With an injected clock (never a sleep): a waiting game expires after the
setting's time with a GameExpired event, leaves the lobby, refuses joins; a game that started
never expires; the expired game's log passes its audit, exports and streams like any other."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import fakeredis
import pytest

from service.api.factory import create_app
from service.app.expiry import expire_waiting, iso, start_expiry
from service.app.game_service import GameService
from service.settings import Settings
from service.store.event_store import RedisEventStore
from tests.api.helpers import PROBLEM, Hearts, auth

TTL = 3600
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
GAMES = "/api/v1/games"


class Clock:
    """The time the store stamps on appends (and so a game's creation time), set by the test."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> str:
        return iso(self.now)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def redis():
    return fakeredis.FakeRedis(server=fakeredis.FakeServer())


def build(redis, key_prefix: str, clock: Clock):
    store = RedisEventStore(redis, prefix=key_prefix, now=clock)
    service = GameService(store)
    app = create_app(Settings(key_prefix=key_prefix, waiting_game_ttl=TTL), service=service)
    return app, service


@pytest.fixture
def app_and_service(redis, key_prefix, clock):
    return build(redis, key_prefix, clock)


def lobby(client, status: str = "waiting") -> set[str]:
    response = client.get(f"{GAMES}?status={status}")
    assert response.status_code == 200, response.get_json()
    return {game["id"] for game in response.get_json()["games"]}


def test_a_waiting_game_expires_after_its_time_and_not_before(app_and_service):
    app, service = app_and_service
    client = app.test_client()
    hearts = Hearts(client)
    game = hearts.create()["id"]
    hearts.join(game, "ann")  # one seat taken, three open: still waiting
    assert game in lobby(client)

    assert expire_waiting(service, T0 + timedelta(seconds=TTL - 1), TTL) == []
    assert hearts.view(game)["phase"] == "waiting"

    assert expire_waiting(service, T0 + timedelta(seconds=TTL + 1), TTL) == [game]
    view = hearts.view(game)
    assert view["phase"] == "expired"
    assert game not in lobby(client)
    assert game in lobby(client, "expired")
    events = client.get(f"{GAMES}/{game}/events").get_json()["events"]
    assert [e["type"] for e in events][-1] == "GameExpired"
    assert events[-1]["payload"]["at"] == iso(T0 + timedelta(seconds=TTL + 1))

    # Nothing more happens in it: a join is refused with its own problem type.
    refused = client.post(f"{GAMES}/{game}/seats", json={"name": "bob"})
    assert refused.status_code == 409
    assert refused.mimetype == PROBLEM
    assert refused.get_json()["code"] == "game-expired"
    # A second sweep finds nothing to do.
    assert expire_waiting(service, T0 + timedelta(days=30), TTL) == []


def test_a_started_game_never_expires(app_and_service, clock):
    app, service = app_and_service
    hearts = Hearts(app.test_client())
    game, _ = hearts.new_game()  # four players: dealt at once
    bots = hearts.create([{"bot": "random"}] * 4)["id"]  # no open seat at all
    assert hearts.view(game)["phase"] == "passing"
    assert expire_waiting(service, T0 + timedelta(days=365), TTL) == []
    assert hearts.view(game)["phase"] == "passing"
    assert hearts.view(bots)["phase"] != "expired"
    # The waiting index holds no game that started: the sweep reads no game it cannot expire.
    assert service.store.waiting_since_before(iso(T0 + timedelta(days=365))) == []


def test_the_audit_of_an_expired_game_is_clean_and_it_exports(app_and_service):
    app, service = app_and_service
    client = app.test_client()
    game = Hearts(client).create()["id"]
    expire_waiting(service, T0 + timedelta(seconds=TTL * 2), TTL)
    audit = client.get(f"{GAMES}/{game}/audit").get_json()
    assert audit["ok"] is True, audit["discrepancies"]
    assert audit["discrepancies"] == []
    exported = client.get(f"{GAMES}/{game}/export")
    assert exported.status_code == 200, exported.get_json()
    document = exported.get_json()
    assert document["phase"] == "expired"
    assert "expired" in client.get(f"{GAMES}/{game}/export?format=text").get_data(as_text=True)
    # The export imports again (its audit passes) as a game that is over.
    imported = client.post(f"{GAMES}/import", json=document)
    assert imported.status_code == 201, imported.get_json()
    assert Hearts(client).view(imported.get_json()["id"])["phase"] == "expired"


def test_a_seat_and_a_stream_of_an_expired_game(app_and_service):
    app, service = app_and_service
    client = app.test_client()
    hearts = Hearts(client)
    game = hearts.create()["id"]
    _, token = hearts.join(game, "ann")
    expire_waiting(service, T0 + timedelta(seconds=TTL + 1), TTL)
    # The seat's own view and resume say the game is over; a live stream has nothing to send.
    seat = client.get(f"{GAMES}/{game}", headers=auth(token)).get_json()
    assert seat["phase"] == "expired"
    resume = client.get(f"{GAMES}/{game}/resume", headers=auth(token)).get_json()
    assert resume["next_action"] == {"action": "none", "reason": "expired"}
    # A live stream sends the log and ends; asked from its end, it has nothing more, ever.
    sse = {"Accept": "text/event-stream"}
    stream = client.get(f"{GAMES}/{game}/events", headers=sse)
    assert stream.status_code == 200
    text = stream.get_data(as_text=True)
    assert "GameExpired" in text
    assert 'event: end\ndata: {"reason": "expired"' in text
    version = seat["version"]
    after = client.get(f"{GAMES}/{game}/events", headers={**sse, "Last-Event-ID": str(version)})
    assert after.status_code == 204
    handed = client.post(f"{GAMES}/{game}/seats/0/bot", json={"bot": "random"}, headers=auth(token))
    assert handed.status_code == 409
    assert handed.get_json()["code"] == "game-expired"


def test_two_sweepers_expire_a_game_once(redis, key_prefix, clock):
    (app, one), (_, two) = build(redis, key_prefix, clock), build(redis, key_prefix, clock)
    client = app.test_client()
    game = Hearts(client).create()["id"]
    later = T0 + timedelta(seconds=TTL + 1)
    assert expire_waiting(one, later, TTL) + expire_waiting(two, later, TTL) == [game]
    types = [e["type"] for e in client.get(f"{GAMES}/{game}/events").get_json()["events"]]
    assert types.count("GameExpired") == 1


def test_a_join_that_fills_the_table_takes_the_game_out_of_the_sweep(app_and_service):
    app, service = app_and_service
    hearts = Hearts(app.test_client())
    game = hearts.create([None, None, {"bot": "random"}, {"bot": "random"}])["id"]
    hearts.join(game, "ann")
    assert service.store.waiting_since_before(iso(T0 + timedelta(days=1))) == [game]
    hearts.join(game, "bob")
    assert service.store.waiting_since_before(iso(T0 + timedelta(days=1))) == []


def test_the_background_sweep_expires_on_its_clock(app_and_service):
    app, service = app_and_service
    hearts = Hearts(app.test_client())
    game = hearts.create()["id"]
    stop = start_expiry(service, TTL, interval=0.05, clock=lambda: T0 + timedelta(seconds=TTL + 5))
    try:
        deadline = time.monotonic() + 30
        while hearts.view(game)["phase"] != "expired":
            assert time.monotonic() < deadline, "the sweep did not expire the game"
            time.sleep(0.05)
    finally:
        stop.set()  # else it sweeps 20 times a second for the rest of the worker's run


def test_the_waiting_time_is_a_setting():
    assert Settings().waiting_game_ttl == 24 * 60 * 60
    assert Settings.from_env({"HEARTS_WAITING_GAME_TTL": "600"}).waiting_game_ttl == 600
    assert Settings.from_env({"HEARTS_WAITING_GAME_TTL": "0"}).waiting_game_ttl == 0


def test_expiry_on_every_backend(redis_client, key_prefix, clock):
    """The waiting index lives in each game's partition (one slot on a cluster, written by the
    append script) and is read one partition at a time: fakeredis, a redis-server, a cluster."""
    app, service = build(redis_client, key_prefix, clock)
    hearts = Hearts(app.test_client())
    waiting = {hearts.create()["id"] for _ in range(5)}
    started, _ = hearts.new_game()
    later = T0 + timedelta(seconds=TTL + 1)
    assert set(service.store.waiting_since_before(iso(later))) == waiting
    assert set(expire_waiting(service, later, TTL)) == waiting
    assert {hearts.view(g)["phase"] for g in waiting} == {"expired"}
    assert hearts.view(started)["phase"] == "passing"
    assert service.store.waiting_since_before(iso(later)) == []


def test_the_scoreboard_of_an_expired_game_says_so(redis, key_prefix, clock):
    """The projections count the expiry: the game's scoreboard status is expired."""
    store = RedisEventStore(redis, prefix=key_prefix, now=clock)
    service = GameService(store)
    settings = Settings(key_prefix=key_prefix, projector_in_process=True)
    app = create_app(settings, service=service)
    try:
        client = app.test_client()
        game = Hearts(client).create()["id"]
        expire_waiting(service, T0 + timedelta(seconds=TTL + 1), TTL)
        path = f"{GAMES}/{game}/scoreboard"
        deadline = time.monotonic() + 30
        while (client.get(path).get_json() or {}).get("status") != "expired":
            assert time.monotonic() < deadline, client.get(path).get_json()
            time.sleep(0.05)
        assert client.get(path).get_json()["as_of"]["seq"] == store.version(game)
    finally:
        app.extensions["hearts.projector_stop"].set()
