"""Driving projectors in tests: in-process until caught up, or as `hearts project` processes."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import redis

from service.app.projector import GROUP, Projector
from service.store.read_models import ProjectionStore
from tests import children


def drain(projector: Projector, count: int | None = None) -> int:
    """Poll (without blocking) until nothing new is delivered; returns entries handled."""
    projector.ensure_groups()
    handled = 0
    while True:
        n = projector.poll(block_ms=0, count=count)
        if n == 0:
            return handled
        handled += n


def pending(projections: ProjectionStore, group: str = GROUP) -> int:
    total = 0
    for key in projections.store.partition_log_keys():
        if projections.redis.exists(key):
            with contextlib.suppress(redis.ResponseError):  # no such group yet
                total += projections.redis.xpending(key, group)["pending"]
    return total


ROOT = Path(__file__).resolve().parents[2]


def spawn_projector(
    url: str, prefix: str, *args: str, crash_after: int | None = None
) -> subprocess.Popen:
    """`hearts project` in its own process, on the test's server and key prefix.

    ``crash_after``: the process SIGKILLs itself once it has applied that many log entries,
    before acknowledging them (tests/projections/crashing_projector.py).
    """
    full_env = {**os.environ, "REDIS_URL": url, "HEARTS_KEY_PREFIX": prefix}
    command = ["-m", "service.cli", "project"]
    if crash_after is not None:
        command = ["-m", "tests.projections.crashing_projector", str(crash_after)]
    return children.start(
        [sys.executable, *command, "--block-ms", "100", *args],
        cwd=ROOT,  # python -m finds the tests package from the repository's root
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(predicate, timeout: float = 20.0, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError("timed out waiting")


def caught_up(projections: ProjectionStore, group: str = GROUP, generation=None) -> bool:
    return projections.as_of(generation).lag == 0 and pending(projections, group) == 0


def stop(process: subprocess.Popen, timeout: float = 10.0) -> str:
    """SIGTERM (a clean stop) and the process's stderr."""
    if process.poll() is None:
        process.terminate()
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return err
