"""Issue 32, item 9: stalling. Seeks defaulted to no clock, so a losing player could leave a
rated game waiting forever instead of losing it, and a guest could do the same to any game it
joined from the lobby. Now a seek always has a clock (``off`` is refused: a matched game is
rated), and a game without a clock whose awaited player has been silent for
``HEARTS_ABANDON_AFTER`` ends as abandoned (``GameAbandoned`` then ``GameEnded``), the seat
that left named. A game without a clock is never rated, even when registered players join it
with their keys (``POST /games``): a rated game's silent player is timed out by its clock instead
(and, away after timeouts in a row, has left: ranked last). With an injected clock (never a
sleep), like the expiry's tests."""

from __future__ import annotations

from datetime import timedelta
from typing import get_args

import pytest
from hearts_client.models import EventType

from domain.events import EVENT_TYPES
from projections.ratings import MIN_RATED_SCORE_LIMIT
from service.api.factory import create_app
from service.app.abandonment import abandon_silent
from service.app.expiry import iso
from service.app.game_service import GameService
from service.app.projector import Projector, rebuild
from service.settings import Settings
from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from tests.api.helpers import Hearts, auth
from tests.api.test_matchmaking import register
from tests.projections.helpers import drain
from tests.security.test_expiry import T0, Clock

AFTER = 600
GAMES = "/api/v1/games"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def built(redis_client, key_prefix, clock):
    store = RedisEventStore(redis_client, prefix=key_prefix, now=clock)
    service = GameService(store)
    app = create_app(Settings(key_prefix=key_prefix), service=service)
    yield app, service
    app.extensions["hearts.bots_stop"]()


def three_pass_and_one_is_silent(hearts: Hearts) -> tuple[str, int, dict[int, str]]:
    """A lobby game of four guests, no clock: three pass, the fourth never does."""
    game, tokens = hearts.new_game()
    view = hearts.view(game)
    assert view["phase"] == "passing" and view["rules"]["seconds_per_decision"] == 0
    silent = view["awaiting"][-1]
    for seat, token in tokens.items():
        if seat != silent:
            endpoint, body = hearts.move(hearts.view(game, token, seat))
            assert hearts.post(f"{GAMES}/{game}/{endpoint}", body, token).status_code == 200
    return game, silent, tokens


def test_a_silent_guest_holds_a_game_no_longer_than_the_setting(built, clock):
    app, service = built
    client = app.test_client()
    hearts = Hearts(client)
    game, silent, tokens = three_pass_and_one_is_silent(hearts)

    assert abandon_silent(service, T0 + timedelta(seconds=AFTER - 1), AFTER) == []
    assert hearts.view(game)["phase"] == "passing"

    clock.now = T0 + timedelta(seconds=AFTER + 1)
    assert abandon_silent(service, clock.now, AFTER) == [(game, silent)]
    view = hearts.view(game)
    assert view["phase"] == "finished" and view["abandoned_by"] == silent
    assert silent not in view["winners"]
    events = client.get(f"{GAMES}/{game}/events").get_json()["events"]
    assert [e["type"] for e in events][-2:] == ["GameAbandoned", "GameEnded"]
    assert events[-2]["payload"] == {"seat": silent, "at": iso(clock.now)}
    # Over: the silent seat's late move is refused, and nothing more is swept.
    endpoint, body = hearts.move({**hearts.view(game, tokens[silent], silent), "phase": "passing"})
    assert hearts.post(f"{GAMES}/{game}/{endpoint}", body, tokens[silent]).status_code == 409
    assert abandon_silent(service, T0 + timedelta(days=30), AFTER) == []


def test_a_move_in_time_keeps_the_game_going(built, clock):
    app, service = built
    hearts = Hearts(app.test_client())
    game, silent, tokens = three_pass_and_one_is_silent(hearts)
    clock.now = T0 + timedelta(seconds=AFTER - 10)
    endpoint, body = hearts.move(hearts.view(game, tokens[silent], silent))
    assert hearts.post(f"{GAMES}/{game}/{endpoint}", body, tokens[silent]).status_code == 200
    assert abandon_silent(service, T0 + timedelta(seconds=AFTER + 1), AFTER) == []
    assert hearts.view(game)["phase"] == "playing"


def test_a_game_with_a_clock_is_timed_out_instead(built, clock):
    app, service = built
    hearts = Hearts(app.test_client())
    game, _ = hearts.new_game(rules={"time_control": "quick"})
    assert abandon_silent(service, T0 + timedelta(days=1), AFTER) == []
    assert hearts.view(game)["phase"] == "passing"
    assert service.store.silent_since_before(iso(T0 + timedelta(days=1))) == []


