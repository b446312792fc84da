"""Issue 32, item 1: a guest took a matchmade seat. The matchmaker created the game with its
seats open and joined the matched players one by one; a guest polling the game list joined in
between (10 of 10 tries), the seeker's ``resume`` answered 403 ``not-your-seat`` for good and
the game was no longer rated. Now the game's first append seats every matched player, so there
is no moment at which a stranger can join. The race is made to happen every time: the guest
tries to join right after the matchmaker's create step returns."""

from __future__ import annotations

import fakeredis
import pytest

from service.api.factory import create_app
from service.app.deal_plan import DealPlan
from service.app.game_service import GameService, game_id_for_key
from service.settings import Settings
from tests.api.helpers import auth
from tests.api.test_matchmaking import address_of, register


@pytest.fixture
def client():
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    app = create_app(Settings(key_prefix="seats"), redis=redis)
    yield app.test_client()
    app.extensions["hearts.bots_stop"]()


def test_a_guest_joining_right_after_the_create_step_takes_no_matchmade_seat(client, monkeypatch):
    create = GameService.create
    guests: list[int] = []

    def create_then_a_guest_joins(self, game_id, **kwargs):
        outcome = create(self, game_id, **kwargs)
        # The attacker's join lands just after the game exists, before anything else.
        joined = client.post(f"/api/v1/games/{game_id}/seats", json={"name": "mallory"})
        guests.append(joined.status_code)
        return outcome

    monkeypatch.setattr(GameService, "create", create_then_a_guest_joins)
    keys = [register(client) for _ in range(4)]
    seeks = []
    for key in keys:
        response = client.post(
            "/api/v1/seeks", json={"players": 4}, headers=auth(key), environ_base=address_of(key)
        )
        assert response.status_code == 201, response.get_json()
        seeks.append(response.get_json()["id"])
    assert guests and all(status == 409 for status in guests), guests  # the seats were bound
    for key, seek_id in zip(keys, seeks, strict=True):
        # Each seeker at a computer of its own, as people are (the limits count per address).
        mine = {"headers": auth(key), "environ_base": address_of(key)}
        found = client.get(f"/api/v1/seeks/{seek_id}", **mine).get_json()
        assert found["state"] == "matched"
        resumed = client.post(
            f"/api/v1/games/{found['game_id']}/seats/{found['seat']}/resume",
            json={},
            **mine,
        )
        assert resumed.status_code == 200, resumed.get_json()
    view = client.get(f"/api/v1/games/{found['game_id']}").get_json()
    assert all(seat["player_id"] for seat in view["seats"])  # four registered players: rated
    assert "mallory" not in {seat["name"] for seat in view["seats"]}
    audit = client.get(f"/api/v1/games/{found['game_id']}/audit").get_json()
    assert audit["ok"] is True, audit  # the one first append audits like joins one by one


def test_carrying_a_claim_out_again_creates_and_seats_nothing_twice(client):
    matchmaker = client.application.extensions["hearts.matchmaker"]
    keys = [register(client) for _ in range(4)]
    for key in keys:
        client.post("/api/v1/seeks", json={"players": 4}, headers=auth(key))
    [pool] = matchmaker.seeks.pools()
    claims = [
        k.decode().rsplit(":", 1)[1]
        for k in matchmaker.seeks.redis.scan_iter(f"seats:{{m:{pool}}}:claim:*")
    ]
    [claim] = claims
    game_id, _ = matchmaker.seeks.claim(pool, claim)
    version = matchmaker.games.snapshot(game_id).version
    matchmaker._carry_out(pool, claim)  # a second look, as after a crash
    assert matchmaker.games.snapshot(game_id).version == version


def test_a_claim_half_carried_out_by_the_seats_open_way_is_finished(client):
    """A game created with its seats open by the code before this fix, and a crash before
    every player joined: the next look at the claim seats the rest."""
    matchmaker = client.application.extensions["hearts.matchmaker"]
    keys = [register(client) for _ in range(4)]
    ids = [client.get("/api/v1/players/me", headers=auth(k)).get_json()["id"] for k in keys]
    pool, claim = "4-standard-relaxed", "c0ffee" * 4
    plan = [[player_id, f"name{i}"] for i, player_id in enumerate(ids)]
    game_id = game_id_for_key(f"match:{claim}")
    matchmaker.seeks.save_claim(pool, claim, game_id, plan, 600)
    rules = {"players": 4, "time_control": "relaxed"}
    matchmaker.games.create(game_id, rules=rules, seats=None, plan=DealPlan(), idempotency=None)
    matchmaker.games.join(game_id, name="name0", seat=0, idempotency=None, player_id=ids[0])
    matchmaker._carry_out(pool, claim)
    seats = matchmaker.games.snapshot(game_id).state.state.seats
    assert [seat.player_id for seat in seats] == ids
