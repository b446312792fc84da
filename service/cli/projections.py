"""``hearts project`` (the projector process) and ``hearts projections rebuild|status``.

They use ``REDIS_URL`` if set, else the embedded server of the data directory
(``HEARTS_DATA_DIR``), with the key prefix and partitions of the service's settings. Exit status:
0 done, 2 no Redis to use, 1 ``status --require-live-here`` found no live projector of this host.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from service.cli.connection import open_store
from service.cli.progress import ProgressBar, non_negative, positive

OK = 0
NOT_LIVE = 1  # projections status --require-live-here: no projector of this host beats


def add_parser(subparsers: Any) -> None:
    """Adds ``project`` and ``projections`` (each once: registering twice is harmless)."""
    choices = subparsers.choices
    if "project" not in choices:
        p = subparsers.add_parser(
            "project", help="run the projector: keep scoreboards and statistics up to date"
        )
        p.add_argument("--consumer", help="consumer name in the group (default: host-pid)")
        p.add_argument("--batch", type=positive, default=256, help="log entries per step")
        p.add_argument(
            "--claim-idle-ms",
            type=positive,
            default=30_000,
            help="reclaim entries another projector left pending this long",
        )
        p.add_argument(
            "--claim-interval", type=float, default=5.0, help="seconds between reclaim passes"
        )
        p.add_argument(
            "--block-ms", type=positive, default=1000, help="longest wait for new entries"
        )
        p.add_argument("--group", default="projector", help="consumer group name")
        p.add_argument(
            "--lease-ms",
            type=positive,
            default=10_000,
            help="a partition's lease: how soon another projector takes over from a dead one",
        )
        p.add_argument(
            "--generation",
            help="write this generation whatever the pointer says (a reference build)",
        )
        # `hearts serve` passes its pid: the projector stops when that process is gone (beside
        # the kernel's parent-death signal, which is Linux only; service/lifeline.py).
        p.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
        p.set_defaults(func=run_project)
    if "projections" not in choices:
        p = subparsers.add_parser("projections", help="rebuild or inspect the read models")
        sub = p.add_subparsers(dest="projections_command", required=True)
        r = sub.add_parser(
            "rebuild", help="fold the whole log into fresh read models and swap them in"
        )
        r.add_argument("--batch", type=positive, default=1000, help="log entries per step")
        r.add_argument(
            "--grace",
            type=non_negative,
            default=60,
            help="seconds the old read models stay readable after the swap",
        )
        r.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        r.set_defaults(func=run_rebuild)
        s = sub.add_parser(
            "status", help="the current generation, positions, lag and live projectors (JSON)"
        )
        s.add_argument(
            "--require-live-here",
            action="store_true",
            help="exit 1 unless a projector of this host (default consumer name) is alive: "
            "a container's health check",
        )
        s.set_defaults(func=run_status)


@contextlib.contextmanager
def open_projections() -> Iterator[Any]:
    """The configured store's ProjectionStore, or SystemExit(2) without a Redis to use."""
    from service.settings import Settings
    from service.store.read_models import ProjectionStore

    count_arranged = Settings.from_env().count_arranged_games
    with open_store() as store:
        yield ProjectionStore(store, count_arranged)


def run_project(args: argparse.Namespace, on_applied: Callable[[int], None] | None = None) -> int:
    """Run the projector until SIGTERM/SIGINT; ``on_applied``: see ``Projector``."""
    from service.app.projector import Projector
    from service.app.transparency import Appender
    from service.settings import Settings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    if getattr(args, "parent_pid", None):
        from service.lifeline import watch_parent

        watch_parent(args.parent_pid, stop.set)
    with open_projections() as projections:
        projector = Projector(
            projections,
            group=args.group,
            consumer=args.consumer,
            batch_size=args.batch,
            block_ms=args.block_ms,
            claim_idle_ms=args.claim_idle_ms,
            claim_interval=args.claim_interval,
            generation=args.generation,
            on_applied=on_applied,
            lease_ms=args.lease_ms,
            public_log=Appender(projections.store, Settings.from_env().log_origin),
        )
        logging.getLogger(__name__).info(
            "projector %s running on %d partitions", projector.consumer, projections.partitions
        )
        projector.run(stop)
    return OK


def run_rebuild(args: argparse.Namespace) -> int:
    from service.app.projector import rebuild

    bar = None if args.no_progress else ProgressBar(sys.stderr)
    with open_projections() as projections:
        result = rebuild(projections, batch_size=args.batch, grace_seconds=args.grace, progress=bar)
    if bar is not None:
        bar.finish()
    print(
        json.dumps(
            {
                "generation": result.generation,
                "replaced": result.replaced,
                "entries": result.entries,
                "seconds": round(result.seconds, 3),
            }
        )
    )
    return OK


def run_status(args: argparse.Namespace) -> int:
    import socket

    from service.app.projector import live_projectors

    with open_projections() as projections:
        status = projections.as_of().to_dict()
        status["live"] = live_projectors(projections.redis, projections.store.prefix)
    print(json.dumps(status, indent=2))
    here = f"{socket.gethostname()}-"  # default_consumer_name(): host-pid
    if getattr(args, "require_live_here", False) and not any(
        name.startswith(here) for name in status["live"]
    ):
        return NOT_LIVE
    return OK


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point (``python -m service.cli.projections ...``)."""
    parser = argparse.ArgumentParser(prog="hearts")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
