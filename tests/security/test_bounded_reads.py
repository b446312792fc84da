"""Issue 33, bounded reads: no request reads more than one page of a game's log in its worker.

A long game's reads once held a worker for seconds (``POST /verify`` 3.9-6.1 s, ``GET /events``
5.2 s, ``GET /state?at=`` 2.3 s). Now a request reads at most ``HEARTS_LOG_PAGE`` entries of a
log in its worker; what needs more (an events page far into the game, a hand's record, a state
at a late seq, a live stream's start far behind, a head's check) is a long-work job, run in a
child process of the worker (service/api/long_work.py), as audits and exports already were. A
live stream sends its backlog a page at a time (each page read once the last was sent).

The test plays a long game with a small page, in an app whose long work runs in child processes
(the default when the app reaches Redis by URL), counts the log entries each request reads in
the worker (the store's read methods, on the request's own thread: the bot runner and the other
background threads are not the request's), and asks every endpoint that reads a log.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask

from bench.randomplay import random_game
from domain.rules import RuleOptions
from service.api.factory import create_app
from service.api.long_work import offload_of
from service.app.game import new_event
from service.app.transparency import HEAD_HEADER
from service.offload import ProcessOffload
from service.settings import Settings
from service.store.event_store import RedisEventStore
from tests.api.helpers import auth

PAGE = 50  # entries: a hand is ~70 events, the game below 12 hands
GAMES = "/api/v1/games"
STREAM = {"Accept": "text/event-stream"}


class ReadCounter:
    """Counts the log entries the store's read methods return, per thread, while recording.
    A cached fold's check that it is current (``read_since``: the one entry at its version,
    then what follows) counts what follows; the checks themselves are counted apart."""

    METHODS = ("read", "read_since", "read_log", "verify", "follow", "follow_many")

    def __init__(self, store: RedisEventStore) -> None:
        self.thread: int | None = None
        self.read = 0
        self.checks = 0
        self.calls: list[tuple[str, int]] = []
        for name in self.METHODS:
            setattr(store, name, self._counting(name, getattr(store, name)))
        # An append that is not told its chain head reads it (service/store/append.py).
        appender = store._appender
        appender.hash_at = self._counting("hash_at", appender.hash_at)  # type: ignore[method-assign]

    def _counting(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            if threading.get_ident() == self.thread:
                n = _entries(name, result)
                self.read += n
                self.checks += name == "read_since"
                self.calls.append((name, n))
            return result

        return counted

    @contextmanager
    def request(self) -> Iterator[None]:
        self.thread, self.read, self.checks, self.calls = threading.get_ident(), 0, 0, []
        try:
            yield
        finally:
            self.thread = None


def _entries(name: str, result: Any) -> int:
    if name == "read_since":  # a cached fold's check: the events after its version
        return len(result[1])
    if name == "hash_at":
        return 1
    if name == "follow_many":
        return sum(len(events) for events in result.values())
    return len(result)


@pytest.fixture
def app(redis_server, key_prefix) -> Iterator[Flask]:
    settings = Settings(
        redis_url=redis_server,
        key_prefix=key_prefix,
        log_page=PAGE,
        long_work="process",
        bot_runner=False,
    )
    built = create_app(settings)
    assert isinstance(offload_of(built), ProcessOffload)  # long work in child processes
    yield built
    built.extensions["hearts.stop"]()
    offload_of(built).close()


def long_game(app: Flask, game_id: str, hands: int) -> int:
    """A finished game of ``hands`` hands (played at random in the domain), appended in one
    go; its version. The worker has its state cached, as after any earlier request of it."""
    rules = RuleOptions.from_dict({"score_limit": 500, "hand_limit": hands})
    log = random_game(game_id, rules, random.Random(33))
    service = app.extensions["hearts"]
    result = service.store.append(game_id, 0, [new_event(e) for e in log], "bounded-reads")
    assert service.snapshot(game_id).state.state.phase.value == "finished"
    return result.version


def test_no_request_reads_more_than_one_page_of_a_log_in_its_worker(app):
    game_id = "gbounded000000001"
    version = long_game(app, game_id, hands=10)
    assert version > 10 * PAGE  # a log of many pages
    counter = ReadCounter(app.extensions["hearts"].store)
    client = app.test_client()
    head = client.get(f"{GAMES}/{game_id}").headers[HEAD_HEADER]
    middle, late = version // 2, version - 5
    requests: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", f"{GAMES}/{game_id}", {}),
        ("GET", f"{GAMES}/{game_id}/events", {}),
        ("GET", f"{GAMES}/{game_id}/events?limit=1000", {}),
        ("GET", f"{GAMES}/{game_id}/events?after={middle}&limit=1000", {}),
        ("GET", f"{GAMES}/{game_id}/events?after={late}", {}),
        ("GET", f"{GAMES}/{game_id}/events?after={middle}", {"headers": STREAM}),
        ("GET", f"{GAMES}/{game_id}/events", {"headers": STREAM}),
        ("GET", f"{GAMES}/{game_id}/state?at=10", {}),
        ("GET", f"{GAMES}/{game_id}/state?at={late}", {}),
        ("GET", f"{GAMES}/{game_id}/hands/1", {}),
        ("GET", f"{GAMES}/{game_id}/hands/9?format=text", {}),
        ("GET", f"{GAMES}/{game_id}/audit", {}),
        ("GET", f"{GAMES}/{game_id}/export", {}),
        ("GET", f"{GAMES}/{game_id}/export?format=text", {}),
        ("POST", f"{GAMES}/{game_id}/verify", {"json": {"head": head}}),
        ("GET", f"{GAMES}/{game_id}/resume", {"headers": auth("not-a-token")}),
        ("GET", f"{GAMES}/{game_id}/scoreboard", {}),
        ("GET", f"{GAMES}/{game_id}/hands/3/analysis", {}),
        ("GET", f"{GAMES}?limit=50", {}),
    ]
    answers = {}
    for method, path, kwargs in requests:
        with counter.request():
            response = client.open(path, method=method, **kwargs)
            body = response.get_data()  # a stream is read to its end, in the request's thread
        answers[path, kwargs.get("headers", {}).get("Accept")] = (response.status_code, body)
        assert counter.checks <= 2, (method, path, counter.calls)  # one entry each
        if kwargs.get("headers") == STREAM:
            # A live stream sends its backlog a page at a time: each read a page at most, sent
            # before the next is read (the fold before ``after`` is a job's, in the child).
            assert max(n for _, n in counter.calls) <= PAGE, (path, counter.calls)
        else:
            assert counter.read <= PAGE, (method, path, counter.read, counter.calls)

    # The answers are whole: the jobs answered what the worker no longer reads itself.
    statuses = {path: status for (path, _), (status, _) in answers.items()}
    refused = {  # a bad token; a game the projector has not seen; an analysis not asked for
        f"{GAMES}/{game_id}/resume": 401,
        f"{GAMES}/{game_id}/scoreboard": 404,
        f"{GAMES}/{game_id}/hands/3/analysis": 404,
    }
    assert statuses == {path: refused.get(path, 200) for path in statuses}
    at_late = json.loads(answers[f"{GAMES}/{game_id}/state?at={late}", None][1])
    assert at_late["version"] == late and at_late["phase"] == "playing"
    assert answers[f"{GAMES}/{game_id}/audit", None][0] == 200
    assert answers[f"{GAMES}/{game_id}/verify", None][0] == 200
    status, body = answers[f"{GAMES}/{game_id}/events?after={middle}&limit=1000", None]
    assert status == 200 and b'"more":true' in body.replace(b" ", b"")
    status, body = answers[f"{GAMES}/{game_id}/events?after={middle}", "text/event-stream"]
    assert status == 200
    assert body.count(b'data: {"seq"') == version - middle and b"event: end" in body
    status, body = answers[f"{GAMES}/{game_id}/events", "text/event-stream"]
    assert body.count(b'data: {"seq"') == version and b"event: end" in body


def test_an_events_page_holds_at_most_a_page_and_pages_through_the_whole_log(app):
    game_id = "gbounded000000002"
    version = long_game(app, game_id, hands=4)
    client = app.test_client()
    seen, after = [], 0
    while True:
        body = client.get(f"{GAMES}/{game_id}/events?after={after}&limit=1000").get_json()
        assert len(body["events"]) <= PAGE and body["version"] == version
        seen += [e["seq"] for e in body["events"]]
        if not body["more"]:
            break
        after = body["next_after"]
    assert seen == list(range(1, version + 1))
    # The worker's own page and a job's answer alike: the same page, from anywhere in the log.
    inline = client.get(f"{GAMES}/{game_id}/events?after=10&limit=20").get_json()
    deep = client.get(f"{GAMES}/{game_id}/events?after={version - 20}&limit=20").get_json()
    assert [e["seq"] for e in inline["events"]] == list(range(11, 31))
    assert [e["seq"] for e in deep["events"]] == list(range(version - 19, version + 1))


def test_a_worker_that_has_not_cached_a_long_game_folds_it_in_its_child(app, redis_server):
    game_id = "gbounded000000003"
    version = long_game(app, game_id, hands=6)
    settings = app.extensions["hearts.settings"]
    cold = create_app(settings)  # another worker: nothing cached
    try:
        counter = ReadCounter(cold.extensions["hearts"].store)
        with counter.request():
            seen = cold.test_client().get(f"{GAMES}/{game_id}")
        assert seen.status_code == 200 and seen.get_json()["version"] == version
        assert counter.read <= PAGE, counter.calls
        # The same view the worker that folded it itself gives.
        assert seen.get_json() == app.test_client().get(f"{GAMES}/{game_id}").get_json()
        # Cached now: the next request checks one entry and reads nothing more.
        with counter.request():
            assert cold.test_client().get(f"{GAMES}/{game_id}").status_code == 200
        assert counter.read == 0 and counter.checks == 1
    finally:
        cold.extensions["hearts.stop"]()
        offload_of(cold).close()
