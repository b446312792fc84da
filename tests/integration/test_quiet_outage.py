"""Issue 34: when Redis goes away (stopped, or the master that ran it killed), the background
loops of an app (the bot runner, the timekeeper, the seek sweep, the expiry sweep) say so in one
log line each per lost connection, with no traceback; any other failure keeps its traceback."""

from __future__ import annotations

import logging
import threading
import time

import pytest
import redis

from service.api.factory import create_app
from service.settings import Settings
from service.store.outage import Outage, unreachable
from tests.redis_helpers import start_redis_server, stop_redis_server

LOOPS = ("bots", "timekeeper", "seek sweep", "expiry sweep")


def test_losing_redis_is_one_line_per_loop_and_no_traceback(tmp_path, key_prefix, caplog):
    process, url = start_redis_server(tmp_path)
    # Only this app's loops: a bot runner an earlier test of the worker left behind says its own
    # lost Redis on the same loggers. Its threads were running before this app was made (a line
    # need not name the address: "Connection closed by server." when Redis goes mid-call).
    before = set(threading.enumerate())

    def ours(_record: logging.LogRecord) -> bool:
        return threading.current_thread() not in before

    caplog.handler.addFilter(ours)  # the handler outlives the test: removed below
    settings = Settings(
        key_prefix=key_prefix,
        sweep_on_start=True,
        bot_poll_seconds=0.05,
        timekeeper_interval=0.05,
        waiting_game_ttl=1,  # the expiry sweep looks every second
    )
    app = create_app(settings, redis=redis.Redis.from_url(url, socket_timeout=1))
    try:
        app.test_client().post("/api/v1/games", json={})  # Redis works: nothing to say
        caplog.clear()
        with caplog.at_level(logging.INFO):
            stop_redis_server(process)
            deadline = time.monotonic() + 30
            while not all(_said(caplog, loop) for loop in LOOPS):
                assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
                time.sleep(0.1)
            time.sleep(1.5)  # several more passes of every loop, all failing
    finally:
        app.extensions["hearts.stop"]()
        caplog.handler.removeFilter(ours)
    records = caplog.records
    assert [r.getMessage() for r in records if r.exc_info] == []
    for loop in LOOPS:
        assert len(_said(caplog, loop)) == 1, [r.getMessage() for r in records]
    assert all(r.levelno <= logging.WARNING for r in records)


def _said(caplog, loop: str) -> list[logging.LogRecord]:
    prefix = f"{loop}: Redis unreachable ("
    return [r for r in caplog.records if r.getMessage().startswith(prefix)]


def test_each_outage_is_said_once_and_a_bug_keeps_its_traceback(caplog):
    log = logging.getLogger("tests.outage")
    outage = Outage(log, "loop", advice="")
    lost = redis.ConnectionError("Connection refused")
    with caplog.at_level(logging.INFO, logger="tests.outage"):
        for _ in range(3):
            outage.failed(lost)
        outage.ok()
        outage.failed(lost)  # a new outage: said again
        try:
            raise KeyError("a bug")
        except KeyError as bug:
            outage.failed(bug)
    lines = [(r.levelname, r.getMessage(), bool(r.exc_info)) for r in caplog.records]
    assert lines == [
        ("WARNING", "loop: Redis unreachable (Connection refused)", False),
        ("WARNING", "loop: Redis reachable again after 0.0 s (3 failure(s) meanwhile)", False),
        ("WARNING", "loop: Redis unreachable (Connection refused)", False),
        ("ERROR", "loop failed", True),
    ]


def test_a_lost_redis_says_what_to_do():
    assert "check that Redis (REDIS_URL" in Outage(logging.getLogger("t"), "loop").advice


