"""A board's cards, results and replays reach nobody outside its table before its round ends;
then everyone (docs/tournaments.md, "Fairness and secrecy")."""

from __future__ import annotations

import pytest
from hearts_client.verify_tournament import verify_tournament

from tests.background import settle
from tests.tournaments.helpers import API, auth, create, register

HIDDEN = "/problems/tournament-boards-hidden"


def _pairings(client, tid: str) -> list[dict]:
    return client.get(f"{API}/tournaments/{tid}/pairings").get_json()["rounds"]


def _hand_table_to_bots(client, game_id: str, seats: list[str], keys: dict[str, str]) -> dict:
    """Each seat's player takes its token with its key and hands the seat to a bot."""
    tokens = {}
    for seat, player in enumerate(seats):
        resumed = client.post(
            f"{API}/games/{game_id}/seats/{seat}/resume", json={}, headers=auth(keys[player])
        )
        assert resumed.status_code == 200, resumed.get_json()
        tokens[seat] = resumed.get_json()["token"]
    for seat, tok in tokens.items():
        handed = client.post(
            f"{API}/games/{game_id}/seats/{seat}/bot", json={"bot": "random"}, headers=auth(tok)
        )
        assert handed.status_code == 200, handed.get_json()
    return tokens


READS = ["", "/events", "/hands/1", "/state?at=3", "/audit", "/export", "/scoreboard"]


@pytest.mark.unlimited("registers 8 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_round_in_play_is_hidden_from_everyone_outside_each_table(app, client) -> None:
    names = [f"Sec{i}" for i in range(8)]
    keys_list = [register(client, n) for n in names]
    ids = [client.get(f"{API}/players/me", headers=auth(k)).get_json()["id"] for k in keys_list]
    keys = dict(zip(ids, keys_list, strict=True))
    tid = create(client, keys_list[0], name="Secret", rounds=2, boards=1, min_players=8)["id"]
    for k in keys_list:
        assert (
            client.post(f"{API}/tournaments/{tid}/entries", json={}, headers=auth(k)).status_code
            == 200
        )
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys_list[0]))
    rnd = _pairings(client, tid)[0]
    assert rnd["seed"] is None and len(rnd["seed_commitment"]) == 64
    first, second = rnd["tables"]
    tokens = _hand_table_to_bots(client, first["game_id"], first["seats"], keys)
    settle(app, [first["game_id"]])
    assert client.get(f"{API}/games/{first['game_id']}", headers=auth(tokens[0])).status_code == 200

    # Table 0 has finished its board; table 1 has not: table 0's game is hidden from table 1's
    # players (their seat tokens), from anonymous readers and from its own players' keys.
    resumed = client.post(
        f"{API}/games/{second['game_id']}/seats/0/resume",
        json={},
        headers=auth(keys[second["seats"][0]]),
    ).get_json()
    # A seat cannot change its board: a table game's deals take no contribution.
    contributed = client.post(
        f"{API}/games/{second['game_id']}/contribution",
        json={"seed": "9f3c2a7e51b04d68a1e2c3d4b5a69788", "hand_number": 1},
        headers=auth(resumed["token"]),
    )
    assert contributed.status_code == 409
    assert contributed.get_json()["type"] == "/problems/deals-arranged"
    for path in READS:
        for headers in ({}, auth(resumed["token"]), auth(keys[first["seats"][0]])):
            answer = client.get(f"{API}/games/{first['game_id']}{path}", headers=headers)
            assert answer.status_code == 403, (path, answer.status_code)
            assert answer.get_json()["type"] == HIDDEN
    assert client.get(f"{API}/log/games/{first['game_id']}").status_code == 403
    listed = client.get(f"{API}/games?limit=100").get_json()["games"]
    assert first["game_id"] not in {g["game_id"] for g in listed}
    # Nor does the tournament tell: no standings, traveller, seed or export of the round.
    assert client.get(f"{API}/tournaments/{tid}/standings").get_json()["rounds_counted"] == 0
    board = client.get(f"{API}/tournaments/{tid}/rounds/1/boards/1")
    assert board.status_code == 409
    export = client.get(f"{API}/tournaments/{tid}/export").get_json()
    assert export["games"] == {}
    started = [e for e in export["log"] if e["type"] == "RoundStarted"]
    assert started and all("seed" not in e["data"] and "salt" not in e["data"] for e in started)

    # Table 1 finishes: the round ends, and its games are everyone's to read.
    _hand_table_to_bots(client, second["game_id"], second["seats"], keys)
    settle(app, [second["game_id"]])
    rounds = _pairings(client, tid)
    assert rounds[0]["ended"] and rounds[0]["seed"] is not None and len(rounds) == 2
    for path in READS:
        answer = client.get(f"{API}/games/{first['game_id']}{path}")
        # The scoreboard is the projector's (not run here): not ready, but not hidden.
        assert answer.status_code == (404 if path == "/scoreboard" else 200), path
        assert answer.get_json().get("type") != HIDDEN
    board = client.get(f"{API}/tournaments/{tid}/rounds/1/boards/1").get_json()
    # Every seat was left to a bot (handed over, no stand-in entered): last on the board.
    assert {seat["score"] for table in board["tables"] for seat in table["seats"]} == {100}
    findings = verify_tournament(client.get(f"{API}/tournaments/{tid}/export").get_json())
    assert all(f.ok for f in findings), [str(f) for f in findings]
    # ... and round 2's tables are hidden in their turn.
    later = rounds[1]["tables"][0]["game_id"]
    assert client.get(f"{API}/games/{later}").status_code == 403


