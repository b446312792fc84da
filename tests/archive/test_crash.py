"""The archiver SIGKILLed at each step while other games end: every game is found, once, and
audits, exports and verifies its players' heads as before it moved."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hearts_client import verify as hv

from service.app.transparency import HEAD_HEADER
from tests.archive.helpers import ON_A_REAL_REDIS, World
from tests.projections.helpers import ROOT

API = "/api/v1"
STEPS = ["written", "checked", "recorded", "removed"]


def _archive_run(hub: World, redis_url: str, crash_at: str | None) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "HEARTS_KEY_PREFIX": hub.store.prefix,
        "HEARTS_ARCHIVE_URL": hub.archive_url,
        "HEARTS_ARCHIVE_AFTER": "0",
    }
    command = ["-m", "service.cli", "archive", "run", "--once"]
    if crash_at is not None:
        command = ["-m", "tests.archive.crashing_archiver", crash_at]
    return subprocess.run(
        [sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def _seen(hub: World, game_id: str) -> tuple:
    http = hub.app.test_client()
    audit = http.get(f"{API}/games/{game_id}/audit").get_json()
    export = http.get(f"{API}/games/{game_id}/export").get_json()
    export.pop("exported_at")
    return hub.store.read(game_id), audit, export


def _hearts_verify(hub: World, game_id: str, head: str, where: Path) -> tuple[int, str]:
    """hearts-verify of the game's export with a head its player kept and its inclusion proof
    (the client's own verifier: it needs nothing of the server)."""
    http = hub.app.test_client()
    (where / "game.json").write_text(http.get(f"{API}/games/{game_id}/export").get_data(True))
    (where / "proof.json").write_text(http.get(f"{API}/log/games/{game_id}").get_data(True))
    (where / "heads.txt").write_text(head + "\n")
    log_key = http.get("/.well-known/hearts-log-key").get_data(as_text=True).strip()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = hv.main(
            [str(where / "game.json"), "--log-key", log_key]
            + ["--head", str(where / "heads.txt"), "--proof", str(where / "proof.json")]
        )
    return status, out.getvalue()


@ON_A_REAL_REDIS
@pytest.mark.unlimited(
    "ends a game of bots before each of its five crashes, six in seconds "
    "(the default lets an address create 3 a minute)"
)
def test_a_crash_at_any_step_loses_nothing_and_moves_each_game_once(
    hub: World, redis_server, tmp_path
):
    http = hub.app.test_client()
    games: dict[str, tuple] = {}
    heads: dict[str, str] = {}

    def end_a_game() -> None:
        game_id = hub.bot_game()
        hub.project()
        heads[game_id] = http.get(f"{API}/games/{game_id}").headers[HEAD_HEADER]
        games[game_id] = _seen(hub, game_id)

    end_a_game()
    for step in STEPS:
        end_a_game()  # another game ends between the crashes
        crashed = _archive_run(hub, redis_server, step)
        assert crashed.returncode == -9, crashed.stderr
        for game_id, before in games.items():  # found, in Redis or the archive or both
            assert hub.store.read(game_id) == before[0]
        time.sleep(0.6)  # the dead pass's leases (500 ms) run out
    finished = _archive_run(hub, redis_server, None)
    assert finished.returncode == 0, finished.stderr

    for game_id, before in games.items():
        assert not hub.store.redis.exists(hub.store.game_key(game_id))
        assert hub.archive.record_of(game_id) is not None
        assert _seen(hub, game_id) == before
        check = http.post(f"{API}/games/{game_id}/verify", json={"head": heads[game_id]})
        assert check.status_code == 200, check.get_json()
        status, report = _hearts_verify(hub, game_id, heads[game_id], tmp_path)
        assert status == 0 and "FAIL" not in report, report
        assert "ok   head" in report and "ok   log: the game is leaf" in report
    listed = hub.store.list_games(limit=100).game_ids
    assert sorted(listed) == sorted(games)  # each game once
    assert hub.archive.counts() == {
        "archived": len(games),
        "ended_hot": 0,
        "removed_log_entries": sum(len(before[0]) for before in games.values()),
    }
    # One object per game; beside them only the kept audit reports of these games.
    assert sorted(hub.archive.blobs.names("games/")) == sorted(
        hub.archive.blob_name(game_id) for game_id in games
    )
    kept = [name.split("/")[2] for name in hub.archive.blobs.names("audits/")]
    assert set(kept) <= set(games)
    assert hub.projections.as_of().lag == 0
