"""The operator creates a tournament from the CLI with a schedule; the sweep starts it at its
time, or cancels it if too few players entered."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from service.api.factory import create_app
from service.cli import main
from service.settings import Settings
from service.store.redis_server import client_for
from tests.tournaments.helpers import API, auth, register


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


@pytest.mark.unlimited("registers 4 players")
def test_the_operator_schedules_a_tournament_and_the_sweep_starts_it(
    redis_server, key_prefix, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)
    soon = datetime.now(UTC) + timedelta(hours=1)
    args = ["tournaments", "create", "--name", "Nightly", "--rounds", "1", "--boards", "1"]
    args += ["--min-players", "4", "--max-players", "8", "--house-bot", "random"]
    assert main([*args, "--starts-at", _iso(soon)]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["status"] == "upcoming" and made["starts_at"] == _iso(soon)
    short = [*args[:3], "Short", *args[4:]]
    assert main([*short, "--starts-at", _iso(soon)]) == 0
    empty = json.loads(capsys.readouterr().out)
    assert main([*args, "--starts-at", "yesterday"]) == 2  # refused, nothing created

    redis = client_for(redis_server)
    app = create_app(Settings(key_prefix=key_prefix, bot_poll_seconds=0.05), redis=redis)
    try:
        client = app.test_client()
        listed = client.get(f"{API}/tournaments").get_json()
        assert {t["id"] for t in listed["tournaments"]} >= {made["id"], empty["id"]}
        for i in range(4):
            key = register(client, f"Night{i}")
            body = {"stand_in": "random"}
            answer = client.post(
                f"{API}/tournaments/{made['id']}/entries", json=body, headers=auth(key)
            )
            assert answer.status_code == 200
        service = app.extensions["hearts.tournaments"]
        assert service.start_due(_iso(soon - timedelta(minutes=1))) == []  # not yet
        assert sorted(service.start_due(_iso(soon))) == sorted([made["id"], empty["id"]])
        assert service.load(made["id"]).state.status.value == "running"
        assert service.load(empty["id"]).state.status.value == "cancelled"  # nobody came
        assert service.start_due(_iso(soon + timedelta(hours=1))) == []  # once
    finally:
        app.extensions["hearts.stop"]()
        redis.close()
