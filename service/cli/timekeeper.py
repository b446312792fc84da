"""``hearts timekeeper``: time out seats whose turn clock ran out (docs/rules.md, "Turn clock").

    HEARTS_TIMEKEEPER=external hearts serve   # the workers keep no time themselves
    hearts timekeeper [--interval 1] [--lease 10]

Any number of timekeepers share the partitions by leases (one at a time per partition; a
dead one's partitions are taken over once its leases run out); each timeout is appended at the
game's version, so even two timekeepers on one game append it once. Stop it with Ctrl-C or
SIGTERM: its leases are given back at once.
"""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("timekeeper", help="time out seats whose turn clock ran out")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between looks")
    p.add_argument(
        "--lease", type=float, default=10.0, help="seconds a partition lease lasts unrenewed"
    )
    p.add_argument("--name", help="this timekeeper's name among the others (default: host-pid)")
    p.add_argument("--once", action="store_true", help="time out what is due now, then exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from service.app.game_service import GameService
    from service.app.projector import default_consumer_name
    from service.app.timekeeper import Timekeeper
    from service.cli.connection import open_store

    with open_store() as store:
        service = GameService(store)
        if args.once:
            done = Timekeeper(service).tick()
            print(f"timed out {len(done)} seat(s)", flush=True)
            return 0
        keeper = Timekeeper(
            service,
            interval=args.interval,
            lease_ms=int(args.lease * 1000),
            owner=args.name or default_consumer_name(),
        )
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        print(f"hearts timekeeper {keeper.leases.owner}: watching deadlines", flush=True)
        keeper.run(stop)
    return 0
