"""``hearts tournaments``: the operator's tournaments (docs/tournaments.md).

    hearts tournaments create --name "Friday duplicate" --rounds 5 --boards 4 \\
        --min-players 8 --max-players 16 --starts-at 2026-12-04T19:00:00Z

creates a duplicate tournament organised by the operator (no per-organiser limit), open for
entries at once, and prints it as JSON. With ``--starts-at`` (ISO-8601 with a zone) the
tournaments' sweep of ``hearts serve`` starts it then, or cancels it if fewer than
``--min-players`` have entered; without it, the operator never starts it (a player cannot), so
give one.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

INVALID = 2


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("tournaments", help="create the operator's tournaments")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a scheduled duplicate tournament")
    create.add_argument("--name", required=True)
    create.add_argument("--rounds", type=int, default=5)
    create.add_argument("--boards", type=int, default=4)
    create.add_argument("--min-players", type=int, default=8)
    create.add_argument("--max-players", type=int, default=16)
    create.add_argument("--house-bot", default="heuristic", help="fills short tables")
    create.add_argument("--rules", help="the table games' rule options, a JSON object")
    create.add_argument(
        "--starts-at", required=True, help="ISO-8601 with a zone, e.g. 2026-12-04T19:00:00Z"
    )
    create.set_defaults(func=run_create)


def run_create(args: argparse.Namespace) -> int:
    from bots import UnknownBot
    from domain.tournament.errors import TournamentInvalid
    from service.app.game_service import GameService
    from service.app.safe_text import escape_controls
    from service.app.tournaments import TournamentService
    from service.cli.connection import open_store
    from service.store.tournaments import TournamentStore

    try:
        rules = json.loads(args.rules) if args.rules is not None else None
    except ValueError as error:
        print(f"hearts tournaments create: --rules is not JSON: {error}", file=sys.stderr)
        return INVALID
    with open_store() as store:
        service = TournamentService(TournamentStore(store.redis, store.keys), GameService(store))
        try:
            loaded = service.create(
                None,
                name=args.name,
                rules=rules,
                rounds=args.rounds,
                boards=args.boards,
                min_players=args.min_players,
                max_players=args.max_players,
                house_bot=args.house_bot,
                starts_at=args.starts_at,
            )
        except (TournamentInvalid, UnknownBot) as error:
            text = escape_controls(str(error))
            print(f"hearts tournaments create: {text}", file=sys.stderr)
            return INVALID
    created = loaded.state.created
    assert created is not None
    print(
        json.dumps(
            {
                "id": created.tournament_id,
                "name": created.name,
                "starts_at": created.starts_at,
                "status": loaded.state.status.value,
            }
        )
    )
    return 0
