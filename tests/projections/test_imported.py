"""An imported game says so, and stays out of the player statistics: a game played here and
imported again, or imported twice, is counted once (issue 18 item 6)."""

from __future__ import annotations

import fakeredis

from service.api.factory import create_app
from service.app.projector import Projector, rebuild
from service.settings import Settings
from service.store.read_models import ProjectionStore
from tests.api.helpers import Hearts
from tests.projections.helpers import drain

BOTS = [{"bot": "random"}] * 4


def test_an_imported_game_is_marked_and_counted_once() -> None:
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    app = create_app(Settings(key_prefix="imported"), redis=redis)
    hearts = Hearts(app.test_client())
    game = hearts.create(BOTS, rules={"score_limit": 26})["id"]  # dealt by the server: counted
    hearts.wait_for(game, lambda view: view["phase"] == "finished")
    export = hearts.http.get(f"/api/v1/games/{game}/export").get_json()
    first = hearts.http.post("/api/v1/games/import", json=export)
    again = hearts.http.post("/api/v1/games/import", json=export)
    assert (first.status_code, again.status_code) == (201, 200)  # the same game, not a second
    copy = first.get_json()["id"]
    assert again.get_json()["id"] == copy
    assert hearts.view(copy)["imported"] is True and hearts.view(game)["imported"] is False
    listed = hearts.http.get("/api/v1/games?status=finished").get_json()["games"]
    assert {g["id"]: g["imported"] for g in listed} == {game: False, copy: True}
    # The copy says of which game (issue 44: the lobby showed two identical rows).
    assert {g["id"]: g["imported_from"] for g in listed} == {game: None, copy: game}
    assert hearts.view(copy)["imported_from"] == game

    projections = ProjectionStore(app.extensions["hearts"].store)
    drain(Projector(projections, consumer="live", blocking=False))
    generation = projections.current_generation()
    assert projections.scoreboard(copy).imported and not projections.scoreboard(game).imported
    stats = projections.player("random", generation)
    assert stats is not None and stats.count("games_finished") == 4  # the original's four seats
    before = projections.dump(generation)
    assert projections.dump(rebuild(projections, batch_size=5).generation) == before
    app.extensions["hearts.bots_stop"]()
