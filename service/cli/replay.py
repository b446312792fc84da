"""``hearts replay``, ``hearts audit``, ``hearts export``, ``hearts import``.

They read the event store directly: ``REDIS_URL`` if set, else the embedded server of the data
directory (``--data-dir`` or ``HEARTS_DATA_DIR``, default the user's data directory; started for
the command and stopped after it if it was not running). Exit status: 0 done (audit: no
discrepancy), 1 the audit found a discrepancy or the import was refused, 2 no such game, an
unreadable file, or no Redis.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from service.app import strict_json
from service.app.safe_text import escape_controls, json_text
from service.cli.connection import UNUSABLE, open_store
from service.cli.progress import fail

OK, FAILED = 0, 1


def sse_worker_class(chosen: str | None = None) -> str:
    """The gunicorn worker class ``hearts serve`` runs: gevent, so that a live event stream
    (SSE) parks a greenlet on its Redis socket instead of holding a thread (docs/replay.md says
    why). ``chosen`` (``Settings.worker_class``, HEARTS_WORKER_CLASS) overrides it; without
    gevent installed, gthread (streams then end after HEARTS_SSE_MAX_SECONDS and clients
    reconnect with Last-Event-ID)."""
    import importlib.util

    if chosen and chosen.strip():
        return chosen.strip()
    if importlib.util.find_spec("gevent") is None:
        print("hearts: gevent is not installed: serving with gthread workers", file=sys.stderr)
        return "gthread"
    # The master has imported ssl (redis-py does) before a worker patches it; nothing here
    # talks TLS, so gevent's warning about it is noise. Forked workers inherit the filter.
    import warnings

    warnings.filterwarnings("ignore", message="Monkey-patching ssl after ssl has already")
    return "gevent"


def add_parser(subparsers: Any) -> None:
    """Adds all four subcommands (each only once, so registering the module twice is harmless)."""
    choices = subparsers.choices
    if "replay" not in choices:
        p = subparsers.add_parser("replay", help="print a game's hands trick by trick")
        p.add_argument("game", help="the game id")
        p.add_argument("--hand", type=int, metavar="N", help="only hand N (1-based)")
        who = p.add_mutually_exclusive_group()
        who.add_argument("--seat", type=int, metavar="S", help="as seat S sees a hand in play")
        who.add_argument(
            "--all", action="store_true", help="show hidden cards of a hand in play too"
        )
        p.set_defaults(func=run_replay)
    if "audit" not in choices:
        p = subparsers.add_parser(
            "audit", help="re-verify a game's log (exit 1 on any discrepancy)"
        )
        p.add_argument("game", help="a game id, or the path of an export (JSON)")
        p.add_argument("--json", action="store_true", help="print the report as JSON")
        p.set_defaults(func=run_audit)
    if "export" not in choices:
        p = subparsers.add_parser("export", help="export a game as one JSON document")
        p.add_argument("game", help="the game id")
        p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
        p.add_argument("--text", action="store_true", help="the readable text form")
        p.set_defaults(func=run_export)
    if "import" not in choices:
        p = subparsers.add_parser("import", help="import an export as a new game")
        p.add_argument("file", help="the export (JSON); - for stdin")
        p.add_argument(
            "--game-id",
            metavar="ID",
            help="the new game's id: g and 20 hex digits (default: the id its content gives)",
        )
        p.set_defaults(func=run_import)


def _missing(game_id: str) -> int:
    return fail(f"no game {game_id!r}", UNUSABLE)


def run_replay(args: argparse.Namespace) -> int:
    from service.app.errors import GameNotFound
    from service.app.hand_records import ALL
    from service.app.replay import Replay
    from service.app.replay_text import render_hands, render_summary, wants_colour

    viewer = ALL if args.all else args.seat
    with open_store() as store:
        try:
            records = Replay(store).hands(args.game, viewer)
        except GameNotFound:
            return _missing(args.game)
    if args.hand is not None:
        records = [r for r in records if r.number == args.hand]
        if not records:
            print(f"hearts: game {args.game} has no hand {args.hand}", file=sys.stderr)
            return UNUSABLE
    colour = wants_colour(sys.stdout)
    if records:
        print(render_summary(args.game, records[0].rules, records[-1].seats))
        print()
        print(render_hands(records, colour))
    else:
        print(f"game {args.game}: no hand dealt yet")
    return OK


def run_audit(args: argparse.Namespace) -> int:
    from service.app.audit import audit_events
    from service.app.errors import GameNotFound
    from service.app.export import ImportRefused, parse_events

    path = Path(args.game)
    if args.game.endswith(".json") or path.is_file():
        try:
            records = parse_events(strict_json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            print(f"hearts: cannot read {args.game}: {error}", file=sys.stderr)
            return UNUSABLE
        except ImportRefused as error:
            print(f"hearts: {args.game}: {error.detail}", file=sys.stderr)
            return UNUSABLE
        report = audit_events(records)
    else:
        from service.app.replay import Replay

        with open_store() as store:
            try:
                report = Replay(store).audit(args.game)
            except GameNotFound:
                return _missing(args.game)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.to_text())
    return OK if report.ok else FAILED


def run_export(args: argparse.Namespace) -> int:
    from service.app.errors import GameNotFound
    from service.app.replay import Replay

    with open_store() as store:
        replay = Replay(store)
        try:
            document = replay.export(args.game, finished_only=False)
        except GameNotFound:
            return _missing(args.game)
        text = replay.export_text(document) if args.text else None
    if text is None:
        text = json_text(document, indent=1) + "\n"  # no terminal control in any string
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"exported game {args.game} to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return OK


def run_import(args: argparse.Namespace) -> int:
    from service.app.errors import GameAlreadyExists
    from service.app.export import ImportRefused
    from service.app.game_service import is_game_id
    from service.app.replay import Replay

    try:
        raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
        document = strict_json.loads(raw)  # read as every reader would, or not at all
    except (OSError, ValueError) as error:
        print(f"hearts: cannot read {args.file}: {error}", file=sys.stderr)
        return UNUSABLE
    game_id = args.game_id
    if game_id is not None and not is_game_id(game_id):
        print("hearts: --game-id: a game id is g and 20 lowercase hex digits", file=sys.stderr)
        return UNUSABLE
    with open_store() as store:
        try:
            if game_id is None:  # the id follows from the content: an import already made
                result = Replay(store).import_once(document, lambda _: None)  # answers again
            else:
                result = Replay(store).import_(document, game_id)
        except ImportRefused as refused:
            detail = escape_controls(refused.detail)  # it may quote the document
            print(f"hearts: import refused ({refused.code}): {detail}", file=sys.stderr)
            if refused.report is not None:
                print(refused.report.to_text(), file=sys.stderr)
            return FAILED
        except GameAlreadyExists:
            print(f"hearts: game {game_id!r} already exists", file=sys.stderr)
            return FAILED
    body = result.body
    print(body["id"])
    print(
        escape_controls(
            f"imported game {body['source_game_id']} as {body['id']} ({body['version']} events)"
        ),
        file=sys.stderr,
    )
    return OK
