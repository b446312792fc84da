"""``hearts serve``: run the API under gunicorn.

Redis: REDIS_URL if set; else the embedded default (service/store/redis_server.py), started here in
the master so every worker shares it. Workers are gevent workers (``sse_worker_class``: an idle live
event stream costs a greenlet, not a thread). Metrics use prometheus_client's multiprocess mode in a
fresh directory (service/metrics.py). The start-up sweep carries on games left on a bot's turn. If
another module registers the ``project`` subcommand, the projector runs beside the API as ``hearts
project`` unless ``--no-projector``."""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

log = logging.getLogger(__name__)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("serve", help="run the HTTP API (gunicorn)")
    env = os.environ
    parser.add_argument("--host", default=env.get("HEARTS_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(env.get("HEARTS_PORT", "8000")))
    parser.add_argument(
        "--workers", type=int, default=int(env.get("HEARTS_WORKERS", "2")), help="processes"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=int(env.get("HEARTS_THREADS", "8")),
        help="threads per worker",
    )
    parser.add_argument(
        "--no-projector", action="store_true", help="do not start the projector beside the API"
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # Imported here: service.settings and service.store.redis_server do not import
    # prometheus_client, which must not be imported before PROMETHEUS_MULTIPROC_DIR is set.
    from service.cli.replay import sse_worker_class
    from service.settings import Settings
    from service.store import redis_server

    settings = Settings.from_env()
    started: redis_server.EmbeddedRedis | None = None
    url = settings.redis_url
    if not url:
        started = redis_server.start(settings.data_dir)
        url = started.url
    workers = args.workers
    if url == redis_server.FAKE_URL and workers != 1:
        log.warning("fakeredis lives inside one process: running 1 worker, not %d", workers)
        workers = 1
    os.environ["REDIS_URL"] = url
    os.environ.setdefault("HEARTS_SWEEP_ON_START", "1")
    metrics_dir = tempfile.mkdtemp(prefix="hearts-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir

    companion = None
    if not args.no_projector and url != redis_server.FAKE_URL and _has_subcommand("project"):
        companion = subprocess.Popen([sys.executable, "-m", "service.cli", "project"])
    elif not args.no_projector and url == redis_server.FAKE_URL:
        # fakeredis lives inside the worker: only a thread there can project it.
        os.environ["HEARTS_PROJECTOR_IN_PROCESS"] = "1"
    try:
        HeartsGunicorn(
            {
                "bind": f"{args.host}:{args.port}",
                "workers": workers,
                "worker_class": sse_worker_class(),  # gevent: see docs/replay.md
                "threads": args.threads,
                "timeout": 60,
                "graceful_timeout": 10,
                "accesslog": "-",
                "child_exit": _child_exit,
            }
        ).run()
    finally:
        if companion is not None and companion.poll() is None:
            companion.terminate()
            companion.wait(10)
        if started is not None:
            started.stop()
        shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def _has_subcommand(name: str) -> bool:
    from service.cli import SUBCOMMANDS

    return any(entry == name for entry, _ in SUBCOMMANDS)


def _child_exit(server: Any, worker: Any) -> None:
    # Not service.metrics: importing it here would make the master a metrics writer too.
    from prometheus_client import multiprocess

    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory and os.path.isdir(directory):
        multiprocess.mark_process_dead(worker.pid, directory)


def _base() -> type:
    from gunicorn.app.base import BaseApplication

    return BaseApplication


class HeartsGunicorn(_base()):  # type: ignore[misc]
    """gunicorn run in-process; each worker builds its own app (and Redis connections)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from service.api.factory import create_app

        return create_app()
