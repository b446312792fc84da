"""``hearts-verify`` on a tournament's export (``GET /api/v1/tournaments/{id}/export``):
checks that every table of each round was dealt the boards committed before the round, that the
results recorded are the games', and that the standings are their matchpoints
(docs/tournaments.md). Uses only this package and the standard library: no server code.

Checks, each reported on its own line:

- ``commitments``: each round's revealed seed and salt hash (SHA-256 of ``salt ":" seed``) to
  the commitment its ``RoundStarted`` recorded before any table of the round existed;
- ``tables``: each table game's export chains and its deals recompute (``verify.check_chain``,
  ``verify.check_deals``); it was created with its round's seed (``DealPlan``), each hand k
  dealt from ``HMAC-SHA256(seed, "hand:k")``, its seats are the round's pairing, and every table
  of a round holds the same cards seat by seat on each board;
- ``results``: each ``TableResultRecorded`` is the game's hand scores (``HandScored``'s
  ``score_changes``), last (100) on a board a seat was left to a bot (``game_result``);
- ``standings``: the export's standings are the matchpoints recomputed from those scores
  (1 per player beaten on the same seat of the same board, 1/2 per tie; house bots not ranked),
  ordered by percentage, then points taken.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import defaultdict
from typing import Any

from hearts_client.verify import Finding, check_chain, check_deals, commitment

FORMAT = "hearts-tournament/1"
UNPLAYED = 100  # a board a table did not play scores this for each of its seats


def is_tournament(document: Any) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


def _log(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e.get("data") or {} for e in document.get("log") or [] if e.get("type") == kind]


def _game(game: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e.get("payload") or {} for e in game.get("events") or [] if e.get("type") == kind]


def hand_seed(seed: str, hand: int) -> str:
    return hmac.new(seed.encode("utf-8"), f"hand:{hand}".encode(), hashlib.sha256).hexdigest()


def game_result(
    game: dict[str, Any], boards: int, seated: list[Any], stand_ins: dict[Any, Any]
) -> list[list[int]]:
    """A table game's result per board and seat, by the tournament's rule: the hand's
    ``score_changes``; ``UNPLAYED`` for a board never scored, and for a seat whose player left
    it to a bot (``SeatControlChanged`` to a bot other than the stand-in they entered with) at
    any moment of that hand."""
    seats = len(seated)
    scores = {b: [UNPLAYED] * seats for b in range(1, boards + 1)}
    left: dict[int, set[int]] = {b: set() for b in scores}
    bot: list[Any] = [None] * seats
    hand = 0
    for event in game.get("events") or []:
        kind, p = event.get("type"), event.get("payload") or {}
        if kind == "HandDealt":
            hand = p.get("hand_number")
        elif kind == "SeatControlChanged":
            bot[p.get("seat")] = p.get("bot")
        elif kind == "HandScored" and p.get("hand_number") in scores:
            scores[p["hand_number"]] = list(p.get("score_changes") or [])
        for seat, strategy in enumerate(bot):
            if strategy is not None and strategy != stand_ins.get(seated[seat]) and hand in left:
                left[hand].add(seat)
    for board, gone in left.items():
        for seat in gone:
            scores[board][seat] = UNPLAYED
    return [scores[b] for b in range(1, boards + 1)]


def verify_tournament(document: dict[str, Any]) -> list[Finding]:
    from hearts_client.verify_arena import is_arena, verify_arena  # it builds on this module

    if is_arena(document):  # an arena's export: its games, pairing, results and standings
        return verify_arena(document)
    started = {r.get("round"): r for r in _log(document, "RoundStarted")}
    seeds: dict[int, str] = {}
    problems: list[str] = []
    for ended in _log(document, "RoundEnded"):
        number = ended.get("round")
        committed = (started.get(number) or {}).get("seed_commitment")
        if commitment(str(ended.get("seed")), str(ended.get("salt"))) != committed:
            problems.append(f"round {number}: the seed revealed is not the one committed")
        seeds[number] = str(ended.get("seed"))
    findings = [Finding("commitments", False, p) for p in problems] or [
        Finding("commitments", True, f"{len(seeds)} rounds: seeds as committed")
    ]
    findings += _tables(document, started, seeds)
    findings += _results_and_standings(document, started)
    return findings


def _tables(
    document: dict[str, Any], started: dict[Any, dict[str, Any]], seeds: dict[int, str]
) -> list[Finding]:
    problems: list[str] = []
    games = document.get("games") or {}
    boards: dict[tuple[int, int], set[str]] = defaultdict(set)
    count = 0
    for link in _log(document, "TableGameLinked"):
        number, table, game_id = link.get("round"), link.get("table"), link.get("game_id")
        game = games.get(game_id)
        if number not in seeds:
            continue  # a round in play: its games are not exported yet
        if game is None:
            problems.append(f"round {number} table {table}: game {game_id} missing")
            continue
        count += 1
        for finding in check_chain(game) + check_deals(game):
            if not finding.ok:
                problems.append(f"game {game_id}: {finding.check}: {finding.message}")
        plans = _game(game, "DealPlan")
        if not plans or plans[0].get("seed") != seeds[number]:
            problems.append(f"game {game_id}: not dealt from round {number}'s seed")
        seated = (started.get(number) or {}).get("tables", [])[table]
        joined = {j.get("seat"): j.get("player_id") for j in _game(game, "PlayerJoined")}
        if [joined.get(s) for s in range(len(seated))] != seated:
            problems.append(f"game {game_id}: its seats are not round {number}'s pairing")
        for dealt in _game(game, "HandDealt"):
            hand = dealt.get("hand_number")
            if dealt.get("seed") != hand_seed(seeds[number], hand):
                problems.append(f"game {game_id}: hand {hand} not dealt from the round's seed")
            boards[(number, hand)].add(repr(dealt.get("hands")))
    for (number, hand), deals in sorted(boards.items()):
        if len(deals) != 1:
            problems.append(f"round {number} board {hand}: the tables were dealt different cards")
    if problems:
        return [Finding("tables", False, p) for p in problems[:20]]
    return [Finding("tables", True, f"{count} table games: each round's boards the same")]


def _results_and_standings(
    document: dict[str, Any], started: dict[Any, dict[str, Any]]
) -> list[Finding]:
    problems: list[str] = []
    games = document.get("games") or {}
    ended = {e.get("round") for e in _log(document, "RoundEnded")}
    groups: dict[tuple[int, int, int], list[tuple[str, int]]] = defaultdict(list)
    stand_ins = {e.get("player_id"): e.get("stand_in") for e in _log(document, "PlayerEntered")}
    for recorded in _log(document, "TableResultRecorded"):
        number, table = recorded.get("round"), recorded.get("table")
        if number not in ended:
            continue
        game = games.get(recorded.get("game_id")) or {}
        seated = started[number]["tables"][table]
        expected = game_result(game, len(recorded.get("scores") or []), seated, stand_ins)
        for board, scores in enumerate(recorded.get("scores") or [], start=1):
            if expected[board - 1] != scores:
                problems.append(f"round {number} table {table} board {board}: not the game's")
            for seat, player in enumerate(seated):
                if player is not None:
                    groups[(number, board, seat)].append((player, scores[seat]))
    got: dict[str, float] = defaultdict(float)
    top: dict[str, float] = defaultdict(float)
    points: dict[str, int] = defaultdict(int)
    for group in groups.values():
        for player, mine in group:
            points[player] += mine
            for other, theirs in group:
                if other != player:
                    got[player] += 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
                    top[player] += 1.0
    findings = [Finding("results", False, p) for p in problems[:20]] or [
        Finding("results", True, "every result recorded is its game's hand scores")
    ]
    served = document.get("standings")
    if served is None:
        return findings
    wrong = []
    for row in served:
        player = row.get("player")
        pct = 100 * got[player] / top[player] if top[player] else 50.0
        if abs(pct - float(row.get("percentage", -1))) > 1e-3 or points[player] != row.get(
            "points"
        ):
            wrong.append(f"{player}: served {row.get('percentage')}%, recomputed {pct:.4f}%")
    order = [(-float(r.get("percentage", 0)), r.get("points", 0)) for r in served]
    if order != sorted(order):
        wrong.append("the standings are not ordered by percentage, then points")
    if {r.get("player") for r in served} < set(got):
        wrong.append("a player who played is missing from the standings")
    findings += [Finding("standings", False, w) for w in wrong[:20]] or [
        Finding("standings", True, f"{len(served)} players: matchpoints recomputed")
    ]
    return findings
