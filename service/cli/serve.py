"""``hearts serve``: run the API under gunicorn.

Redis: REDIS_URL if set; else the embedded default (service/store/redis_server.py), started here in
the master so every worker shares it; without redis-server either, it refuses to start (exit 2)
unless ``--ephemeral``, which keeps every game in one worker's memory and says so loudly. Workers
are gevent workers (``sse_worker_class``: an idle live event stream costs a greenlet, not a
thread). Metrics use prometheus_client's multiprocess mode in a fresh directory
(service/metrics.py). The start-up sweep carries on games left on a bot's turn. If another module
registers the ``project`` subcommand, the projector runs beside the API as ``hearts project``
unless ``--no-projector``, supervised (service/cli/supervise.py: restarted with back-off whenever
it exits). The embedded redis-server, the projector and the workers end with the master, even
when it is killed with SIGKILL (service/lifeline.py). The data directory is the user's
(service/settings.py ``data_directory``) unless ``--data-dir`` or HEARTS_DATA_DIR says otherwise;
it is printed at start-up with the URLs of the web table, the API docs and the API. gunicorn's
control socket (``gunicornc``, gunicorn 25.1+) is off: its default lives in the user's home,
shared by every ``hearts serve`` of the machine."""

from __future__ import annotations

import argparse
import functools
import importlib
import logging
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_APP = "service.api.factory:create_app"
ORDINARY_CONNECTIONS = 1000  # a gevent worker's connections beyond its live streams


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("serve", help="run the HTTP API (gunicorn)")
    # Defaults None: Settings (HEARTS_HOST, HEARTS_PORT, HEARTS_WORKERS, HEARTS_THREADS) decide.
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default 8000)")
    parser.add_argument("--workers", type=int, help="processes (default 2)")
    parser.add_argument("--threads", type=int, help="threads per worker (default 8)")
    parser.add_argument(
        "--no-projector", action="store_true", help="do not start the projector beside the API"
    )
    parser.add_argument(
        "--data-dir",
        help="where the embedded redis-server keeps its files "
        "(default: HEARTS_DATA_DIR, else the user's data directory)",
    )
    parser.add_argument(
        "--ephemeral",
        action="store_true",
        help="keep games in this process's memory (fakeredis): NOTHING survives a restart",
    )
    parser.add_argument(
        "--app",
        default=DEFAULT_APP,
        help="module:function that builds the Flask app from Settings (bench/ serves its own)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # Imported here: service.settings and service.store.redis_server do not import
    # prometheus_client, which must not be imported before its multiprocess directory is set.
    from service.cli import metrics_dir as metrics_directory
    from service.cli import refusals
    from service.cli.replay import sse_worker_class
    from service.cli.supervise import Supervisor
    from service.settings import Settings, data_directory, publish_metrics_dir
    from service.store import redis_server

    settings = Settings.from_env()
    data_dir, note = data_directory(getattr(args, "data_dir", None) or settings.data_dir)
    started: redis_server.EmbeddedRedis | None = None
    url = settings.redis_url
    if args.ephemeral and url:
        print("hearts serve: --ephemeral and REDIS_URL exclude each other", file=sys.stderr)
        return 2
    if note:
        log.warning("%s", note)
    if args.ephemeral:
        url = redis_server.ephemeral().url
    elif not url:
        try:
            started = redis_server.start(data_dir)
        except redis_server.NoRedis as exc:
            print(f"hearts serve: {exc}", file=sys.stderr)
            return 2
        url = started.url
    workers = args.workers or settings.workers
    if url == redis_server.FAKE_URL and workers != 1:
        log.warning("fakeredis lives inside one process: running 1 worker, not %d", workers)
        workers = 1
    metrics_dir = metrics_directory.make()
    publish_metrics_dir(metrics_dir)
    in_process = settings.projector_in_process
    companion: Supervisor | None = None
    # The workers get these settings as they are; the companion projector reads them again.
    settings = replace(
        settings,
        redis_url=url,
        data_dir=str(data_dir),
        metrics_dir=metrics_dir,
        sweep_on_start=settings.sweep_on_start is not False,  # serve sweeps unless told not to
        rate_limits=settings.rate_limits is not False,  # and limits rates unless told not to
        # and archives ended games unless told not to (or ephemeral: the objects would outlive
        # the only index of them, the process's fakeredis)
        archiver=settings.archiver is not False and url != redis_server.FAKE_URL,
    )
    if not args.no_projector and url != redis_server.FAKE_URL and _has_subcommand("project"):
        command = [sys.executable, "-m", "service.cli", "project", "--parent-pid", str(os.getpid())]
        companion = Supervisor("projector", command, settings.child_env()).start()
    elif not args.no_projector and url == redis_server.FAKE_URL:
        in_process = True  # fakeredis lives inside the worker: only a thread there can project it
    settings = replace(settings, projector_in_process=in_process)
    host, port = args.host or settings.host, args.port or settings.port
    if companion is not None:
        projector = "supervised, beside the API (hearts project)"
    elif in_process:
        projector = "in a thread of the worker"
    else:
        projector = "not started here (--no-projector): run hearts project"
    _announce(host, port, url, data_dir, embedded=started is not None, projector=projector)
    master = os.getpid()
    try:
        HeartsGunicorn(
            {
                "bind": f"{host}:{port}",
                "workers": workers,
                "worker_class": sse_worker_class(settings.worker_class),  # see docs/replay.md
                "threads": args.threads or settings.threads,
                # gevent: each open stream holds one of these; ordinary requests keep the rest.
                "worker_connections": settings.sse_max_streams + ORDINARY_CONNECTIONS,
                "timeout": 60,
                "graceful_timeout": 10,
                "accesslog": "-",
                "child_exit": functools.partial(_child_exit, metrics_dir),
                "post_fork": _worker_dies_with_master,
                **_no_control_socket(),
                # Request line and header bounds, and gunicorn's refusals of them answered as
                # problem+json (service/cli/refusals.py), not HTML.
                **refusals.LIMITS,
                "post_worker_init": _post_worker_init,
                "worker_exit": _worker_exit,
            },
            lambda: _app_factory(args.app)(settings),
        ).run()
    finally:
        # A worker leaves gunicorn with SystemExit through this same frame (it was forked from
        # here): only the master owns the companion, the embedded server and the metrics files.
        if os.getpid() == master:
            if companion is not None:
                companion.stop()
            if started is not None:
                started.stop()
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def _announce(
    host: str, port: int, url: str, data_dir: Any, *, embedded: bool, projector: str
) -> None:
    """Where everything is, on stderr before gunicorn's own log."""
    shown = "localhost" if host in ("0.0.0.0", "::", "") else host
    base = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"
    if embedded:
        store = f"embedded redis-server, append-only file in {data_dir}"
    elif url.startswith("fakeredis"):
        store = "in this process's memory only (--ephemeral): nothing survives a restart"
    else:
        store = f"{_redacted(url)} (REDIS_URL)"
    lines = [
        f"hearts serve on {base}",
        f"  web table  {base}/",
        f"  API docs   {base}/api/v1/docs",
        f"  API        {base}/api/v1/  (OpenAPI document: {base}/api/v1/openapi.json)",
        f"  health     {base}/healthz, {base}/readyz, metrics {base}/metrics",
        # The data directory matters only to the embedded server; otherwise the store says all.
        *([f"  data       {data_dir}"] if embedded else []),
        f"  store      {store}",
        f"  projector  {projector}",
    ]
    print("\n".join(lines), file=sys.stderr, flush=True)


def _redacted(url: str) -> str:
    """The URL without its password."""
    scheme, sep, rest = url.partition("://")
    credentials, at, location = rest.rpartition("@")
    if not at or ":" not in credentials:
        return url
    return f"{scheme}{sep}{credentials.split(':', 1)[0]}:***@{location}"


def _no_control_socket() -> dict[str, Any]:
    """gunicorn 25.1+ opens a control socket, by default in the user's home (one path for every
    gunicorn of the user, so two ``hearts serve`` fight over it): off (older gunicorn: nothing)."""
    from gunicorn.config import KNOWN_SETTINGS

    names = {setting.name for setting in KNOWN_SETTINGS}
    return {"control_socket_disable": True} if "control_socket_disable" in names else {}


def _worker_dies_with_master(server: Any, worker: Any) -> None:
    """gunicorn's post_fork hook: the worker gets SIGTERM when the master dies (gunicorn's own
    parent check only runs between requests)."""
    from service.lifeline import end_with_parent

    end_with_parent(server.pid)


def _post_worker_init(worker: Any) -> None:
    """gunicorn's post_worker_init hook: refusals as problems, and leases given back on a
    graceful stop."""
    from service.cli import refusals

    refusals.post_worker_init(worker)
    give_back_leases_on_stop(worker)


def give_back_leases_on_stop(worker: Any) -> None:
    """On SIGTERM, before the worker's graceful stop (which waits up to graceful_timeout for
    open requests and streams, then may be killed), every partition lease of the process
    (its archiver's) is given back, so another worker or host takes the partitions over at once
    instead of after the leases lapse (service/store/leases.py)."""
    graceful = worker.handle_exit

    def handle_exit(signum: int, frame: Any) -> None:
        # Redis calls do not belong in a signal handler (a gevent worker runs it in its event
        # loop, where nothing may block): a greenlet or a thread does them, at once.
        _in_background(_give_back)
        graceful(signum, frame)

    worker.handle_exit = handle_exit
    signal.signal(signal.SIGTERM, handle_exit)


def _worker_exit(server: Any, worker: Any) -> None:
    """gunicorn's worker_exit hook: a worker leaving by any other way than SIGTERM (its
    max_requests, a failed boot) gives its leases back too (none left after a SIGTERM)."""
    _give_back()


def _in_background(work: Callable[[], None]) -> None:
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover - gevent is a dependency
        monkey = None
    if monkey is not None and monkey.is_module_patched("threading"):
        import gevent

        gevent.spawn(work)  # a thread's start() would wait in the event loop: refused there
        return
    threading.Thread(target=work, name="hearts-leases-back", daemon=True).start()


def _give_back() -> None:
    from service.store.leases import close_all

    try:
        given = close_all()
    except Exception as error:  # stopping anyway: the leases lapse on their own
        log.warning("stopping: the partition leases were not given back (%s)", error)
        return
    if given:
        log.info("stopping: gave back %d partition lease(s)", given)


def _app_factory(spec: str) -> Callable[[Any], Any]:
    module_name, _, name = spec.partition(":")
    return getattr(importlib.import_module(module_name), name or "create_app")


def _has_subcommand(name: str) -> bool:
    from service.cli import SUBCOMMANDS

    return any(entry == name for entry, _ in SUBCOMMANDS)


def _child_exit(directory: str, server: Any, worker: Any) -> None:
    # Not service.metrics: importing it here would make the master a metrics writer too.
    from prometheus_client import multiprocess

    if os.path.isdir(directory):
        multiprocess.mark_process_dead(worker.pid, directory)


def _base() -> type:
    from gunicorn.app.base import BaseApplication

    return BaseApplication


class HeartsGunicorn(_base()):  # type: ignore[misc]
    """gunicorn run in-process; each worker builds its own app (and Redis connections)."""

    def __init__(self, options: dict[str, Any], build_app: Callable[[], Any]) -> None:
        self.options = options
        self.build_app = build_app
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.build_app()
