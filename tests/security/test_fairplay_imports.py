"""Imports stay guests (issue 32, item 7): an export whose guest is renamed to a registered
player, its chain recomputed, still imports (it is a consistent game), but the copy never shows
as that player's: not in the game list filtered by the name, not in the player's games, not in
the player's figures. The import answer and the game list say the game is imported."""

from __future__ import annotations

import fakeredis
import pytest

from service.api.factory import create_app
from service.app.projector import Projector
from service.settings import Settings
from service.store.read_models import ProjectionStore
from tests.api.helpers import Hearts, auth
from tests.projections.helpers import drain
from tests.replay.tamper import rehash

BOTS = [{"bot": "random"}] * 3


@pytest.fixture
def app():
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    app = create_app(Settings(key_prefix="fairplay-imports"), redis=redis)
    yield app
    app.extensions["hearts.bots_stop"]()


def forged_export(hearts: Hearts, guest: str, victim: str) -> dict:
    """A finished game of ``guest`` and three bots, exported, ``guest`` renamed ``victim`` in
    every event and seat, and the hash chain recomputed: a document the audit accepts."""
    game = hearts.create([None, *BOTS], rules={"score_limit": 20})["id"]
    seat, token = hearts.join(game, guest)
    hearts.play_out(game, {seat: token})
    document = hearts.http.get(f"/api/v1/games/{game}/export").get_json()
    for event in document["events"]:
        if event["type"] == "PlayerJoined" and event["payload"]["name"] == guest:
            event["payload"]["name"] = victim
    for entry in document.get("seats", []):
        if isinstance(entry, dict) and entry.get("name") == guest:
            entry["name"] = victim
    document["events"] = rehash(document["events"])
    document["last_hash"] = document["events"][-1]["hash"]
    return document


def test_an_import_naming_a_registered_player_is_never_theirs(app) -> None:
    http = app.test_client()
    hearts = Hearts(http)
    registered = http.post("/api/v1/players", json={"name": "Bob"})
    assert registered.status_code == 201
    key = registered.get_json()["key"]
    document = forged_export(hearts, "zed", "Bob")

    imported = http.post("/api/v1/games/import", json=document)
    assert imported.status_code == 201, imported.get_json()  # a consistent game: it imports
    assert imported.get_json()["imported"] is True  # the answer says what it is
    copy = imported.get_json()["id"]
    seat = hearts.view(copy)["seats"][0]
    assert (seat["name"], seat["player_id"], seat["guest"]) == ("Bob", None, True)

    # The game list: imported, and never under the registered player's name.
    listed = http.get("/api/v1/games").get_json()["games"]
    assert {g["id"]: g["imported"] for g in listed}[copy] is True
    for spelling in ("Bob", "bob", "BOB"):
        by_name = http.get(f"/api/v1/games?player={spelling}").get_json()["games"]
        assert copy not in [g["id"] for g in by_name], spelling
    # The player's own games and figures.
    mine = http.get("/api/v1/players/me/games", headers=auth(key)).get_json()
    assert copy not in [g["id"] for g in mine["games"]]
    projections = ProjectionStore(app.extensions["hearts"].store)
    drain(Projector(projections, consumer="live", blocking=False))
    figures = http.get("/api/v1/players/Bob")
    if figures.status_code == 200:
        assert copy not in [g["game_id"] for g in figures.get_json()["recent_games"]]
    else:
        assert figures.status_code == 404  # no game counted for Bob at all


def test_the_game_list_filters_on_imported(app) -> None:
    http = app.test_client()
    hearts = Hearts(http)
    document = forged_export(hearts, "amy", "amy")
    copy = http.post("/api/v1/games/import", json=document).get_json()["id"]
    only = http.get("/api/v1/games?imported=true").get_json()["games"]
    assert [g["id"] for g in only] == [copy]
    played = [g["id"] for g in http.get("/api/v1/games?imported=false").get_json()["games"]]
    assert len(played) == 1 and copy not in played  # the game exported, played here
    bad = http.get("/api/v1/games?imported=maybe")
    assert bad.status_code == 422 and bad.mimetype == "application/problem+json"
