"""Checking an arena's export without the server's code: the tournament's log and every
recorded game's export are all it reads (the standard library only)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

PLACE_POINTS = (6, 4, 2, 0)  # docs/tournaments.md, "Arena": places 1..4, ties share
ENDS = ("GameEnded", "GameExpired", "GameAbandoned")


def _log(export: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [{**e["data"], "seq": e["seq"]} for e in export["log"] if e["type"] == kind]


def _t(at: str) -> datetime:
    return datetime.fromisoformat(at)


def shared_place_points(scores: list[int]) -> list[float]:
    """Points by place, fewer points taken first, tied players sharing their places' points."""
    out = []
    for mine in scores:
        ahead = sum(1 for s in scores if s < mine)
        tied = sum(1 for s in scores if s == mine)
        out.append(sum(PLACE_POINTS[ahead : ahead + tied]) / tied)
    return out


def game_span(game: dict[str, Any]) -> tuple[datetime, datetime | None]:
    """When the game's log began and when it ended (None: it has not)."""
    events = game["events"]
    end = next((e["time"] for e in events if e["type"] in ENDS), None)
    return _t(events[0]["time"]), _t(end) if end else None


def check_arena_export(export: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Assert the arena's invariants from its export; the recorded games, by id in game order.

    - every game id is paired once, and recorded at most once;
    - nobody is in two games at once: neither by the log (from a player's pairing to that
      game's record nobody pairs them again) nor by the games' own times;
    - every recorded game's result is its own hands' scores, counted if and only if it ended by
      the arena's ``closes_at``;
    - the standings are those points summed, rebuilt here from the games alone."""
    paired = _log(export, "ArenaPaired")
    recorded = _log(export, "ArenaGameRecorded")
    (clock,) = _log(export, "ArenaStarted")
    ids = [p["game_id"] for p in paired]
    assert len(ids) == len(set(ids)), "a game id paired twice"
    assert [p["game"] for p in paired] == list(range(1, len(paired) + 1))
    numbers = [r["game"] for r in recorded]
    assert len(numbers) == len(set(numbers)), "a game recorded twice"
    by_number = {p["game"]: p for p in paired}

    # By the log: a player paired while in a game not yet recorded would be in two at once.
    busy: dict[str, int] = {}
    for entry in sorted(paired + recorded, key=lambda e: e["seq"]):
        game = by_number[entry["game"]]
        if "scores" in entry:
            for p in game["seats"]:
                assert busy.pop(p) == entry["game"]
        else:
            for p in entry["seats"]:
                assert p not in busy, f"{p} paired into game {entry['game']} while in {busy[p]}"
                busy[p] = entry["game"]

    # By the games' own times, and each recorded result against its game.
    games = export["games"]
    spans: dict[str, list[tuple[datetime, datetime, str]]] = defaultdict(list)
    points: dict[str, float] = defaultdict(float)
    counted_games: dict[str, int] = defaultdict(int)
    closes = _t(clock["closes_at"])
    out = {}
    for entry in sorted(recorded, key=lambda e: e["game"]):
        pairing = by_number[entry["game"]]
        game = games[pairing["game_id"]]
        out[pairing["game_id"]] = game
        joined = {
            j["payload"]["seat"]: j["payload"]["player_id"] for j in _events(game, "PlayerJoined")
        }
        assert [joined[s] for s in range(4)] == pairing["seats"]
        scores = [0, 0, 0, 0]
        for hand in _events(game, "HandScored"):
            for s, change in enumerate(hand["payload"]["score_changes"]):
                scores[s] += change
        assert entry["scores"] == scores, (entry, scores)
        begun, ended = game_span(game)
        assert ended is not None and _t(entry["finished_at"]) == ended
        assert entry["counted"] == (ended <= closes)
        for s, player in enumerate(pairing["seats"]):
            spans[player].append((begun, ended, pairing["game_id"]))
            if entry["counted"]:
                points[player] += shared_place_points(scores)[s]
                counted_games[player] += 1
    for player, intervals in spans.items():
        intervals.sort()
        for (_, end_a, a), (begin_b, _, b) in zip(intervals, intervals[1:], strict=False):
            assert end_a <= begin_b, f"{player} in {a} and {b} at once"

    served = {row["player"]: row for row in export["standings"]}
    for player, row in served.items():
        assert row["points"] == points.get(player, 0), (player, row, points.get(player))
        assert row["games"] == counted_games.get(player, 0)
    order = [(-row["points"], row["games"]) for row in export["standings"]]
    assert order == sorted(order)
    return out


def _events(game: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in game["events"] if e["type"] == kind]
