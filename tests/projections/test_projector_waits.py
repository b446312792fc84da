"""A projector started before Redis waits for it (with back-off) instead of dying (issue 18)."""

from __future__ import annotations

import random
import subprocess
import threading

import redis

from domain import RuleOptions
from service.app.projector import live_projectors
from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from tests.projections.games import append_all, play_game
from tests.projections.helpers import caught_up, spawn_projector, stop, wait_until
from tests.redis_helpers import free_port, start_redis_server, stop_redis_server


def test_hearts_project_started_before_redis_waits_and_then_projects(tmp_path, key_prefix):
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    projector = spawn_projector(url, key_prefix, "--lease-ms", "1000")
    server = None
    client = None
    try:
        # It met the refused connection and is waiting to retry, not dead: a log line says so
        # (a time would not: under load the process took 2.7 s just to start, issue 34).
        logged = read_until(projector, "Redis unreachable", timeout=60)
        assert projector.poll() is None, logged + stop(projector)
        server, _ = start_redis_server(tmp_path / "redis", port=port)
        client = redis.Redis.from_url(url)
        store = RedisEventStore(client, prefix=key_prefix)
        rng = random.Random(18)
        append_all(store, [play_game("late-redis", RuleOptions(score_limit=20), rng)], rng)
        projections = ProjectionStore(store)
        # Back-off is at most RETRY_MAX (30 s) but the first retries come within seconds.
        wait_until(lambda: projections.current_generation() is not None, timeout=60)
        wait_until(lambda: caught_up(projections), timeout=60)
        assert live_projectors(client, key_prefix) != []
        assert projections.scoreboard("late-redis", projections.current_generation()) is not None
    finally:
        err = stop(projector)
        if client is not None:
            client.close()
        if server is not None:
            stop_redis_server(server)
    assert "Redis unreachable" in logged + err


def read_until(process: subprocess.Popen, text: str, timeout: float) -> str:
    """The process's stderr up to and including the first line that holds ``text``; fails if
    the process ends first or ``timeout`` passes. What follows stays in the pipe."""
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        for line in process.stderr:  # ends when the process does
            lines.append(line)
            if text in line:
                found.set()
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    logged = "".join(lines)
    assert found.is_set(), f"no {text!r} in the projector's log: {logged!r}"
    return logged


def test_the_in_process_projector_runs_again_after_a_failure():
    from service.api.projections import _run_supervised

    runs: list[int] = []

    class Flaky:
        def run(self, stop: threading.Event) -> None:
            runs.append(len(runs))
            if len(runs) == 1:
                raise RuntimeError("a bug in an apply step")
            stop.set()  # the second run ends normally

    _run_supervised(Flaky(), threading.Event())  # type: ignore[arg-type]
    assert runs == [0, 1]
