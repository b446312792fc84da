"""Issue 22, item 6 (the arranged half): a game whose deals its creator chose (a ``seed`` or
explicit ``deals`` in POST /games) could have every hand computed in advance, and the players
who joined were not told. Such a game is marked ``arranged`` in every view and in the game list,
and its figures stay out of the leaderboard and player statistics unless the operator counts
arranged games (``HEARTS_COUNT_ARRANGED_GAMES``); a rebuild equals the live projector."""

from __future__ import annotations

import fakeredis
import pytest

from domain.cards import DECK
from service.api.factory import create_app
from service.app.projector import Projector, rebuild
from service.settings import Settings
from service.store.read_models import ProjectionStore
from tests.api.helpers import Hearts, chosen_seed
from tests.background import settle
from tests.projections.helpers import drain

BOTS = [{"bot": "random"}] * 4
DEAL = [[str(c) for c in DECK[seat::4]] for seat in range(4)]


@pytest.fixture
def hearts() -> Hearts:
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return Hearts(create_app(Settings(key_prefix="arranged"), redis=redis).test_client())


def service(hearts: Hearts):
    return hearts.http.application.extensions["hearts"]


@pytest.mark.parametrize(
    ("body", "arranged"),
    [({}, False), ({"seed": chosen_seed("bluebird42")}, True), ({"deals": [DEAL]}, True)],
    ids=["random", "seed", "deals"],
)
def test_every_view_says_whether_the_game_is_arranged(hearts: Hearts, body, arranged):
    game = hearts.create([None, None, {"bot": "random"}, {"bot": "random"}], **body)
    joined = hearts.post(f"/api/v1/games/{game['id']}/seats", {"name": "ann"}).get_json()
    assert joined["view"]["arranged"] is arranged  # the join's answer: told before playing
    seat, token = hearts.join(game["id"], "bob")
    assert hearts.view(game["id"])["arranged"] is arranged
    assert hearts.view(game["id"], token, seat)["arranged"] is arranged
    state = hearts.http.get(f"/api/v1/games/{game['id']}/state?at=3").get_json()
    assert state["arranged"] is arranged
    listed = hearts.http.get("/api/v1/games").get_json()["games"]
    assert [g["arranged"] for g in listed if g["id"] == game["id"]] == [arranged]
    view = hearts.view(game["id"], token, seat)
    endpoint, move = hearts.move(view)
    result = hearts.post(f"/api/v1/games/{game['id']}/{endpoint}", move, token)
    assert result.get_json()["view"]["arranged"] is arranged


def test_the_game_list_filters_on_arranged(hearts: Hearts):
    plain = hearts.create([None] * 4)
    seeded = hearts.create([None] * 4, seed=chosen_seed("s"))
    dealt = hearts.create([None] * 4, deals=[DEAL])

    def ids(query: str) -> set[str]:
        response = hearts.http.get(f"/api/v1/games{query}")
        assert response.status_code == 200, response.get_json()
        return {g["id"] for g in response.get_json()["games"]}

    assert ids("?arranged=true") == {seeded["id"], dealt["id"]}
    assert ids("?arranged=false") == {plain["id"]}
    assert ids("") == {plain["id"], seeded["id"], dealt["id"]}


def test_the_documented_view_and_query_name_arranged(hearts: Hearts):
    spec = hearts.http.get("/api/v1/openapi.json").get_json()
    assert "arranged" in spec["components"]["schemas"]["PublicView"]["properties"]
    query = spec["paths"]["/api/v1/games"]["get"]["parameters"]
    assert "arranged" in {p["name"] for p in query}


def play_two_games(hearts: Hearts) -> tuple[str, str]:
    """One game dealt at random and one arranged, both played to the end by bots."""
    plain = hearts.create(BOTS, rules={"score_limit": 26})
    seeded = hearts.create(BOTS, rules={"score_limit": 26}, seed=chosen_seed("chosen"))
    for game in (plain, seeded):  # bots play in the background, after the answer
        hearts.wait_for(game["id"], lambda view: view["phase"] == "finished")
    return plain["id"], seeded["id"]


@pytest.mark.parametrize("count_arranged", [False, True])
def test_arranged_games_stay_out_of_the_statistics_unless_counted(hearts, count_arranged):
    plain, seeded = play_two_games(hearts)
    projections = ProjectionStore(service(hearts).store, count_arranged)
    drain(Projector(projections, consumer="live", blocking=False))
    generation = projections.current_generation()
    stats = projections.player("random", generation)
    assert stats is not None
    assert stats.count("games_finished") == (8 if count_arranged else 4)  # four seats a game
    assert projections.scoreboard(seeded).arranged is True
    assert projections.scoreboard(plain).arranged is False
    # The leaderboard is the merged statistics: the same figures.
    as_of = projections.as_of(generation)
    assert projections.players(as_of)["random"].count("games_finished") == stats.count(
        "games_finished"
    )
    # A rebuild from the log equals what the live projector built.
    before = projections.dump(generation)
    result = rebuild(projections, batch_size=7)
    assert projections.dump(result.generation) == before


def test_the_setting_is_read_from_the_environment():
    assert Settings.from_env({"HEARTS_COUNT_ARRANGED_GAMES": "true"}).count_arranged_games
    assert not Settings.from_env({}).count_arranged_games


def test_a_scoreboard_served_says_arranged():
    settings = Settings(key_prefix="arranged-api", projector_in_process=True)
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    app = create_app(settings, redis=redis)
    client = Hearts(app.test_client())
    game = client.create(BOTS, rules={"score_limit": 26}, seed=chosen_seed("chosen"))
    settle(app, [game["id"]])  # the bots played it out, the projector folded it
    response = client.http.get(f"/api/v1/games/{game['id']}/scoreboard")
    assert response.status_code == 200 and response.get_json()["status"] == "finished"
    assert response.get_json()["arranged"] is True
    assert "random" not in {
        row["name"] for row in client.http.get("/api/v1/leaderboard").get_json()["players"]
    }
    app.extensions["hearts.projector_stop"].set()
