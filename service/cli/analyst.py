"""``hearts analyst``: run the analyses of hands that the service queued (docs/analysis.md).

    HEARTS_ANALYSIS_WORKER=external hearts serve   # the API queues analyses, runs none
    hearts analyst [--claim-idle 60] [--once]

Any number of analysts share the queue (one Redis stream per partition, a consumer group): each
job is run by one of them, and a job whose analyst died (no progress for ``--claim-idle``
seconds) is taken over by the next one to look. Stop it with Ctrl-C or SIGTERM: the job under
way is left to the others.
"""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("analyst", help="run the queued analyses of hands")
    p.add_argument(
        "--claim-idle", type=float, default=60.0, help="seconds before a silent job is taken over"
    )
    p.add_argument("--name", help="this analyst's name in the group (default: host-pid)")
    p.add_argument("--once", action="store_true", help="run the jobs queued now, then exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from service.app.analysis import AnalysisJobs, Analyst, service_budget
    from service.app.projector import default_consumer_name
    from service.cli.connection import open_store
    from service.settings import Settings
    from service.store.analysis_queue import AnalysisQueue

    with open_store() as store:
        queue = AnalysisQueue(store, claim_idle_ms=int(args.claim_idle * 1000))
        jobs = AnalysisJobs(store, budget=service_budget(Settings.from_env()))
        analyst = Analyst(jobs, queue, args.name or default_consumer_name())
        if args.once:
            while analyst.run_once():
                pass
            return 0
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        print(f"hearts analyst {analyst.consumer}: waiting for jobs", flush=True)
        analyst.run(stop)
    return 0
