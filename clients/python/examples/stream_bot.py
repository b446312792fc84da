"""A bot that plays any number of games through its player's one stream (issue 20).

    HEARTS_URL=http://127.0.0.1:8000 HEARTS_KEY=hp_... python stream_bot.py
    HEARTS_URL=http://127.0.0.1:8000 python stream_bot.py --name robo --games 3

It seeks a table, then reads ``GET /players/me/events``: on ``yourTurn`` it takes its seat's
token (once per game, with its key) and plays the first legal card (or passes the first cards,
or lets the moon add to the others); on ``gameFinish`` it seeks the next table. One stream and
plain POSTs, however many games it plays. Forever, unless ``--games``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from hearts_client import HeartsClient, HeartsProblem, Player, Seat


def act(seat: Seat, view: dict[str, Any]) -> None:
    """The seat's move on ``view`` (a seat's view in which it must act)."""
    if view["phase"] == "passing":
        seat.pass_cards(view["legal_cards"][: view["cards_to_pass"]])
    elif view["phase"] == "moon_choice":
        seat.choose_moon("add_to_others")
    else:
        seat.play(view["legal_cards"][0])


def seek(player: Player, table: dict[str, Any]) -> None:
    try:
        player.seek(**table)
    except HeartsProblem as problem:
        if problem.code != "already-seeking":  # the earlier seek still waits: fine
            raise


def play(player: Player, games: int | None = None, **table: Any) -> list[dict[str, Any]]:
    """Seek and play until ``games`` games have finished (None: forever); their results."""
    seats: dict[str, Seat] = {}
    finished: list[dict[str, Any]] = []
    seek(player, table)
    for notice in player.events():
        game_id = notice["game_id"]
        if notice["type"] == "gameFinish":
            if game_id in seats:
                seats.pop(game_id)
                finished.append(notice)
                print(f"{player.name}: {game_id} over, totals {notice['totals']}", flush=True)
                if games is not None and len(finished) >= games:
                    return finished
                seek(player, table)
            continue
        if notice["type"] != "yourTurn" or notice["seat"] not in notice["view"]["awaiting"]:
            continue  # a game began (its first turn follows), or a turn already taken
        seat = seats.get(game_id)
        if seat is None:
            seat = seats[game_id] = player.resume(game_id, notice["seat"])
        try:
            act(seat, notice["view"])
        except HeartsProblem as problem:
            if problem.status != 409:  # 409: the game moved on since this notice
                raise
    return finished


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", help="register a player of this name (without HEARTS_KEY)")
    parser.add_argument("--games", type=int, help="stop after this many games")
    parser.add_argument("--players", type=int, default=4, help="players at the table")
    parser.add_argument("--fill", type=float, help="seconds before bots fill the table")
    args = parser.parse_args(argv)
    url = os.environ.get("HEARTS_URL", "http://127.0.0.1:8000")
    key = os.environ.get("HEARTS_KEY")
    if key is None and args.name is None:
        parser.error("give HEARTS_KEY, or --name to register a player")
    with HeartsClient(url) as client:
        player = Player.from_key(client, key) if key else Player.register(client, args.name)
        if key is None:
            print(f"registered {player.name}: HEARTS_KEY={player.key}", file=sys.stderr)
        play(player, args.games, players=args.players, fill_with_bots_after=args.fill)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
