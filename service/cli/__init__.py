"""The ``hearts`` command: one subcommand per module, listed in SUBCOMMANDS.

Subcommands live in their own modules. To add one, append ``(name, module)`` to SUBCOMMANDS; the
module defines ``add_parser(subparsers)``, which adds a parser named ``name`` with
``subparsers.add_parser(name, help=...)`` and sets ``func`` on it with ``set_defaults(func=run)``;
``run(args)`` returns the exit status (or None for 0). Modules are imported only to build the
parser, so keep their top-level imports light.

Every subcommand's ``--help`` shows its defaults (:class:`HelpFormatter`) and takes
``--data-dir`` (the embedded redis-server's directory, as HEARTS_DATA_DIR); bare ``hearts`` prints
the help; output into a closed pipe (``hearts ... | head``) ends quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

SUBCOMMANDS: list[tuple[str, str]] = [
    ("serve", "service.cli.serve"),
    ("project", "service.cli.projections"),
    ("projections", "service.cli.projections"),
    ("replay", "service.cli.replay"),  # also adds audit, export and import
    ("simulate", "service.cli.simulate"),
    ("witness", "service.cli.witness"),  # also adds log (backfill); docs/verify.md
    ("analyse", "service.cli.analyse"),
    ("partitions", "service.cli.partitions"),
    ("analyst", "service.cli.analyst"),
    ("timekeeper", "service.cli.timekeeper"),
    ("players", "service.cli.players"),
    ("archive", "service.cli.archive"),  # ended games to the archive: docs/operations.md
    ("tournaments", "service.cli.tournaments"),  # the operator's: docs/tournaments.md
]
BROKEN_PIPE = 141  # what a shell reports for a process ended by SIGPIPE (128 + 13)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except where there is none to show (None, a flag's False) or
    the help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose subcommands (and theirs) show their defaults in ``--help``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="hearts", description="An event-sourced Hearts server and its tools.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, module_name in SUBCOMMANDS:
        module = importlib.import_module(module_name)
        module.add_parser(subparsers)
        if name not in subparsers.choices:
            raise RuntimeError(f"{module_name}.add_parser did not add the {name!r} subcommand")
    for sub in subparsers.choices.values():
        if not any("--data-dir" in action.option_strings for action in sub._actions):
            sub.add_argument(
                "--data-dir",
                help="the embedded redis-server's directory, when REDIS_URL is not set "
                "(default: HEARTS_DATA_DIR, else the user's data directory)",
            )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:  # bare `hearts`: what there is to run
        parser.print_help()
        return 0
    if getattr(args, "data_dir", None):
        from service.settings import publish_data_dir

        publish_data_dir(args.data_dir)  # Settings.from_env reads it, here and in children
    try:
        status = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`hearts export ... | head`): nothing left to say to it. Point
        # stdout at /dev/null so the interpreter's own flush at exit does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE
    return int(status or 0)
