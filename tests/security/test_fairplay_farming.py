"""Issue 32, item 3: rating farming. Four throw-away accounts joined a ``score_limit: 1`` game
with their keys and handed their seats to bots (the main one ``heuristic``, the others
``random``): 7 rated games in 60 s put the main account first on ``/leaderboard``.

Now (docs/projections.md, "What is rated"): a seat its player hands to a bot has left (ranked
last; a game every seat left is unrated, and one only one player played out credits nobody
who stayed); a game shorter than the rated minimum is unrated; a rating stays provisional, and
off the leaderboard, until enough games against enough distinct opponents. Played here through
the API with the service's own bots, and the ratings after it equal a rebuild from the log.
"""

from __future__ import annotations

import time

import fakeredis
import pytest

from projections.ratings import MIN_RATED_SCORE_LIMIT
from service.api.factory import create_app
from service.app.projector import Projector, rebuild
from service.settings import Settings
from service.store.read_models import ProjectionStore
from tests.api.helpers import Hearts, auth
from tests.projections.helpers import drain


@pytest.fixture
def hearts():
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    # Rated games have a turn clock, at which bots standing in for every person play at a
    # person's pace (bot_away_pace): no pace here, or the farm's games take minutes.
    # Each farm game ends as a game of bots only made by hand-overs, which counts against
    # the all-bot limit of the address (issue 42), and spends a game of bots' bytes from its
    # storage budget (nine games in seconds: ~2.6 MB): both lifted here, the ratings are the
    # point.
    settings = Settings(
        key_prefix="farm",
        bot_away_pace=0,
        rate_limit_bot_games="1000/minute",
        rate_limit_storage="off",
    )
    app = create_app(settings, redis=redis)
    yield Hearts(app.test_client())
    app.extensions["hearts.bots_stop"]()


def _register(hearts: Hearts, name: str) -> dict:
    response = hearts.http.post("/api/v1/players", json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _seat_all(hearts: Hearts, keys: list[str], score_limit: int) -> tuple[str, list[tuple]]:
    """A game the accounts join with their keys: (game id, [(seat, seat token)] in key order)."""
    # With a turn clock: a clockless game is unrated anyway (tests/security/test_stalling.py).
    rules = {"score_limit": score_limit, "time_control": "relaxed"}
    game = hearts.create([None] * 4, rules=rules)["id"]
    seats = []
    for key in keys:
        response = hearts.post(f"/api/v1/games/{game}/seats", {}, key)
        while response.status_code == 429:  # the farm joins from one address: waits as a client
            time.sleep(float(response.headers["Retry-After"]))
            response = hearts.post(f"/api/v1/games/{game}/seats", {}, key)
        assert response.status_code == 201, response.get_json()
        seats.append((response.get_json()["seat"], response.get_json()["token"]))
    return game, seats


def _hand_to_bot(hearts: Hearts, game: str, seat: int, token: str, bot: str) -> None:
    response = hearts.http.post(
        f"/api/v1/games/{game}/seats/{seat}/bot", json={"bot": bot}, headers=auth(token)
    )
    assert response.status_code == 200, response.get_json()


def _farm(hearts: Hearts, keys: list[str], score_limit: int) -> str:
    """The attack: every seat handed to a bot, the main one (first key) a heuristic one."""
    game, seats = _seat_all(hearts, keys, score_limit)
    for i, (seat, token) in enumerate(seats):
        _hand_to_bot(hearts, game, seat, token, "heuristic" if i == 0 else "random")
    hearts.wait_for(game, lambda view: view["phase"] == "finished")
    return game


def _project(hearts: Hearts) -> ProjectionStore:
    service = hearts.http.application.extensions["hearts"]
    projections = ProjectionStore(service.store)
    drain(Projector(projections, consumer="farm", blocking=False))
    return projections


def test_a_farm_of_seats_handed_to_bots_leaves_the_account_off_the_leaderboard(hearts):
    accounts = [_register(hearts, name) for name in ("Farmer", "Throw1", "Throw2", "Throw3")]
    keys = [a["key"] for a in accounts]
    farmer = accounts[0]["id"]
    # As found: seven games at score limit 1, every seat handed to a bot.
    for _ in range(7):
        _farm(hearts, keys, score_limit=1)
    # The shortest game a rating counts, every seat handed to a bot.
    _farm(hearts, keys, score_limit=MIN_RATED_SCORE_LIMIT)
    # The farmer plays its own seat (a program may), the three others leave it to bots.
    game, seats = _seat_all(hearts, keys, MIN_RATED_SCORE_LIMIT)
    for seat, token in seats[1:]:
        _hand_to_bot(hearts, game, seat, token, "random")
    hearts.play_out(game, {seats[0][0]: seats[0][1]})

    projections = _project(hearts)
    board = hearts.http.get("/api/v1/leaderboard?limit=100").get_json()
    assert farmer not in {row["player_id"] for row in board["players"]}
    ratings = hearts.http.get(f"/api/v1/ratings/{farmer}").get_json()
    assert ratings["rated_games"] == 0 and ratings["provisional"] is True
    assert ratings["rating"] is None and ratings["history"] == []
    # The throw-away accounts left the last game: each a loss, ranked below the farmer.
    for account in accounts[1:]:
        thrown = hearts.http.get(f"/api/v1/ratings/{account['id']}").get_json()
        assert [p["game_id"] for p in thrown["history"]] == [game]
        assert thrown["history"][0]["rank"] == 2 and thrown["provisional"] is True
    player = hearts.http.get("/api/v1/players/Throw1").get_json()
    assert player["provisional"] is True and player["rated_games"] == 1
    # The scoreboard says which seats were left to a bot by their players.
    seats_shown = hearts.http.get(f"/api/v1/games/{game}/scoreboard").get_json()["seats"]
    assert sorted(s["left"] for s in seats_shown) == [False, True, True, True]

    # A rebuild from the log gives the same ratings as the live projector.
    generation = projections.current_generation()
    live = projections.ratings(projections.as_of(generation))
    before = projections.dump(generation)
    rebuilt = rebuild(projections, batch_size=13).generation
    assert projections.dump(rebuilt) == before
    assert ProjectionStore(projections.store).ratings(projections.as_of(rebuilt)) == live
