"""``hearts-verify`` on an arena's export (docs/tournaments.md, "Arena"): every game it counts
is a real game of the players it paired, nobody played two games at once, each result is its
game's, and the standings are those results' points. Only this package and the standard
library: no server code.

Checks, each reported on its own line:

- ``games``: each recorded game's export chains and its deals recompute (``verify.check_chain``,
  ``verify.check_deals``), and its seats are the pairing's players;
- ``pairing``: every game id is paired once, and by the log nobody is paired while in a game
  not yet recorded, nor by the games' own times in two games at once;
- ``results``: each ``ArenaGameRecorded`` is recorded once, its scores are the game's hands
  (``HandScored``; 100 on a hand a seat was left to a bot: ``game_result``), its points the
  place table's (6, 4, 2, 0, ties sharing), counted if and only if the game ended by the
  arena's ``closes_at``;
- ``standings``: the export's standings are those points summed over the counted games, in
  order (points, most first; then games, fewer first).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from hearts_client.verify import Finding, check_chain, check_deals
from hearts_client.verify_tournament import game_result

PLACE_POINTS = (6, 4, 2, 0)
ENDS = ("GameEnded", "GameExpired", "GameAbandoned")


def is_arena(document: dict[str, Any]) -> bool:
    created = [e for e in document.get("log") or [] if e.get("type") == "TournamentCreated"]
    return bool(created) and (created[0].get("data") or {}).get("format") == "arena"


def _log(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        {**(e.get("data") or {}), "seq": e.get("seq")}
        for e in document.get("log") or []
        if e.get("type") == kind
    ]


def _t(at: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(at))
    except ValueError:
        return None


def place_points(scores: list[int]) -> list[int]:
    """Points by place, fewest points taken first, tied players sharing their places'."""
    out = []
    for mine in scores:
        ahead = sum(1 for s in scores if s < mine)
        tied = sum(1 for s in scores if s == mine)
        out.append(sum(PLACE_POINTS[ahead : ahead + tied]) // tied)
    return out


def verify_arena(document: dict[str, Any]) -> list[Finding]:
    paired = _log(document, "ArenaPaired")
    recorded = _log(document, "ArenaGameRecorded")
    clock = (_log(document, "ArenaStarted") or [{}])[0]
    created = (_log(document, "TournamentCreated") or [{}])[0]
    hands = int(created.get("boards") or 1)
    stand_ins = {e.get("player_id"): e.get("stand_in") for e in _log(document, "PlayerEntered")}
    games = document.get("games") or {}
    by_number = {p.get("game"): p for p in paired}

    checked, game_problems = 0, []
    spans: dict[str, list[tuple[datetime, datetime, str]]] = defaultdict(list)
    for entry in recorded:
        pairing = by_number.get(entry.get("game")) or {}
        game_id = pairing.get("game_id")
        game = games.get(game_id)
        if game is None:
            game_problems.append(f"game {entry.get('game')}: {game_id} missing from the export")
            continue
        checked += 1
        for finding in check_chain(game) + check_deals(game):
            if not finding.ok:
                game_problems.append(f"game {game_id}: {finding.check}: {finding.message}")
        events = game.get("events") or []
        joined = {
            (e.get("payload") or {}).get("seat"): (e.get("payload") or {}).get("player_id")
            for e in events
            if e.get("type") == "PlayerJoined"
        }
        seats = pairing.get("seats") or []
        if [joined.get(s) for s in range(len(seats))] != seats:
            game_problems.append(f"game {game_id}: its seats are not the pairing's players")
        begun = _t(events[0].get("time")) if events else None
        ended = next((_t(e.get("time")) for e in events if e.get("type") in ENDS), None)
        if begun and ended:
            for player in seats:
                spans[player].append((begun, ended, str(game_id)))
    findings = [Finding("games", False, p) for p in game_problems[:20]] or [
        Finding("games", True, f"{checked} games: chains, deals and seats check")
    ]

    pairing_problems = []
    ids = [p.get("game_id") for p in paired]
    if len(ids) != len(set(ids)):
        pairing_problems.append("a game id is paired twice")
    busy: dict[str, Any] = {}
    for entry in sorted(paired + recorded, key=lambda e: e.get("seq") or 0):
        seats = (by_number.get(entry.get("game")) or {}).get("seats") or []
        if "scores" in entry:
            for player in seats:
                busy.pop(player, None)
            continue
        for player in seats:
            if player in busy:
                pairing_problems.append(
                    f"{player} paired into game {entry.get('game')} while in game {busy[player]}"
                )
            busy[player] = entry.get("game")
    for player, intervals in spans.items():
        intervals.sort()
        for (_, end, a), (begin, _, b) in zip(intervals, intervals[1:], strict=False):
            if begin < end:
                pairing_problems.append(f"{player} played {a} and {b} at once")
    findings += [Finding("pairing", False, p) for p in pairing_problems[:20]] or [
        Finding("pairing", True, f"{len(paired)} games paired: nobody in two at once")
    ]

    result_problems = []
    numbers = [e.get("game") for e in recorded]
    if len(numbers) != len(set(numbers)):
        result_problems.append("a game is recorded twice")
    closes = _t(clock.get("closes_at"))
    points: dict[str, int] = defaultdict(int)
    counted: dict[str, int] = defaultdict(int)
    for entry in recorded:
        pairing = by_number.get(entry.get("game")) or {}
        game = games.get(pairing.get("game_id"))
        if game is None:
            continue
        seats = pairing.get("seats") or []
        boards = game_result(game, hands, seats, stand_ins)
        scores = [sum(b[s] for b in boards) for s in range(len(seats))]
        if entry.get("scores") != scores or entry.get("points") != place_points(scores):
            result_problems.append(f"game {entry.get('game')}: not its game's result")
        ended = next(
            (_t(e.get("time")) for e in game.get("events") or [] if e.get("type") in ENDS), None
        )
        if ended is None or closes is None or entry.get("counted") != (ended <= closes):
            result_problems.append(f"game {entry.get('game')}: counted against the clock")
        if entry.get("counted"):
            for player, pts in zip(seats, place_points(scores), strict=False):
                points[player] += pts
                counted[player] += 1
    findings += [Finding("results", False, p) for p in result_problems[:20]] or [
        Finding("results", True, f"{len(recorded)} results: each its game's, counted by the clock")
    ]

    served = document.get("standings") or []
    wrong = [
        f"{row.get('player')}: served {row.get('points')} points in {row.get('games')} games, "
        f"recomputed {points[row.get('player')]} in {counted[row.get('player')]}"
        for row in served
        if row.get("points") != points[row.get("player")]
        or row.get("games") != counted[row.get("player")]
    ]
    order = [(-int(r.get("points") or 0), int(r.get("games") or 0)) for r in served]
    if order != sorted(order):
        wrong.append("the standings are not ordered by points, then games")
    if {r.get("player") for r in served} < set(points):
        wrong.append("a player who scored is missing from the standings")
    findings += [Finding("standings", False, w) for w in wrong[:20]] or [
        Finding("standings", True, f"{len(served)} players: points by place recomputed")
    ]
    return findings
