"""bench/suite_cpu.py: the plugin records each test's CPU, and the report sums it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.suite_cpu import ENV, report, span, totals
from tests import children

ROOT = Path(__file__).resolve().parents[2]

SPIN = """import subprocess, sys
def test_spins():
    n = 0
    for i in range(3_000_000):
        n += i
def test_starts_a_child():
    subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)
"""


def _pytest(folder: Path, log: Path | None) -> subprocess.CompletedProcess:
    """A pytest of its own over ``folder``'s tests, with the plugin (``log``: $HEARTS_SUITE_CPU)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != ENV}
    env["PYTHONPATH"] = str(ROOT)
    if log is not None:
        env[ENV] = str(log)
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "bench.suite_cpu"]
    args += ["-c", "/dev/null"]  # not this project's addopts: one process, the file's order
    args += ["--rootdir", str(folder), str(folder)]
    done = children.run(args, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_a_run_with_the_plugin_records_every_test_and_the_report_sums_them(tmp_path: Path):
    (tmp_path / "test_spin.py").write_text(SPIN)
    log = tmp_path.parent / f"{tmp_path.name}.jsonl"
    _pytest(tmp_path, log)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["test"].split("::")[1] for r in rows] == ["test_spins", "test_starts_a_child"]
    spins, child = rows
    assert spins["cpu"] > 0.01 and spins["children"] == 0
    assert child["children"] > 0.01  # the child's CPU, not the worker's
    ((name, (cpu, children_cpu, _wall, count)),) = totals(rows, None)
    assert name.endswith("test_spin.py") and count == 2
    assert cpu == spins["cpu"] + child["cpu"] and children_cpu == child["children"]
    assert [r["worker"] for r in rows] == ["main", "main"]  # one process, no xdist
    assert spins["at"] + spins["wall"] <= child["at"] + 0.01  # one after the other (ms rounding)
    seconds, workers = span(rows)
    assert workers == 1 and seconds >= spins["wall"] + child["wall"] - 0.002  # rounding
    text = report(rows, 5)
    assert text.startswith("2 tests: ") and "on 1 worker(s), busy" in text


def test_without_its_variable_the_plugin_writes_nothing(tmp_path: Path):
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    _pytest(tmp_path, None)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["test_nothing.py"]
