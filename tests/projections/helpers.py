"""Driving projectors in tests: in-process until caught up, or as `hearts project` processes."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import redis

from service.app.projector import GROUP, Projector
from service.store.read_models import ProjectionStore


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


def spawn_projector(
    url: str, prefix: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """`hearts project` in its own process, on the test's server and key prefix."""
    full_env = {
        **os.environ,
        "REDIS_URL": url,
        "HEARTS_KEY_PREFIX": prefix,
        **(env or {}),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "service.cli", "project", "--block-ms", "100", *args],
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