@pytest.mark.unlimited("registers 8 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_every_refusal_is_a_problem_with_its_type(client) -> None:
    keys = [register(client, f"Ref{i}") for i in range(8)]
    body = {"name": "R", "rounds": 1, "boards": 1, "min_players": 8, "max_players": 8}

    def problem(answer, status: int, code: str) -> None:
        assert answer.status_code == status, answer.get_json()
        assert answer.get_json()["type"] == f"/problems/{code}"

    problem(client.post(f"{API}/tournaments", json=body), 401, "unauthorized")
    problem(
        client.post(
            f"{API}/tournaments", json={**body, "rules": {"hand_limit": 2}}, headers=auth(keys[0])
        ),
        422,
        "tournament-invalid",
    )
    problem(
        client.post(f"{API}/tournaments", json={**body, "rounds": 0}, headers=auth(keys[0])),
        422,
        "validation-error",
    )
    problem(
        client.post(
            f"{API}/tournaments", json={**body, "house_bot": "nobody"}, headers=auth(keys[0])
        ),
        422,
        "unknown-bot",
    )
    problem(client.get(f"{API}/tournaments/t0000"), 404, "tournament-not-found")
    tid = create(client, keys[0], **body)["id"]
    enter = f"{API}/tournaments/{tid}/entries"
    problem(
        client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0])),
        409,
        "too-few-players",
    )
    for k in keys:
        assert client.post(enter, json={}, headers=auth(k)).status_code == 200
    problem(client.post(enter, json={}, headers=auth(keys[0])), 409, "already-entered")
    extra = register(client, "Ref8")
    problem(client.post(enter, json={}, headers=auth(extra)), 409, "tournament-full")
    problem(client.delete(f"{enter}/me", headers=auth(extra)), 409, "not-entered")
    problem(
        client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[1])),
        403,
        "not-organiser",
    )
    assert client.delete(f"{enter}/me", headers=auth(keys[7])).status_code == 200
    assert client.post(enter, json={}, headers=auth(extra)).status_code == 200
    listed = client.get(f"{API}/tournaments?status=upcoming").get_json()["tournaments"]
    assert [t["id"] for t in listed] == [tid]
    for _ in range(2):
        create(client, keys[0], **body)
    problem(
        client.post(f"{API}/tournaments", json=body, headers=auth(keys[0])),
        409,
        "too-many-tournaments",
    )
    assert (
        client.post(f"{API}/tournaments/{tid}/cancel", json={}, headers=auth(keys[0])).status_code
        == 200
    )
    problem(client.post(enter, json={}, headers=auth(keys[7])), 409, "tournament-closed")
