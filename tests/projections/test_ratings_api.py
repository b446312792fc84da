"""Players on the leaderboard (issue 20): a seat joined with a key counts under the registered
player, a guest who typed the same name counts apart; ratings of rated games through the API."""

from __future__ import annotations

import pytest

from projections.ratings import MIN_RATED_SCORE_LIMIT
from service.api.factory import create_app
from service.api.projections import projections as app_projections
from service.api.projections import rating_book
from service.app.projector import Projector
from service.settings import Settings
from tests.api.helpers import PROBLEM, Hearts, auth
from tests.projections.helpers import drain

BOT = {"bot": "random"}
RULES = {"score_limit": MIN_RATED_SCORE_LIMIT, "time_control": "relaxed"}  # the shortest rated game
QUICK = {"score_limit": 20}  # for games unrated anyway


@pytest.fixture
def app(real_redis, key_prefix):
    app = create_app(Settings(key_prefix=key_prefix), redis=real_redis)
    yield app
    app.extensions["hearts.bots_stop"]()


@pytest.fixture
def client(app):
    return app.test_client()


def _register(client, name: str) -> dict:
    response = client.post("/api/v1/players", json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _join_with_key(client, game_id: str, key: str) -> tuple[int, str]:
    response = client.post(f"/api/v1/games/{game_id}/seats", json={}, headers=auth(key))
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    return body["seat"], body["token"]


def _project(app) -> None:
    with app.app_context():
        drain(Projector(app_projections(), consumer="ratings-test"))


def _rows(client, name: str) -> list[dict]:
    rows = client.get("/api/v1/leaderboard?sort=games_played&limit=100").get_json()["players"]
    return [r for r in rows if r["name"] == name]


def test_a_keyed_seat_counts_under_the_player_and_a_guest_of_that_name_apart(app, client):
    hearts = Hearts(client)
    # A guest typed "ann" before anyone registered it: one finished game.
    game = hearts.create([None, BOT, BOT, BOT], rules=QUICK)["id"]
    seat, token = hearts.join(game, "ann")
    hearts.play_out(game, {seat: token})
    # Then "Ann" is registered, and plays two games with her key: one against bots (not
    # rated), one against three other registered players (rated).
    ann = _register(client, "Ann")
    game = hearts.create([None, BOT, BOT, BOT], rules=QUICK)["id"]
    seat, token = _join_with_key(client, game, ann["key"])
    hearts.play_out(game, {seat: token})
    others = [_register(client, name) for name in ("Bob", "Cy", "Dee")]
    game = hearts.create([None, None, None, None], rules=RULES)["id"]
    tokens = dict(_join_with_key(client, game, p["key"]) for p in [ann, *others])
    hearts.play_out(game, tokens)
    _project(app)

    by_kind = {r["kind"]: r for r in _rows(client, "ann") + _rows(client, "Ann")}
    assert set(by_kind) == {"player", "guest"}
    player, guest = by_kind["player"], by_kind["guest"]
    assert player["name"] == "Ann" and player["player_id"] == ann["id"]
    assert player["games_played"] == player["games_finished"] == 2
    assert player["rated_games"] == 1 and player["provisional"] is True
    assert player["rated_opponents"] == 3
    assert player["rating"] is not None and player["mu"] is not None
    assert guest["name"] == "ann" and guest["player_id"] is None
    assert guest["games_played"] == 1 and guest["rating"] is None
    # The default order is the rating, of established ratings only: one rated game is
    # provisional, so nobody is ranked yet; by another figure everyone has a row.
    board = client.get("/api/v1/leaderboard").get_json()
    assert board["sort"] == "rating" and board["players"] == [] and board["total"] == 0
    rows = client.get("/api/v1/leaderboard?sort=games_played&limit=100").get_json()["players"]
    rated = [r for r in rows if r["rating"] is not None]
    assert {r["player_id"] for r in rated} == {ann["id"], *(p["id"] for p in others)}
    assert all(r["provisional"] for r in rated)
    assert {r["kind"] for r in rows if r["rating"] is None} == {"guest", "bot"}

    # A registered name, in any spelling, names the player's figures.
    body = client.get("/api/v1/players/ANN").get_json()
    assert body["player_id"] == ann["id"] and body["games_played"] == 2
    assert len(body["recent_games"]) == 2
    # The rating history: one point per rated game.
    ratings = client.get(f"/api/v1/ratings/{ann['id']}").get_json()
    assert ratings["name"] == "Ann" and ratings["rated_games"] == 1
    assert [p["game_id"] for p in ratings["history"]] == [game]
    assert ratings["history"][-1]["rating"] == ratings["rating"] == player["rating"]
    with app.app_context():
        assert rating_book().rating(ann["id"]) == ratings["rating"]
        assert rating_book().rating("p" + "0" * 20) is None
    # The scoreboard names each seat's player.
    seats = client.get(f"/api/v1/games/{game}/scoreboard").get_json()["seats"]
    assert sorted(s["player_id"] for s in seats) == sorted([ann["id"], *(p["id"] for p in others)])


def test_ratings_of_an_unknown_player_and_the_reserved_name_me(app, client):
    for bad in ("p" + "0" * 20, "nobody", "me"):
        response = client.get(f"/api/v1/ratings/{bad}")
        assert response.status_code == 404 and response.mimetype == PROBLEM
        assert response.get_json()["code"] == "player-not-found"
    bea = _register(client, "Bea")
    body = client.get(f"/api/v1/ratings/{bea['id']}").get_json()
    assert body["rating"] is None and body["history"] == [] and body["provisional"] is True
    # /players/me is one's own account: nobody may be named "me", registered or guest.
    for name in ("me", "ME", "ｍｅ"):
        response = client.post("/api/v1/players", json={"name": name})
        assert response.status_code == 422 and response.get_json()["code"] == "name-reserved"
    game = Hearts(client).create([None, BOT, BOT, BOT])["id"]
    response = client.post(f"/api/v1/games/{game}/seats", json={"name": "Me"})
    assert response.status_code == 422 and response.get_json()["code"] == "name-reserved"