def test_an_abandoned_game_audits_exports_imports_and_its_hand_says_who_left(built, clock):
    app, service = built
    client = app.test_client()
    hearts = Hearts(client)
    game, silent, _ = three_pass_and_one_is_silent(hearts)
    abandon_silent(service, T0 + timedelta(seconds=AFTER + 1), AFTER)
    audit = client.get(f"{GAMES}/{game}/audit").get_json()
    assert audit["ok"] is True, audit["discrepancies"]
    hand = client.get(f"{GAMES}/{game}/hands/1").get_json()
    assert hand["abandoned_by"] == silent and hand["game_over"] is True
    text = client.get(f"{GAMES}/{game}/export?format=text").get_data(as_text=True)
    assert "left the game" in text
    document = client.get(f"{GAMES}/{game}/export").get_json()
    imported = client.post(f"{GAMES}/import", json=document)
    assert imported.status_code == 201, imported.get_json()
    assert hearts.view(imported.get_json()["id"])["abandoned_by"] == silent


def test_a_seek_always_has_a_clock(built):
    app, _ = built
    client = app.test_client()
    key = register(client)
    refused = client.post("/api/v1/seeks", json={"time_control": "off"}, headers=auth(key))
    assert refused.status_code == 422 and refused.get_json()["code"] == "invalid-seek"
    posted = client.post("/api/v1/seeks", json={"players": 3}, headers=auth(key))
    assert posted.status_code == 201 and posted.get_json()["time_control"] != "off"


def test_the_documents_and_the_client_know_the_event(built):
    app, _ = built
    spec = app.test_client().get("/api/v1/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    assert "GameAbandoned" in schemas["Event"]["properties"]["type"]["enum"]
    assert "abandoned_by" in schemas["PublicView"]["properties"]

    assert set(get_args(EventType)) == {*EVENT_TYPES, "DealPlan", "SeedCommitted"}


def _registered_table(hearts: Hearts, rules: dict) -> tuple[str, dict[int, str], dict[int, str]]:
    """A ``POST /games`` game four registered players join with their keys: (game id, each
    seat's key, each seat's token)."""
    client = hearts.http
    game = hearts.create(rules=rules)["id"]
    keys, tokens = {}, {}
    for _ in range(4):
        key = register(client)
        joined = client.post(f"{GAMES}/{game}/seats", json={}, headers=auth(key)).get_json()
        keys[joined["seat"]], tokens[joined["seat"]] = key, joined["token"]
    return game, keys, tokens


def _ratings(service: GameService) -> tuple[ProjectionStore, dict]:
    projections = ProjectionStore(service.store)
    drain(Projector(projections, consumer="live", blocking=False))
    return projections, projections.ratings(projections.as_of(projections.current_generation()))


def test_a_clockless_game_of_registered_players_is_not_rated(built):
    app, service = built
    hearts = Hearts(app.test_client())
    rated = {"score_limit": MIN_RATED_SCORE_LIMIT}
    clockless, _, tokens = _registered_table(hearts, rated)
    assert hearts.view(clockless)["rules"]["seconds_per_decision"] == 0
    hearts.play_out(clockless, tokens)
    clocked, _, tokens = _registered_table(hearts, {**rated, "time_control": "relaxed"})
    hearts.play_out(clocked, tokens)
    projections, ratings = _ratings(service)
    for game in (clockless, clocked):
        assert hearts.view(game)["phase"] == "finished"
    # Four registered players played each out; only the clocked one counts, for its four.
    ids = {s["player_id"] for game in (clockless, clocked) for s in hearts.view(game)["seats"]}
    assert len(ids) == 8
    counted = {p: [h.game_id for h in r.history] for p, r in ratings.items() if p in ids}
    assert sorted(counted.values()) == [[clocked]] * 4


def test_an_abandoned_game_moves_no_rating_and_a_rebuild_agrees(built, clock):
    app, service = built
    client = app.test_client()
    hearts = Hearts(client)
    game, keys, tokens = _registered_table(hearts, {})
    silent = hearts.view(game)["awaiting"][-1]
    for seat, token in tokens.items():
        if seat != silent:
            endpoint, body = hearts.move(hearts.view(game, token, seat))
            hearts.post(f"{GAMES}/{game}/{endpoint}", body, token)
    assert abandon_silent(service, T0 + timedelta(seconds=AFTER + 1), AFTER) == [(game, silent)]
    # Each player's own stream says the game finished, and who left it.
    feed = client.get("/api/v1/players/me/events?after=0-0", headers=auth(keys[silent]))
    finish = [n for n in feed.get_json()["events"] if n["type"] == "gameFinish"]
    assert [n["abandoned_by"] for n in finish] == [silent]
    projections, ratings = _ratings(service)
    # Only a clockless game is abandoned, and a clockless game is unrated: nobody's rating
    # moves, the leaver's included (a rated game's silent player is timed out instead).
    ids = {s["player_id"] for s in hearts.view(game)["seats"]}
    assert all(pid not in ratings or not ratings[pid].history for pid in ids)
    assert projections.scoreboard(game).abandoned_by == silent
    generation = projections.current_generation()
    before = projections.dump(generation)
    assert projections.dump(rebuild(projections, batch_size=3).generation) == before
