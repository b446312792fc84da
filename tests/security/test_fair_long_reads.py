"""Issue 42, long reads fair and stored.

The attack: ``GET /games/{id}/audit`` had no rate limit and no stored result, and queued without
bound on the one long-work slot of a worker: 20 audits in flight from one address made an
honest client's read of a hand of another long game wait 148 s instead of 0.6-4.3 s. Now the
audit of a game that cannot change any more is computed once and kept in the archive's blob
store (where the game's object goes too), the long-work queue of a worker is bounded (503
``long-work-busy`` with ``Retry-After``) with a cap per client of its jobs in flight, and
audits and exports have a rate limit per client address.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import fakeredis
import pytest
from flask import Flask

from service.api.factory import create_app
from service.api.long_work import gate_of
from service.app import replay
from service.settings import Settings
from tests.api.helpers import PROBLEM, Hearts, poll
from tests.archive.helpers import world
from tests.security.test_rate_limits import assert_limited, limited_app

GAMES = "/api/v1/games"
BOTS = [{"bot": "random"}] * 4


def counting_audits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every audit computed from a log, by game id."""
    computed: list[str] = []
    real = replay.audit_events

    def audit_events(stored: Any, game_id: str, *args: Any) -> Any:
        computed.append(game_id)
        return real(stored, game_id, *args)

    monkeypatch.setattr(replay, "audit_events", audit_events)
    return computed


def test_the_audit_of_an_ended_game_is_computed_once_and_kept_in_the_archive(
    monkeypatch, key_prefix, tmp_path
):
    computed = counting_audits(monkeypatch)
    hub = world(
        fakeredis.FakeRedis(server=fakeredis.FakeServer()),
        key_prefix,
        (tmp_path / "archive").as_uri(),
        bot_poll_seconds=0.05,
    )
    try:
        game_id = hub.bot_game(hand_limit=1)
        http = hub.app.test_client()
        answers = [http.get(f"{GAMES}/{game_id}/audit") for _ in range(3)]
        assert {a.status_code for a in answers} == {200}
        assert answers[0].get_json()["ok"]
        assert all(a.get_json() == answers[0].get_json() for a in answers)
        assert all(a.headers["ETag"] == answers[0].headers["ETag"] for a in answers)
        assert computed == [game_id]  # the later two read the kept report
        kept = list(hub.archive.blobs.names("audits/"))
        assert len(kept) == 1 and game_id in kept[0]

        # The game moves to the archive: its audit is still the kept one, not recomputed.
        hub.project()
        hub.archiver().run_once()
        assert hub.archive.record_of(game_id) is not None
        assert not hub.store.redis.exists(hub.store.game_key(game_id))
        after = http.get(f"{GAMES}/{game_id}/audit")
        assert after.status_code == 200 and after.get_json() == answers[0].get_json()
        assert computed == [game_id]
    finally:
        hub.app.extensions["hearts.stop"]()


def test_the_audit_of_a_game_in_play_is_not_kept(monkeypatch, key_prefix):
    computed = counting_audits(monkeypatch)
    app = create_app(
        Settings(key_prefix=key_prefix, bot_runner=False),
        redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()),
    )
    try:
        game_id = Hearts(app.test_client()).create([None, *BOTS[1:]])["id"]
        for _ in range(2):
            assert app.test_client().get(f"{GAMES}/{game_id}/audit").status_code == 200
        assert computed == [game_id, game_id]  # it may still change: computed each time
    finally:
        app.extensions["hearts.stop"]()


class Held:
    """Audits that wait until released: long work in flight, on demand."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.release = threading.Event()
        real = replay.Replay.audit

        def audit(this: Any, game_id: str) -> Any:
            assert self.release.wait(60), "never released"
            return real(this, game_id)

        monkeypatch.setattr(replay.Replay, "audit", audit)


def in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(call()), daemon=True)
    thread.start()
    return thread, out


def audit_from(app: Flask, game_id: str, address: str) -> Callable[[], Any]:
    return lambda: app.test_client().get(
        f"{GAMES}/{game_id}/audit", environ_base={"REMOTE_ADDR": address}
    )


def assert_busy(answer: Any) -> None:
    assert answer.status_code == 503 and answer.mimetype == PROBLEM
    assert answer.get_json()["code"] == "long-work-busy"
    assert int(answer.headers["Retry-After"]) >= 1


def test_a_worker_queues_long_work_fairly_and_within_bounds(monkeypatch, key_prefix):
    settings = Settings(
        key_prefix=key_prefix,
        bot_runner=False,
        long_requests_per_worker=1,
        long_work_queue=1,
        long_work_per_client=1,
    )
    app = create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    try:
        game_id = Hearts(app.test_client()).create([None, *BOTS[1:]])["id"]
        held = Held(monkeypatch)
        gate = gate_of(app)
        # The attacker's first audit runs (and waits); its second is refused at once: one job
        # in flight per client.
        first, first_out = in_thread(audit_from(app, game_id, "10.0.0.66"))
        poll(lambda: gate.in_flight(), lambda n: n == 1, timeout=10)
        assert_busy(audit_from(app, game_id, "10.0.0.66")())
        # An honest client queues behind it (one place in the queue) ...
        honest, honest_out = in_thread(audit_from(app, game_id, "10.0.0.7"))
        poll(lambda: gate.in_flight(), lambda n: n == 2, timeout=10)
        # ... and the queue is then full, for anyone.
        assert_busy(audit_from(app, game_id, "10.0.0.8")())
        held.release.set()
        for thread in (first, honest):
            thread.join(60)
        assert [o[0].status_code for o in (first_out, honest_out)] == [200, 200]
        assert gate.in_flight() == 0
        assert audit_from(app, game_id, "10.0.0.66")().status_code == 200
    finally:
        held.release.set()
        app.extensions["hearts.stop"]()


def test_audits_and_exports_are_limited_per_address(key_prefix):
    app = limited_app(key_prefix, rate_limit_long_reads="3/minute", bot_runner=False)
    hearts = Hearts(app.test_client())
    game_id = hearts.create([None, *BOTS[1:]])["id"]
    client = app.test_client()
    assert client.get(f"{GAMES}/{game_id}/audit").status_code == 200
    assert client.get(f"{GAMES}/{game_id}/audit").status_code == 200
    assert client.get(f"{GAMES}/{game_id}/export").status_code == 409  # in play: counted too
    assert_limited(client.get(f"{GAMES}/{game_id}/audit"))
    assert_limited(client.get(f"{GAMES}/{game_id}/export"))
    other = client.get(f"{GAMES}/{game_id}/audit", environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert other.status_code == 200
