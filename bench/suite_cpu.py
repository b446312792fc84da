"""Where the test suite's CPU goes, test by test (issue 44: the suite's time).

A run's wall time says little on a shared machine, and ``--durations`` counts a test's waits
with its work. This pytest plugin records, for every test, the CPU its worker spent (user +
system, setup and teardown included) and that of the children it started and waited for
(`hearts serve`, a scratch pytest, a CLI), as JSON lines; the report sums them by folder and
by file, heaviest first::

    HEARTS_SUITE_CPU=/tmp/cpu.jsonl python -m pytest -p bench.suite_cpu
    python -m bench.suite_cpu /tmp/cpu.jsonl

Not counted: processes reaped only at the session's end (Chromium behind Playwright's driver,
the session's redis-servers and moto) and the Redis servers' own work; ``/usr/bin/time -v``
around the run counts those too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENV = "HEARTS_SUITE_CPU"


def _cpu() -> tuple[float, float]:
    mine = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    path = os.environ.get(ENV)
    if not path:
        yield
        return
    own, children = _cpu()
    at = time.time()
    started = time.monotonic()
    yield
    own_after, children_after = _cpu()
    row = {
        "test": item.nodeid,
        "cpu": round(own_after - own, 4),
        "children": round(children_after - children, 4),
        "wall": round(time.monotonic() - started, 4),
        # When and where it ran, for a timeline of the run (what ran beside what).
        "at": round(at, 3),
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
    }
    # One short line an append (xdist's workers share the file): written whole.
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")


def totals(rows: list[dict[str, Any]], depth: int | None) -> list[tuple[str, list[float]]]:
    """[cpu, children, wall, tests] summed by the test's file (``depth`` None) or by its
    first ``depth`` path parts, heaviest (cpu + children) first."""
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for row in rows:
        path = row["test"].split("::", 1)[0]
        key = path if depth is None else "/".join(path.split("/")[:depth])
        total = sums[key]
        total[0] += row["cpu"]
        total[1] += row["children"]
        total[2] += row["wall"]
        total[3] += 1
    return sorted(sums.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))


def span(rows: list[dict[str, Any]]) -> tuple[float, int] | None:
    """Seconds from the first test's start to the last one's end, and how many workers ran
    them (None for a log without the times)."""
    timed = [r for r in rows if "at" in r]
    if not timed:
        return None
    first = min(r["at"] for r in timed)
    last = max(r["at"] + r["wall"] for r in timed)
    return last - first, len({r["worker"] for r in timed})


def report(rows: list[dict[str, Any]], files: int) -> str:
    cpu = sum(r["cpu"] for r in rows)
    children = sum(r["children"] for r in rows)
    wall = sum(r["wall"] for r in rows)
    lines = [
        f"{len(rows)} tests: {cpu:,.0f} CPU-s in the workers, {children:,.0f} in their "
        f"children, {wall:,.0f} s of tests' wall time (summed over workers)",
    ]
    timed = span(rows)
    if timed is not None:
        seconds, workers = timed
        lines.append(
            f"run: {seconds:,.0f} s of tests on {workers} worker(s), busy "
            f"{wall / (seconds * workers):.0%} of it"
        )
    lines += [
        "",
        f"{'cpu':>8} {'children':>8} {'wall':>8} {'tests':>6}  folder",
    ]
    for key, (c, k, w, n) in totals(rows, 2):
        lines.append(f"{c:8.1f} {k:8.1f} {w:8.1f} {int(n):6d}  {key}")
    lines += ["", f"{'cpu':>8} {'children':>8} {'wall':>8} {'tests':>6}  file"]
    for key, (c, k, w, n) in totals(rows, None)[:files]:
        lines.append(f"{c:8.1f} {k:8.1f} {w:8.1f} {int(n):6d}  {key}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help=f"the JSON lines a run wrote (${ENV})")
    parser.add_argument("--files", type=int, default=40, help="how many files to list")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.log.read_text().splitlines() if line.strip()]
    print(report(rows, args.files))


if __name__ == "__main__":
    main()
