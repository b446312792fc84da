"""``hearts partitions change --to M``: the data's partition count changed to a multiple of it,
offline (service/app/partitions.py; docs/operations.md, "Partitions"). Exit status: 0 done,
1 refused (not a multiple, leases held, another change under way), 2 no Redis to use."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from service.cli.connection import open_store
from service.cli.progress import positive

OK = 0
REFUSED = 1


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("partitions", help="change the data's partition count (offline)")
    sub = p.add_subparsers(dest="partitions_command", required=True)
    c = sub.add_parser(
        "change",
        help="move the games to a multiple of the partition count and rebuild the read models "
        "(the service and its projectors, archivers, timekeepers and analysts stopped)",
    )
    c.add_argument(
        "--to", type=positive, required=True, help="the new count: a multiple of the current one"
    )
    c.set_defaults(func=run_change)


def run_change(args: argparse.Namespace) -> int:
    from service.app.partitions import change_partitions
    from service.store.errors import StoreError

    with open_store(check_layout=False) as store:
        try:
            result = change_partitions(store.redis, store.prefix, args.to, store.archive)
        except StoreError as exc:
            print(f"hearts: {exc}", file=sys.stderr)
            return REFUSED
    print(
        json.dumps(
            {
                "before": result.before,
                "after": result.after,
                "moved": result.moved,
                "generation": result.generation,
            }
        )
    )
    print(f"hearts: start the service with HEARTS_PARTITIONS={result.after}", file=sys.stderr)
    return OK
