"""Issue 40's Done-when: a 16-player duplicate tournament of 5 rounds x 4 boards played
through the public HTTP API by bot accounts (registered players whose boards a bot plays),
checked from its export alone."""

from __future__ import annotations

import copy
import json

import pytest
from hearts_client.verify import main as hearts_verify
from hearts_client.verify_tournament import verify_tournament

from tests.tournaments.helpers import (
    API,
    auth,
    check_movement,
    check_shared_boards,
    create,
    independent_standings,
    play_out,
    register,
)


@pytest.mark.unlimited("registers 16 players and plays 20 games of bots in one test")
@pytest.mark.parametrize("redis_client", ["real"], indirect=True)
def test_sixteen_bot_accounts_play_five_rounds_of_four_shared_boards(app, client, tmp_path) -> None:
    keys = [register(client, f"Duo{i:02d}") for i in range(16)]
    body = create(
        client,
        keys[0],
        name="Duplicate night",
        rounds=5,
        boards=4,
        min_players=16,
        max_players=16,
        house_bot="random",
    )
    tid = body["id"]
    assert body["status"] == "upcoming"
    ids = []
    for key in keys:
        entered = client.post(
            f"{API}/tournaments/{tid}/entries", json={"stand_in": "random"}, headers=auth(key)
        )
        assert entered.status_code == 200, entered.get_json()
        ids.append(client.get(f"{API}/players/me", headers=auth(key)).get_json()["id"])
    started = client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    assert started.status_code == 200, started.get_json()
    assert started.get_json()["status"] == "running"

    finished = play_out(app, client, tid)
    assert finished["status"] == "finished"

    export = client.get(f"{API}/tournaments/{tid}/export").get_json()
    assert len(export["games"]) == 20
    check_movement(export, ids)
    check_shared_boards(export, boards=4)
    expected = independent_standings(export)
    standings = client.get(f"{API}/tournaments/{tid}/standings").get_json()
    assert standings["rounds_counted"] == 5
    served = {row["player"]: row["percentage"] for row in standings["standings"]}
    assert served.keys() == expected.keys() == set(ids)
    for player, pct in expected.items():
        assert served[player] == pytest.approx(pct, abs=1e-3)
    percentages = [row["percentage"] for row in standings["standings"]]
    assert percentages == sorted(percentages, reverse=True)
    assert sum(percentages) == pytest.approx(50 * 16)  # matchpoints are zero-sum around 50%

    # The traveller of a board: every table's result on it.
    board = client.get(f"{API}/tournaments/{tid}/rounds/1/boards/1").get_json()
    assert len(board["tables"]) == 4 and all(len(t["seats"]) == 4 for t in board["tables"])

    # hearts-verify checks the whole export, and fails a tampered one.
    findings = verify_tournament(export)
    assert [f.check for f in findings] == ["commitments", "tables", "results", "standings"]
    assert all(f.ok for f in findings), [str(f) for f in findings if not f.ok]
    path = tmp_path / "tournament.json"
    path.write_text(json.dumps(export))
    assert hearts_verify([str(path)]) == 0
    _assert_tampering_fails(export)


def _assert_tampering_fails(export: dict) -> None:
    def failed(document: dict) -> set[str]:
        return {f.check for f in verify_tournament(document) if not f.ok}

    seed = copy.deepcopy(export)
    ended = next(e for e in seed["log"] if e["type"] == "RoundEnded")
    ended["data"]["seed"] = "0" * 32
    assert "commitments" in failed(seed)

    cards = copy.deepcopy(export)
    game = next(iter(cards["games"].values()))
    dealt = next(e for e in game["events"] if e["type"] == "HandDealt")
    hands = dealt["payload"]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    assert "tables" in failed(cards)

    ranks = copy.deepcopy(export)
    ranks["standings"][0]["percentage"] += 1
    assert "standings" in failed(ranks)
