"""api_profile: where a play command's CPU goes in ``hearts serve``, by layer (py-spy samples).

Runs bench/api.py's set-up (a throwaway redis-server, ``hearts serve`` with bench/baseline_app.py,
the same asyncio client) and, during one play phase and one baseline phase, samples every gunicorn
worker with ``py-spy record`` (on-CPU samples only: time spent waiting on Redis or the client is
not counted). Each sample's stack is put in one layer: the innermost frame that belongs to a
layer decides (JSON, marshmallow/webargs, Flask/werkzeug/gunicorn, the Redis client, views, the
fold, the decider, bots, the store's sealing and envelopes, the rest of the service); a frame of
the standard library counts for the layer that called it. Printed per play command (a GET of the
acting seat's view + the POST) and per baseline request (one XADD), in microseconds of worker CPU.

Needs ``py-spy`` (``pip install py-spy``; not a dependency of the project) and the right to
ptrace the workers (root, or ``kernel.yama.ptrace_scope=0``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.api import Budget, Stats, run_phase
from bench.common import HeartsServer, RedisServer, Report, parser

# (layer, substrings of a frame's file); the first match wins, so the order matters.
LAYERS = (
    ("JSON", ("json/", "orjson", "flask/json")),
    ("marshmallow/webargs/smorest", ("marshmallow/", "webargs/", "flask_smorest/", "apispec/")),
    ("Redis client", ("redis/", "hiredis")),
    ("metrics", ("prometheus_client/", "service/metrics.py")),
    ("Flask/werkzeug", ("flask/", "werkzeug/", "blinker/")),
    ("gunicorn/gevent: HTTP, sockets", ("gunicorn/", "gevent/")),
    ("views", ("domain/views.py",)),
    ("bots", ("bots/",)),
    ("store: seal/envelope/hash", ("service/store/envelope.py",)),
    ("store: append/read", ("service/store/",)),
    ("domain: decide + events", ("domain/",)),
    ("service: app + handlers", ("service/", "bench/")),
)
FOLD_FUNCTIONS = ("evolve", "fold", "apply", "fold_records")


def layer_of(stack: list[str]) -> str:
    """The layer of one sample: its innermost frame that belongs to one (outermost first)."""
    found = "other"
    in_fold = False
    for frame in stack:
        function, _, where = frame.partition(" (")
        for name, keys in LAYERS:
            if any(where.startswith(key) or f"/{key}" in where for key in keys):
                if name.startswith("domain") and (in_fold or function in FOLD_FUNCTIONS):
                    name, in_fold = "domain: fold (evolve)", True
                found = name
                break
    return found


def collapsed(path: Path) -> dict[str, int]:
    """py-spy's raw (collapsed) output: samples per layer."""
    out: dict[str, int] = defaultdict(int)
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack:
            out[layer_of(stack.split(";"))] += int(count)
    return out


def sample(pids: list[int], seconds: float, rate: int, folder: Path, tag: str) -> list[Path]:
    """Start py-spy on every pid (it runs for ``seconds``); returns where each writes."""
    files = []
    for pid in pids:
        out = folder / f"{tag}-{pid}.txt"
        command = ["py-spy", "record", "-p", str(pid), "-d", str(int(seconds)), "-r", str(rate)]
        command += ["-f", "raw", "-o", str(out), "--nonblocking"]
        subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        files.append(out)
    return files


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=8.0, help="sampled seconds of each phase")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    args = p.parse_args(argv)
    if shutil.which("py-spy") is None:
        raise SystemExit("api_profile needs py-spy: pip install py-spy")

    budget = Budget(1_000_000)
    results: dict[str, tuple[dict[str, int], Stats]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="hearts-api-profile-") as tmp,
        RedisServer() as redis_server,
        HeartsServer(
            redis_server.url, workers=args.workers, app="bench.baseline_app:create_app"
        ) as server,
    ):
        pids = server.worker_pids()

        async def run() -> None:
            warm = Stats()
            for kind in ("play", "baseline"):
                await run_phase(kind, server.port, args.clients, 2.0, warm, budget, 0)
            for kind in ("play", "baseline"):
                stats = Stats()
                files = sample(pids, args.seconds + 1, args.rate, Path(tmp), kind)
                await run_phase(kind, server.port, args.clients, args.seconds, stats, budget, 7)
                await asyncio.sleep(2.0)  # py-spy writes its file when its duration ends
                samples: dict[str, int] = defaultdict(int)
                for file in files:
                    for _ in range(50):
                        if file.exists() and file.stat().st_size:
                            break
                        time.sleep(0.1)
                    for layer, n in collapsed(file).items():
                        samples[layer] += n
                results[kind] = (samples, stats)

        asyncio.run(run())

    report = Report("api_profile")
    units = {"play": ("pass", "play", "moon"), "baseline": ("xadd",)}
    for kind, (samples, stats) in results.items():
        done = stats.count(units[kind])
        # Samples cover a little more than the phase (py-spy starts first): per unit of work.
        total = sum(samples.values())
        per = 1e6 / args.rate / max(done, 1) * args.seconds / (args.seconds + 1)
        report.add(f"{kind}_units", done)
        report.add(f"{kind}_worker_cpu_us_per_unit", total * per, "us")
        for layer, n in sorted(samples.items(), key=lambda item: -item[1]):
            report.add(f"{kind}_{layer}", n * per, f"us ({100 * n / total:.0f}%)")
    report.note("units: play = one command (GET view + POST move); baseline = one XADD request")
    report.note(f"worker pids sampled with py-spy at {args.rate}/s, on-CPU samples only")
    report.emit(args.json)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
