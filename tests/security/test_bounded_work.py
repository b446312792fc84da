"""Issue 22 item 9: a request never makes the server play a whole game of bots.

Bots play after the request that woke them was answered: ``POST /games`` with four bots answers
at once and a background runner (one per process, a lease per game in Redis) plays the game; a
human's command makes at most a small budget of bot moves itself; two processes sharing one Redis
never both drive a game; a runner killed mid-game is carried on by another process (the lease runs
out) or by the start-up sweep. Long reads (audit, import) pause between events so that the
worker's other requests get in (figures: bench/bounded_work.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import redis
from flask import Flask

from service.api import factory
from service.api.factory import create_app
from service.app.game_service import GameService
from service.settings import Settings
from tests import children
from tests.api.helpers import Hearts, is_bot_move, poll

ROOT = Path(__file__).resolve().parents[2]
BOTS = [{"bot": "random"}] * 4
SHORT = {"score_limit": 30}  # a few hands: the game ends quickly


@pytest.fixture(autouse=True)
def stop_runners(monkeypatch):
    """Every app a test builds stops its bot runner when the test ends (its Redis goes away)."""
    apps: list[Flask] = []

    def tracked(*args, **kwargs):
        app = factory.create_app(*args, **kwargs)
        apps.append(app)
        return app

    monkeypatch.setattr(sys.modules[__name__], "create_app", tracked)
    yield
    for app in apps:
        stop = app.extensions.get("hearts.bots_stop")
        if stop is not None:
            stop()


def service_of(app: Flask) -> GameService:
    return app.extensions["hearts"]


def finished(hearts: Hearts, game_id: str, timeout: float = 120.0) -> dict:
    return hearts.wait_for(game_id, lambda v: v["phase"] == "finished", timeout=timeout)


def audit_ok(hearts: Hearts, game_id: str) -> bool:
    return hearts.http.get(f"/api/v1/games/{game_id}/audit").get_json()["ok"]


def test_a_game_of_bots_is_created_at_once_and_played_in_the_background(redis_client, key_prefix):
    app = create_app(Settings(key_prefix=key_prefix), redis=redis_client)
    hearts = Hearts(app.test_client())
    created = hearts.create(BOTS, rules=SHORT)
    # The answer is the create's own append (the game and its first deal): no bot moved in it.
    early = service_of(app).store.read(created["id"], limit=created["version"])
    assert not any(is_bot_move(e.command_id) for e in early)
    # ... ending with the first deal and the next hand's seed committed (SeedCommitted).
    assert [e.type for e in early][-2:] == ["HandDealt", "SeedCommitted"]

    final = finished(hearts, created["id"])
    assert final["winners"] and audit_ok(hearts, created["id"])
    moves = [e for e in service_of(app).store.read(created["id"]) if is_bot_move(e.command_id)]
    assert moves and all(e.command_id.startswith("bots-") for e in moves)  # all in background


def test_a_humans_command_answers_within_its_budget_of_bot_moves(redis_client, key_prefix):
    # No pace for bots standing in for everyone (issue 42 paces them at a person's): the
    # request's own budget of moves is what this checks.
    settings = Settings(
        key_prefix=key_prefix, bot_moves_per_request=2, bot_request_ms=60_000, bot_away_pace=0
    )
    app = create_app(settings, redis=redis_client)
    hearts = Hearts(app.test_client())
    game_id, tokens = hearts.new_game(1, rules=SHORT)
    hearts.wait_for_humans(game_id, tokens)
    # The human hands the seat to a bot: four bots now, the rest of the game is theirs.
    answer = hearts.post(f"/api/v1/games/{game_id}/seats/0/bot", {"bot": "random"}, tokens[0])
    assert answer.status_code == 200
    body = answer.get_json()
    made = [  # the requests' bot moves (the runner's are "bots-<runner>-<turn>+bot<n>")
        e
        for e in service_of(app).store.read(game_id)
        if "+bot" in e.command_id and not e.command_id.startswith("bots-")
    ]
    assert body["view"]["phase"] != "finished"
    # Each request's own moves (one command id each): at most its budget.
    moves = {e.command_id for e in made}
    for cause in {m.split("+")[0] for m in moves}:
        assert len([m for m in moves if m.startswith(cause + "+")]) <= 2
    assert finished(hearts, game_id)["winners"]


def test_the_time_budget_bounds_the_bot_moves_of_a_request(redis_client, key_prefix):
    # No move is begun once the budget is spent: with none, the request makes none.
    settings = Settings(key_prefix=key_prefix, bot_moves_per_request=1000, bot_request_ms=0)
    app = create_app(settings, redis=redis_client)
    hearts = Hearts(app.test_client())
    game = hearts.create([None] + [{"bot": "montecarlo"}] * 3, rules=SHORT)
    joined = hearts.post(f"/api/v1/games/{game['id']}/seats", {"name": "ann"}).get_json()
    assert not any(s["has_passed"] for s in joined["view"]["seats"])
    assert hearts.wait_for(game["id"], lambda v: v["awaiting"] == [0])


@pytest.mark.unlimited(
    "six games of bots at once for two processes to share (the default lets an address "
    "create 3 a minute)"
)
def test_two_processes_sharing_redis_drive_each_game_once(redis_server, key_prefix):
    settings = Settings(key_prefix=key_prefix, bot_poll_seconds=0.05)
    apps = [create_app(settings, redis=redis.Redis.from_url(redis_server)) for _ in range(2)]
    clients = [Hearts(app.test_client()) for app in apps]
    games = [clients[i % 2].create(BOTS, rules=SHORT)["id"] for i in range(6)]
    for game_id in games:
        assert finished(clients[0], game_id)["winners"]
        assert audit_ok(clients[1], game_id)
    runners = [service_of(app).background.runner for app in apps]
    moves = sum(  # one command id per move (a move may append several events)
        len({e.command_id for e in service_of(apps[0]).store.read(g) if is_bot_move(e.command_id)})
        for g in games
    )
    # Every move was made once, by the one runner holding the game: nobody lost a race.
    assert sum(r.moves_made for r in runners) == moves
    assert sum(r.conflicts_met for r in runners) == 0


KILLABLE = textwrap.dedent(
    """
    import sys, time, redis
    from service.api.factory import create_app
    from service.settings import Settings
    url, prefix = sys.argv[1], sys.argv[2]
    settings = Settings(key_prefix=prefix, bot_lease_seconds=1.0)
    app = create_app(settings, redis=redis.Redis.from_url(url))
    # Long enough to be killed mid-game on a loaded machine (some 500 moves after the kill at
    # version 40), bounded by hands: a game to 200 points was 25 hands for the next runner.
    body = {"seats": [{"bot": "random"}] * 4, "rules": {"score_limit": 200, "hand_limit": 8}}
    created = app.test_client().post("/api/v1/games", json=body).get_json()
    print(created["id"], flush=True)
    time.sleep(600)  # the runner's thread plays until this process is killed
    """
)


def _kill_a_runner_mid_game(redis_server: str, key_prefix: str) -> tuple[str, int]:
    """A process whose runner plays a long game of bots, SIGKILLed mid-game: (game, version)."""
    # The watcher is built first: built after the game's creation, on a loaded machine, the
    # runner had played the whole game before it could look.
    watcher = Hearts(
        create_app(
            Settings(key_prefix=key_prefix, bot_runner=False),
            redis=redis.Redis.from_url(redis_server),
        ).test_client()
    )
    service = service_of(watcher.http.application)
    process = children.start(
        [sys.executable, "-c", KILLABLE, redis_server, key_prefix],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        game_id = process.stdout.readline().strip()
        assert game_id, "the process did not create its game"
        poll(lambda: service.store.version(game_id), lambda v: v > 40, timeout=120)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
    version = service.store.version(game_id)
    assert watcher.view(game_id)["phase"] != "finished", "the game ended before the kill"
    return game_id, version


def _runners_of(app: Flask, game_id: str) -> set[str]:
    return {
        e.command_id.split("-")[1]
        for e in service_of(app).store.read(game_id)
        if e.command_id.startswith("bots-")
    }


def test_a_killed_runners_game_is_taken_up_when_its_lease_runs_out(redis_server, key_prefix):
    game_id, _ = _kill_a_runner_mid_game(redis_server, key_prefix)
    settings = Settings(key_prefix=key_prefix, bot_lease_seconds=1.0, bot_poll_seconds=0.1)
    app = create_app(settings, redis=redis.Redis.from_url(redis_server))
    hearts = Hearts(app.test_client())
    assert finished(hearts, game_id)["winners"] and audit_ok(hearts, game_id)
    assert len(_runners_of(app, game_id)) == 2  # the killed one's moves, then this one's


def test_a_killed_runners_game_lost_from_the_queue_is_carried_on_by_the_sweep(
    redis_server, key_prefix
):
    game_id, version = _kill_a_runner_mid_game(redis_server, key_prefix)
    client = redis.Redis.from_url(redis_server)
    client.delete(f"{key_prefix}:bots:due")  # the hand-over lost too: only the sweep knows
    settings = Settings(key_prefix=key_prefix, sweep_on_start=True, bot_poll_seconds=0.1)
    app = create_app(settings, redis=client)
    try:
        store = service_of(app).store
        poll(lambda: store.version(game_id), lambda v: v > version, timeout=60)
        hearts = Hearts(app.test_client())
        assert finished(hearts, game_id)["winners"] and audit_ok(hearts, game_id)
    finally:
        app.extensions["hearts.stop"]()  # its background threads, before the server goes
