"""Bots by level (bots/levels.py) at the API, and the human-like wait before a bot acts at a
table where a person plays (the ``bot_think`` setting)."""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise

import pytest

from bots.levels import level_names
from service.api.factory import create_app
from service.app.bot_runner import table_pace
from service.settings import Settings
from tests.api.helpers import Hearts, is_bot_move
from tests.api.test_errors import assert_problem


def test_a_seat_takes_a_level_by_name_and_the_old_names_still(hearts: Hearts, service):
    game = hearts.create([None, {"bot": "strong"}, {"bot": "master"}, {"bot": "montecarlo"}])
    assert [s["bot"] for s in game["seats"]] == [None, "strong", "master", "montecarlo"]
    seat, token = hearts.join(game["id"], "ann")
    view = hearts.wait_for_humans(game["id"], {seat: token})
    assert view["awaiting"] == [0]  # every level passed


def test_a_seat_handed_to_a_level(hearts: Hearts):
    game_id, tokens = hearts.new_game(1)
    response = hearts.post(f"/api/v1/games/{game_id}/seats/0/bot", {"bot": "beginner"}, tokens[0])
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["view"]["seats"][0]["bot"] == "beginner"


@pytest.mark.parametrize("bot", ["grandmaster", "montecarlo:plays=100000000", "strong:plays=9"])
def test_a_spec_or_an_unknown_level_is_refused(client, bot: str):
    # Seats take names only: a spec's budget is the caller's to choose, and work on the server.
    created = client.post("/api/v1/games", json={"seats": [{"bot": bot}, None, None, None]})
    assert_problem(created, 422, "unknown-bot")


def test_the_documented_levels_are_the_api_s():
    from service.api.schemas import CreateGameSchema

    seat = CreateGameSchema().fields["seats"].inner.metadata
    assert set(level_names()) <= set(seat["properties"]["bot"]["enum"])


def _when(event) -> float:
    return datetime.fromisoformat(event.time.replace("Z", "+00:00")).timestamp()


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_bots_think_a_moment_at_a_persons_table_and_never_alone(redis_client, key_prefix):
    think = 0.3
    app = create_app(Settings(key_prefix=key_prefix, bot_think=think), redis=redis_client)
    try:
        hearts, service = Hearts(app.test_client()), app.extensions["hearts"]
        # Only bots: no wait, they play within the request as ever.
        alone = hearts.create([{"bot": "random"}] * 4)
        assert table_pace(service.snapshot(alone["id"]).state.state, 2.0, think) == 0

        game = hearts.create([None] + [{"bot": "random"}] * 3)
        joined = hearts.post(f"/api/v1/games/{game['id']}/seats", {"name": "ann"}).get_json()
        # A person sits: the bots' passes come after the answer, each a moment after the last.
        assert not any(s["has_passed"] for s in joined["view"]["seats"])
        assert table_pace(service.snapshot(game["id"]).state.state, 2.0, think) == think
        hearts.wait_for(game["id"], lambda v: v["awaiting"] == [0])
        log = service.store.read(game["id"])
        first = next(i for i, e in enumerate(log) if is_bot_move(e.command_id))
        moves = log[first - 1 :]  # the join's last event, then the bots' passes
        assert len(moves) == 4 and all(is_bot_move(e.command_id) for e in moves[1:])
        times = [_when(e) for e in moves]
        assert all(b - a >= think * 0.9 for a, b in pairwise(times)), times
    finally:
        app.extensions["hearts.bots_stop"]()
