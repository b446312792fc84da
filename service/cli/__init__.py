"""The ``hearts`` command: one subcommand per module, listed in SUBCOMMANDS.

Subcommands live in their own modules. To add one, append ``(name, module)`` to SUBCOMMANDS; the
module defines ``add_parser(subparsers)``, which adds a parser named ``name`` with
``subparsers.add_parser(name, help=...)`` and sets ``func`` on it with ``set_defaults(func=run)``;
``run(args)`` returns the exit status (or None for 0). Modules are imported only to build the
parser, so keep their top-level imports light.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

SUBCOMMANDS: list[tuple[str, str]] = [
    ("serve", "service.cli.serve"),
    ("project", "service.cli.projections"),
    ("projections", "service.cli.projections"),
    ("replay", "service.cli.replay"),  # also adds audit, export and import
    ("simulate", "service.cli.simulate"),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hearts", description="An event-sourced Hearts server and its tools."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in SUBCOMMANDS:
        module = importlib.import_module(module_name)
        module.add_parser(subparsers)
        if name not in subparsers.choices:
            raise RuntimeError(f"{module_name}.add_parser did not add the {name!r} subcommand")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    status = args.func(args)
    return int(status or 0)
