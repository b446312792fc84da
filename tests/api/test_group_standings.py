"""Issue 44: a board of the games among a chosen group of players, so four friends see their
standings (``GET /api/v1/standings?players=...``): only the games whose every seat was one of
them count, ratings are shown with ``provisional``, bad groups are problems."""

from __future__ import annotations

import fakeredis
import pytest

from projections.standings import MAX_GROUP
from service.api.factory import create_app
from service.app.projector import Projector
from service.settings import Settings
from service.store.read_models import ProjectionStore
from tests.api.helpers import Hearts
from tests.projections.helpers import drain

FRIENDS = ("Ann", "Bob", "Cy", "Dee")


@pytest.fixture
def hearts():
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    app = create_app(Settings(key_prefix="group"), redis=redis)
    yield Hearts(app.test_client())
    app.extensions["hearts.bots_stop"]()


def _game(hearts: Hearts, names: tuple[str | None, ...]) -> str:
    seats = [None if name is not None else {"bot": "random"} for name in names]
    game = hearts.create(seats, rules={"score_limit": 20})["id"]
    tokens = {}
    for seat, name in enumerate(names):
        if name is not None:
            tokens[seat] = hearts.join(game, name, seat)[1]
    hearts.play_out(game, tokens)
    return game


def _project(hearts: Hearts) -> None:
    service = hearts.http.application.extensions["hearts"]
    drain(Projector(ProjectionStore(service.store), consumer="group", blocking=False))


@pytest.mark.unlimited("several games joined from one test client address")
def test_four_friends_see_their_standings_over_their_games_only(hearts):
    among = [_game(hearts, FRIENDS), _game(hearts, FRIENDS[1:] + FRIENDS[:1])]
    _game(hearts, ("Ann", "Bob", "Cy", None))  # a bot sat in: not among the group only
    _project(hearts)
    body = hearts.http.get("/api/v1/standings?players=Ann,Bob,Cy,Dee").get_json()
    assert body["games"] == len(among)
    rows = {row["name"]: row for row in body["players"]}
    assert set(rows) == set(FRIENDS)
    assert all(row["games"] == 2 for row in rows.values())
    # Each member's wins and average final points, from the games' scoreboards.
    totals: dict[str, list[int]] = {name: [] for name in FRIENDS}
    wins = dict.fromkeys(totals, 0)
    for game in among:
        board = hearts.http.get(f"/api/v1/games/{game}/scoreboard").get_json()
        for seat in board["seats"]:
            totals[seat["name"]].append(board["totals"][seat["seat"]])
            wins[seat["name"]] += seat["seat"] in board["winners"]
    for name, row in rows.items():
        assert row["wins"] == wins[name]
        assert row["average_points"] == sum(totals[name]) / 2
        assert row["rating"] is None and row["provisional"] is True  # guests: no rating
    assert [row["wins"] for row in body["players"]] == sorted(wins.values(), reverse=True)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?players=",
        "?players=Ann",
        "?players=Ann,,Bob",
        "?players=Ann,Ann",
        "?players=" + ",".join(f"p{i}" for i in range(MAX_GROUP + 1)),
        "?players=" + "x" * 1001,
    ],
)
def test_a_bad_group_is_a_problem(hearts, query):
    response = hearts.http.get(f"/api/v1/standings{query}")
    assert response.status_code == 400
    assert response.content_type == "application/problem+json"
    assert response.get_json()["type"].endswith("invalid-group")
