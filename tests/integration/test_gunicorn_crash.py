"""Real gunicorn (``hearts serve``) on a real redis-server with AOF: SIGKILL it mid-game,
restart it (and Redis, from its append-only file), and the players finish with their tokens."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from tests import children
from tests.api.helpers import Hearts
from tests.integration.http import HttpClient
from tests.redis_helpers import free_port, start_redis_server, stop_redis_server


def start_serve(port: int, redis_url: str, prefix: str, log) -> subprocess.Popen:
    env = dict(
        os.environ,
        REDIS_URL=redis_url,
        HEARTS_KEY_PREFIX=prefix,
        HEARTS_SWEEP_ON_START="1",
    )
    # Its own session, so SIGKILL can take the master and its workers at once.
    process = children.start(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--workers", "2"]
        + ["--no-projector"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    client = HttpClient(f"http://127.0.0.1:{port}", timeout=2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"hearts serve exited with {process.returncode}")
        try:
            if client.get("/healthz").status_code == 200:
                return process
        except OSError:
            pass
        time.sleep(0.1)
    kill(process)
    raise AssertionError("hearts serve did not answer /healthz")


def kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


@pytest.fixture
def aof_redis(tmp_path):
    process, url = start_redis_server(tmp_path / "redis", appendonly=True)
    state = {"process": process, "url": url}
    yield state
    stop_redis_server(state["process"])


def test_players_finish_after_gunicorn_is_killed_mid_game(tmp_path, aof_redis):
    port = free_port()
    prefix = f"crash-{uuid.uuid4().hex[:8]}"
    with open(tmp_path / "serve.log", "ab") as log:
        play_through_a_crash(port, prefix, aof_redis, tmp_path, log)


def play_through_a_crash(port, prefix, aof_redis, tmp_path, log) -> None:
    server = start_serve(port, aof_redis["url"], prefix, log)
    try:
        hearts = Hearts(HttpClient(f"http://127.0.0.1:{port}"))
        # One hand (any hand scores a point): two humans make 28 moves in it (2 passes, 26
        # cards), so the crash comes after 25, late in the hand, and the game ends after it.
        game_id, tokens = hearts.new_game(2, rules={"score_limit": 1})
        for _ in range(25):  # through the pass and into the last tricks
            public = hearts.wait_for_humans(game_id, tokens)  # bots move in the background
            seat = next(s for s in public["awaiting"] if s in tokens)
            hearts.act(game_id, seat, tokens[seat])
        before = hearts.view(game_id)
        assert before["phase"] == "playing"

        kill(server)  # SIGKILL, master and workers
        # Redis goes down too, cleanly, and comes back from its append-only file.
        port_redis = int(aof_redis["url"].rsplit(":", 1)[1].split("/")[0])
        stop_redis_server(aof_redis["process"])
        aof_redis["process"], _ = start_redis_server(
            tmp_path / "redis", appendonly=True, port=port_redis
        )
        server = start_serve(port, aof_redis["url"], prefix, log)

        after = hearts.view(game_id)
        assert after["version"] >= before["version"]
        assert after["scores"] == before["scores"]
        final = hearts.play_out(game_id, tokens)
        assert final["phase"] == "finished" and final["winners"]
    finally:
        kill(server)