def test_a_long_outage_is_summarised_and_its_end_says_how_long(caplog):
    """Failures while a dependency stays gone make one line a period, not one each; its return
    says how long it was gone and how many calls failed meanwhile."""
    log = logging.getLogger("tests.outage")
    now = [100.0]
    outage = Outage(
        log,
        "requests",
        dependency="the archive store",
        advice="check the store",
        is_outage=lambda error: True,
        summary_seconds=60,
        clock=lambda: now[0],
    )
    lost = OSError("stalled")
    with caplog.at_level(logging.INFO, logger="tests.outage"):
        for _ in range(120):  # two minutes of a failure a second
            outage.failed(lost)
            now[0] += 1
        outage.ok()
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "requests: the archive store unreachable (stalled); check the store",
        "requests: the archive store still unreachable after 60 s "
        "(60 more failure(s) since the last line)",
        "requests: the archive store reachable again after 120.0 s (120 failure(s) meanwhile)",
    ]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (redis.ConnectionError("gone"), True),
        (redis.TimeoutError("slow"), True),
        (RuntimeError("wrapped"), False),
        (ValueError("a bug"), False),
    ],
)
def test_unreachable_reads_what_an_error_was_raised_from(error, expected):
    assert unreachable(error) is expected
    try:
        try:
            raise redis.ConnectionError("gone")
        except redis.ConnectionError as cause:
            raise RuntimeError("the store failed") from cause
    except RuntimeError as wrapped:
        assert unreachable(wrapped)


def test_the_live_readers_say_a_lost_redis_once_without_a_traceback(tmp_path, key_prefix, caplog):
    """A game's followers and a player's stream keep their readers through an outage: each
    reader says so once, in one line, however many times it retries."""
    from service.store.event_store import RedisEventStore
    from service.store.live import RETRY_SECONDS, LiveHub, PlayerHub

    process, url = start_redis_server(tmp_path)
    client = redis.Redis.from_url(url, socket_timeout=1)
    store = RedisEventStore(client, prefix=key_prefix)
    before = {t.ident for t in threading.enumerate()}
    games = LiveHub(store, block_ms=50)
    players = PlayerHub(client, lambda player: f"{key_prefix}:wake:{player}", block_ms=50)
    game, player = games.watch("g-outage", 0), players.watch("p-outage")
    # This test's readers: an earlier test's reader of the same partition, of another Redis
    # (gone or stalled), logs on the same logger, and its line need not name its server.
    ours = {t.ident for t in threading.enumerate()} - before
    try:
        with caplog.at_level(logging.INFO):
            stop_redis_server(process)
            time.sleep(3 * RETRY_SECONDS + 0.5)  # several retries of each reader, all failing
    finally:
        game.close()
        player.close()
    records = [r for r in caplog.records if r.thread in ours]
    said = [r.getMessage() for r in records if "live reader" in r.getMessage()]
    partition = store.partition_of("g-outage")
    assert sorted(m.split(":")[0] for m in said) == [
        f"live reader of partition {partition}",
        "live reader of players' streams",
    ], said
    assert [r.getMessage() for r in records if r.exc_info] == []


def test_requests_while_redis_is_down_are_two_lines_not_one_each(tmp_path, key_prefix, caplog):
    """The soak's finding: 61 ERROR lines in 10 s, one per failed request, and none when Redis
    came back. Now: one line when it went (with what to do), one when it is back (how long)."""
    from urllib.parse import urlparse

    from service.api import problems

    process, url = start_redis_server(tmp_path / "first")
    port = urlparse(url).port
    app = create_app(
        Settings(key_prefix=key_prefix), redis=redis.Redis.from_url(url, socket_timeout=1)
    )
    client = app.test_client()
    game_id = client.post("/api/v1/games", json={}).get_json()["id"]
    problems.REDIS_DOWN.down = False  # whatever an earlier test of this process left
    caplog.clear()
    try:
        with caplog.at_level(logging.INFO):
            stop_redis_server(process)
            failed = [client.get(f"/api/v1/games/{game_id}") for _ in range(40)]
            process, _ = start_redis_server(tmp_path / "again", port=port)
            deadline = time.monotonic() + 30
            while problems.REDIS_DOWN.down:  # the next request that answers notices (1/s)
                assert time.monotonic() < deadline, "Redis's return never noticed"
                assert client.get("/api/v1/games?limit=1").status_code == 200
                time.sleep(0.2)
    finally:
        app.extensions["hearts.stop"]()
        stop_redis_server(process)
    assert {r.status_code for r in failed} == {503}
    assert all(r.headers["Retry-After"] for r in failed)
    said = [r for r in caplog.records if r.name == "service.api.problems"]
    messages = [r.getMessage() for r in said]
    assert len(said) == 2, messages
    assert messages[0].startswith("requests: Redis unreachable (") and "REDIS_URL" in messages[0]
    assert messages[1].startswith("requests: Redis reachable again after ")
    assert "(40 failure(s) meanwhile)" in messages[1]
    assert not any(r.exc_info for r in caplog.records)
    assert all(r.levelno <= logging.WARNING for r in said)
