"""Driving tournaments through the public HTTP API, and checking exports without the server."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections import defaultdict
from itertools import combinations
from typing import Any

from tests.background import settle

API = "/api/v1"


def register(client, name: str) -> str:
    answer = client.post(f"{API}/players", json={"name": name})
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()["key"]


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def create(client, key: str, **body: Any) -> dict[str, Any]:
    answer = client.post(f"{API}/tournaments", json=body, headers=auth(key))
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def play_out(app, client, tournament_id: str, timeout: float = 240.0) -> dict[str, Any]:
    """Wait, with the app's own background bots playing, until the tournament has finished."""
    deadline = time.monotonic() + timeout
    while True:
        settle(app, timeout=timeout)
        body = client.get(f"{API}/tournaments/{tournament_id}").get_json()
        if body["status"] in ("finished", "cancelled"):
            return body
        assert time.monotonic() < deadline, f"tournament still {body['status']}"


# -- independent checks of an export (hashlib and hmac only: nothing of the server) --------------


def log_events(export: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in export["log"] if e["type"] == kind]


def game_events(game: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in game["events"] if e["type"] == kind]


def check_commitments(export: dict[str, Any]) -> dict[int, str]:
    """Each round's revealed seed is the one committed at its start: round -> seed."""
    started = {r["round"]: r for r in log_events(export, "RoundStarted")}
    seeds = {}
    for ended in log_events(export, "RoundEnded"):
        committed = started[ended["round"]]["seed_commitment"]
        text = f"{ended['salt']}:{ended['seed']}".encode()
        assert hashlib.sha256(text).hexdigest() == committed
        seeds[ended["round"]] = ended["seed"]
    return seeds


def hand_seed(seed: str, hand: int) -> str:
    return hmac.new(seed.encode(), f"hand:{hand}".encode(), hashlib.sha256).hexdigest()


def check_shared_boards(export: dict[str, Any], boards: int) -> None:
    """Every table of a round was dealt each board from the round's seed, and got the same
    cards seat by seat."""
    seeds = check_commitments(export)
    games = export["games"]
    for linked in log_events(export, "TableGameLinked"):
        game = games[linked["game_id"]]
        plans = game_events(game, "DealPlan")
        assert plans and plans[0]["seed"] == seeds[linked["round"]]
    by_round: dict[int, list[str]] = defaultdict(list)
    for linked in log_events(export, "TableGameLinked"):
        by_round[linked["round"]].append(linked["game_id"])
    for rnd, game_ids in by_round.items():
        deals_by_board: dict[int, set[str]] = defaultdict(set)
        for game_id in game_ids:
            dealt = game_events(games[game_id], "HandDealt")
            assert [d["hand_number"] for d in dealt] == list(range(1, boards + 1))
            for d in dealt:
                assert d["seed"] == hand_seed(seeds[rnd], d["hand_number"])
                deals_by_board[d["hand_number"]].add(repr(d["hands"]))
        assert all(len(deals) == 1 for deals in deals_by_board.values()), rnd


def seating(export: dict[str, Any]) -> dict[int, list[list[str | None]]]:
    return {r["round"]: r["tables"] for r in log_events(export, "RoundStarted")}


def check_movement(export: dict[str, Any], players: list[str]) -> None:
    met: dict[tuple[str, str], int] = defaultdict(int)
    seats: dict[str, set[int]] = defaultdict(set)
    for tables in seating(export).values():
        for table in tables:
            for s, p in enumerate(table):
                seats[p].add(s)
            for a, b in combinations(sorted(table), 2):
                met[(a, b)] += 1
    assert set(met) == set(combinations(sorted(players), 2))
    assert set(met.values()) == {1}
    assert all(seats[p] == {0, 1, 2, 3} for p in players)


def independent_standings(export: dict[str, Any]) -> dict[str, float]:
    """Matchpoint percentage per player, from the exported games' hand scores alone."""
    tables = seating(export)
    results: dict[tuple[int, int, int], list[tuple[str, int]]] = defaultdict(list)
    for linked in log_events(export, "TableGameLinked"):
        game = export["games"][linked["game_id"]]
        joined = {j["seat"]: j["player_id"] for j in game_events(game, "PlayerJoined")}
        seated = tables[linked["round"]][linked["table"]]
        assert [joined.get(s) for s in range(4)] == seated  # the game seats the pairing
        for scored in game_events(game, "HandScored"):
            for s, score in enumerate(scored["score_changes"]):
                results[(linked["round"], scored["hand_number"], s)].append((seated[s], score))
    got: dict[str, float] = defaultdict(float)
    top: dict[str, float] = defaultdict(float)
    for group in results.values():
        for player, mine in group:
            for other, theirs in group:
                if other != player:
                    got[player] += 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
                    top[player] += 1.0
    return {p: 100 * got[p] / top[p] for p in top}
