"""A graceful stop gives its partition leases back (issue 43): another archiver, projector or
timekeeper takes over at once, not after the leases lapse; a pass by hand that covers no
partition says so and fails."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import fakeredis
import pytest

from service.cli import main
from service.cli.serve import give_back_leases_on_stop
from service.store.leases import PartitionLeases, close_all
from service.store.redis_server import client_for
from tests import children
from tests.archive.helpers import ON_A_REAL_REDIS, World
from tests.redis_helpers import free_port

ROOT = Path(__file__).resolve().parents[2]
LEASE_MS = 30_000


def _leases(redis, owner: str, partitions: int = 16) -> PartitionLeases:
    return PartitionLeases(
        redis,
        partitions=partitions,
        key_of=lambda p: f"t:{{p{p}}}:lease",
        members_key="t:members",
        owner=owner,
        lease_ms=LEASE_MS,
    )


def _private_redis() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis(server=fakeredis.FakeServer())


def _held(redis, partitions: int = 16) -> list[int]:
    return [p for p in range(partitions) if redis.exists(f"t:{{p{p}}}:lease")]


def test_close_all_gives_every_lease_back_and_takes_none_again():
    redis = _private_redis()
    first = _leases(redis, "a")
    first.refresh()
    assert _held(redis) == list(range(16))
    assert close_all() >= 16
    assert _held(redis) == [] and redis.zcard("t:members") == 0
    first.refresh()  # a loop still running after the stop takes nothing
    assert _held(redis) == []
    second = _leases(redis, "b")  # another member: every partition free for it at once
    second.refresh()
    assert len(second.owned) == 16


def test_a_broken_holder_does_not_keep_the_others_leases():
    redis = _private_redis()
    broken = _leases(_private_redis(), "broken")
    broken.refresh()

    def closed_client(**kwargs):
        raise AttributeError("'NoneType' object has no attribute 'redis_connection'")

    broken._release = closed_client
    holder = _leases(redis, "holder")
    holder.refresh()
    close_all()
    assert _held(redis) == [] and broken.closed


def test_a_lost_lease_is_one_line_for_all_its_partitions(caplog):
    redis = _private_redis()
    leases = _leases(redis, "a")
    leases.refresh()
    for p in (0, 1, 2, 5, 9):  # lapsed (a stall) and taken by another
        redis.set(f"t:{{p{p}}}:lease", "b")
    with caplog.at_level(logging.WARNING, logger="service.store.leases"):
        leases.refresh()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert "a lost 5 partition(s) (0-2, 5, 9)" in lines[0]


def test_a_sigterm_to_a_worker_gives_its_leases_back_before_the_graceful_stop():
    redis = _private_redis()
    leases = _leases(redis, "worker")
    leases.refresh()
    stopped = threading.Event()

    class Worker:  # what gunicorn's worker does on SIGTERM: stop taking requests, then exit
        def handle_exit(self, signum, frame):
            stopped.set()

    previous = signal.getsignal(signal.SIGTERM)
    try:
        give_back_leases_on_stop(Worker())
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _held(redis) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert stopped.is_set()
    assert _held(redis) == []


@ON_A_REAL_REDIS
def test_a_pass_by_hand_that_covers_no_partition_says_so_and_fails(
    hub: World, redis_server, monkeypatch, capsys
):
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", hub.store.prefix)
    monkeypatch.setenv("HEARTS_ARCHIVE_URL", hub.archive_url)
    running = hub.archiver()
    running.refresh_leases()  # the only archiver: it holds every partition
    assert len(running.leases.owned) == hub.store.partitions
    try:
        assert main(["archive", "run", "--once", "--after", "0"]) == 1
        captured = capsys.readouterr()
        assert "covered no partition" in captured.err
        assert '"partitions": []' in captured.out
    finally:
        running.release()
    assert main(["archive", "run", "--once", "--after", "0"]) == 0  # given back: all covered
    assert f'"partitions": {list(range(hub.store.partitions))}' in capsys.readouterr().out


def test_hearts_serve_gives_the_archivers_leases_back_on_sigterm(
    tmp_path, redis_server, key_prefix
):
    """The soak's finding: SIGTERM to ``hearts serve``, and the archiver's leases stayed 12-30 s.
    Now they are gone as the worker stops, long before they would lapse (30 s)."""
    environment = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "REDIS_URL": redis_server,
        "HEARTS_KEY_PREFIX": key_prefix,
        "HEARTS_ARCHIVE_AFTER": "10",  # a pass (and the leases taken) every second
        "HEARTS_ARCHIVE_URL": str(tmp_path / "archive"),
    }
    log = open(tmp_path / "serve.log", "ab")  # noqa: SIM115 - closed with the process
    port = free_port()
    process = children.start(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--workers", "1"]
        + ["--no-projector"],
        cwd=tmp_path,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    redis = client_for(redis_server)
    leases = [f"{key_prefix}:{{p{p}}}:archivelease" for p in range(16)]
    try:
        deadline = time.monotonic() + 90
        while redis.exists(*leases) < 16:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "the worker's archiver never took its leases"
            time.sleep(0.1)
        stopped = time.monotonic()
        process.send_signal(signal.SIGTERM)
        while redis.exists(*leases) and time.monotonic() - stopped < LEASE_MS / 1000:
            time.sleep(0.05)
        given_back = time.monotonic() - stopped
        assert process.wait(timeout=60) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        log.close()
        redis.close()
    # Given back as the worker stopped: well within the graceful stop, never a lapse.
    assert given_back < 10, f"leases held {given_back:.1f} s after SIGTERM"


@pytest.fixture(autouse=True)
def _no_stray_leases():
    """Nothing of a test holds a lease into the next (only its own are closed)."""
    from service.store import leases

    before = set(leases._LIVE)
    yield
    for made in set(leases._LIVE) - before:
        with contextlib.suppress(Exception):  # a holder broken on purpose
            made.close()
