"""Issue 40's Done-when for the arena: 12 bot accounts play an arena of one-hand games through
the public HTTP API of a real ``hearts serve`` (two workers, its projector), SIGKILLed in the
middle (the master and every child at once: no process gets to finish a step) and started again
on the same Redis. Then, from the export alone (tests/tournaments/arena_checks.py): nobody was
paired into two games at once, every finished game counts once, and the standings equal a
rebuild from the games' own logs.

The arena lasts the shortest an arena may (``MIN_SECONDS``, 30 s) with a 30 s grace, and its
bots play at full pace (a bot account's games are a tournament's, unpaced): about fifty games
on a quiet machine, a dozen or more on a busy one. The kill comes once more than three games
were paired (the first three tables start at once), so some games ended and some are in play.
Every process goes through tests/children.py, so none outlives an interrupted run."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hearts_client.verify_tournament import verify_tournament

from domain.tournament.arena import MIN_SECONDS
from tests import children
from tests.integration.http import HttpClient
from tests.redis_helpers import free_port, start_redis_server, stop_redis_server
from tests.tournaments.arena_checks import check_arena_export

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="lifeline: Linux")

ROOT = Path(__file__).resolve().parents[2]
API = "/api/v1"
PLAYERS = 12
DURATION = MIN_SECONDS
GRACE = 30


def _serve(port: int, redis_url: str, prefix: str, log) -> subprocess.Popen:
    env = dict(
        os.environ,
        REDIS_URL=redis_url,
        HEARTS_KEY_PREFIX=prefix,
        HEARTS_RATE_LIMITS="off",  # twelve accounts from one address, polled
        PYTHONPATH=str(ROOT),
    )
    env.pop("HEARTS_DATA_DIR", None)
    return children.start(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--workers", "2"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group: one SIGKILL takes the master and every child
    )


def _answering(process: subprocess.Popen, client: HttpClient, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"hearts serve exited with {process.returncode}"
        with contextlib.suppress(OSError):
            if client.get("/healthz").status_code == 200:
                return
        time.sleep(0.2)
    raise AssertionError("hearts serve did not answer /healthz")


def _kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


def _group_gone(pgid: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError("a process of the killed server is still running")


def _ok(response, status: int = 200) -> dict:
    assert response.status_code == status, (response.status_code, response.get_json())
    return response.get_json()


@pytest.fixture
def redis_url(tmp_path):
    process, url = start_redis_server(tmp_path / "redis", appendonly=True)
    yield url
    stop_redis_server(process)


@pytest.mark.unlimited("twelve accounts from one address play and are polled")
def test_an_arena_of_twelve_bots_survives_a_sigkill_of_serve(tmp_path, redis_url) -> None:
    prefix = f"arena-{uuid.uuid4().hex[:8]}"
    log = open(tmp_path / "serve.log", "ab")  # noqa: SIM115 - closed in the finally
    port = free_port()
    server = _serve(port, redis_url, prefix, log)
    try:
        client = HttpClient(f"http://127.0.0.1:{port}", timeout=20)
        _answering(server, client)
        keys = [
            _ok(client.post(f"{API}/players", {"name": f"Arena bot {i:02d}"}), 201)["key"]
            for i in range(PLAYERS)
        ]

        def auth(key: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {key}"}

        settings = {
            "name": "Twelve bots, one kill",
            "format": "arena",
            "duration_seconds": DURATION,
            "grace_seconds": GRACE,
            "hands": 1,
            "min_players": PLAYERS,
            "max_players": PLAYERS,
        }
        tid = _ok(client.post(f"{API}/tournaments", settings, headers=auth(keys[0])), 201)["id"]
        for key in keys:
            body = {"stand_in": "random"}
            _ok(client.post(f"{API}/tournaments/{tid}/entries", body, headers=auth(key)))
        started = _ok(client.post(f"{API}/tournaments/{tid}/start", {}, headers=auth(keys[0])))
        # The first three tables at once (a fourth if one-hand games of bots ended already).
        assert started["status"] == "running" and started["arena"]["games_paired"] >= 3

        # Once a game ended and its table was paired again, with games in play: SIGKILL it all.
        deadline = time.monotonic() + DURATION / 2
        while (before := _ok(client.get(f"{API}/tournaments/{tid}"))["arena"])["games_paired"] <= 3:
            assert time.monotonic() < deadline, before
            time.sleep(0.5)
        _kill(server)
        _group_gone(server.pid)

        port = free_port()
        server = _serve(port, redis_url, prefix, log)  # the same Redis, nothing else kept
        client = HttpClient(f"http://127.0.0.1:{port}", timeout=20)
        _answering(server, client)
        deadline = time.monotonic() + DURATION + GRACE + 60
        while True:
            body = _ok(client.get(f"{API}/tournaments/{tid}"))
            if body["status"] == "finished":
                break
            assert time.monotonic() < deadline, body
            time.sleep(1)

        export = _ok(client.get(f"{API}/tournaments/{tid}/export"))
        games = check_arena_export(export)
        findings = verify_tournament(export)  # hearts-verify agrees
        assert all(f.ok for f in findings), [str(f) for f in findings if not f.ok]
        arena = body["arena"]
        assert arena["games_in_play"] == 0 and arena["games_paired"] > before["games_paired"]
        assert len(games) == arena["games_paired"]  # every game paired ended and was recorded
        standings = _ok(client.get(f"{API}/tournaments/{tid}/standings"))
        assert standings["frozen"] and standings["standings"] == export["standings"]
        assert standings["games_counted"] == sum(
            1 for e in export["log"] if e["type"] == "ArenaGameRecorded" and e["data"]["counted"]
        )
        assert sum(row["points"] for row in standings["standings"]) == 12 * len(
            [e for e in export["log"] if e["type"] == "ArenaGameRecorded" and e["data"]["counted"]]
        )
    finally:
        _kill(server)
        log.close()
