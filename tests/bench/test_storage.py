"""bench/storage.py keeps working: a tiny run plays, archives and restarts as the big one does.

Not a timing: what is checked is that every game moved, that the archive and Redis's figures are
there, and that the append-only file a restart loads is smaller with the games archived than
with them hot (the rewrite after archiving dropped their events).
"""

from __future__ import annotations

import json
import math

import pytest

from bench import storage


def test_a_tiny_run_archives_every_game_and_restarts(capsys: pytest.CaptureFixture[str]) -> None:
    storage.main(["--games", "3", "--first", "1", "--loads", "1", "--restarts", "1", "--json"])
    report = json.loads(capsys.readouterr().out)
    figures = report["figures"]
    assert report["benchmark"] == "storage"
    assert figures["games"] == 3 and figures["games archived"] == 3
    assert 0 < figures["archive, per game (max)"] <= 64
    hot = figures["restart, 1 archived + 2 hot: AOF bytes"]
    archived = figures["restart, 3 archived: AOF bytes"]
    assert archived < hot / 10, (archived, hot)
    for label in ("baseline (warm-up only)", "1 archived", "1 archived + 2 hot", "3 archived"):
        answered = figures[f"restart, {label}: answers after"]
        assert math.isfinite(answered) and answered > 0
    assert set(report["targets"]) == {
        "archive per game",
        "archived load",
        "Redis after 1,000 games",
        "restart with games archived",
    }
