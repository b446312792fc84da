"""An archive store that is gone costs a quick 503, never a 500, a hung request or a log line
per request (issue 43): the S3 server behind a proxy that refuses connections, stalls, and
comes back (tests/faulty_proxy.py)."""

from __future__ import annotations

import logging
import time
from urllib.parse import urlencode

import pytest

from service.store.blob_guard import Circuit, GuardedBlobStore, StoreUnavailable
from service.store.blobs import BlobConflict, MemoryBlobStore
from service.store.redis_server import client_for
from tests.archive.helpers import world
from tests.faulty_proxy import FaultyProxy

API = "/api/v1"
# Short timeouts, so a stall costs the test seconds: the longest a call may wait is
# attempts x (connect + read) = 2 x (1 + 1) s, plus botocore's back-off (under a second).
TIMEOUTS = {"connect_timeout": "1", "read_timeout": "1", "attempts": "2"}
LONGEST_CALL = 2 * (1 + 1) + 1.0


@pytest.fixture
def outage_world(s3_server, redis_server, key_prefix):
    proxy = FaultyProxy(s3_server.endpoint)
    query = urlencode({"endpoint": proxy.endpoint, "region": "us-east-1", **TIMEOUTS})
    url = f"s3://{s3_server.bucket}/{key_prefix}?{query}"
    client = client_for(redis_server)
    built = world(client, key_prefix, url)
    yield built, proxy
    built.app.extensions["hearts.stop"]()
    proxy.close()
    client.close()


def _read_archived(built, game_id: str):
    """A read of the game from the archive (nothing of it left in any cache)."""
    built.archive._cache.clear()
    built.app.extensions["hearts"].cache.forget(game_id)
    started = time.monotonic()
    answer = built.app.test_client().get(f"{API}/games/{game_id}")
    return answer, time.monotonic() - started


@pytest.mark.parametrize("fault", ["refuse", "stall"])
def test_an_unreachable_store_answers_503_with_retry_after_then_recovers(
    outage_world, fault, caplog
):
    built, proxy = outage_world
    game_id = built.bot_game()
    built.project()
    assert built.archiver().run_once().archived == [game_id]
    blobs = built.archive.blobs
    assert isinstance(blobs, GuardedBlobStore)
    now = [1000.0]
    blobs.circuit = Circuit(failures=3, open_seconds=15, clock=lambda: now[0])
    healthy, _ = _read_archived(built, game_id)
    assert healthy.status_code == 200

    proxy.switch(fault)
    with caplog.at_level(logging.INFO):
        answers = [_read_archived(built, game_id) for _ in range(6)]
        ready = built.app.test_client().get("/readyz")
        proxy.switch("forward")
        still_open, _ = _read_archived(built, game_id)  # the circuit is still open
        now[0] += 16  # past the open circuit's time: one trial call, which works
        back, _ = _read_archived(built, game_id)

    for answer, seconds in answers:
        assert answer.status_code == 503, answer.get_json()
        assert answer.get_json()["type"] == "/problems/unavailable"
        assert 1 <= int(answer.headers["Retry-After"]) <= 15
        assert seconds < LONGEST_CALL, f"a read waited {seconds:.1f} s on a {fault} store"
    # The first three reached the store and failed; the circuit then opened: the rest cost
    # nothing (a stalled store is not waited on again).
    assert all(seconds < 0.5 for _, seconds in answers[3:])
    assert ready.status_code == 200
    assert ready.get_json()["status"] == "degraded"
    assert ready.get_json()["archive"]["status"] == "down"
    assert still_open.status_code == 503
    assert back.status_code == 200 and back.get_json() == healthy.get_json()
    assert built.app.test_client().get("/readyz").get_json()["archive"]["status"] == "ok"
    metrics = built.app.test_client().get("/metrics").get_data(as_text=True)
    assert "hearts_archive_store_up 1.0" in metrics
    assert _sample(metrics, 'hearts_archive_store_errors_total{op="get"}') >= 3
    assert _sample(metrics, 'hearts_archive_store_refused_total{op="get"}') >= 3
    assert _sample(metrics, 'hearts_archive_store_seconds_count{op="get"}') >= 5

    # No traceback, no 500, one line when the store went and one when it was back.
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []
    store_lines = [r.getMessage() for r in caplog.records if "archive store" in r.getMessage()]
    assert len(store_lines) == 2, store_lines
    assert store_lines[0].startswith("archive: the archive store s3://")
    assert "unreachable (" in store_lines[0] and "HEARTS_ARCHIVE_URL" in store_lines[0]
    assert "reachable again after" in store_lines[1]


def _sample(metrics: str, name: str) -> float:
    """The value of one sample of the /metrics text."""
    return next(
        float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines() if line.startswith(name)
    )


def test_the_archiver_waits_out_a_refusing_store_and_moves_the_game_when_it_is_back(
    outage_world, caplog
):
    built, proxy = outage_world
    game_id = built.bot_game()
    built.project()
    archiver = built.archiver()
    proxy.switch("refuse")
    with pytest.raises(StoreUnavailable):
        archiver.run_once()
    assert built.archive.record_of(game_id) is None  # still hot: nothing half-done
    assert built.store.redis.exists(built.store.game_key(game_id))
    proxy.switch("forward")
    built.archive.blobs.circuit = Circuit()  # not waiting out the open circuit here
    assert archiver.run_once().archived == [game_id]


class _Flaky:
    """A store whose calls fail while ``down``."""

    def __init__(self) -> None:
        self.inner = MemoryBlobStore()
        self.url = "memory:"
        self.down = False
        self.calls = 0

    def __getattr__(self, name):
        method = getattr(self.inner, name)

        def call(*args):
            self.calls += 1
            if self.down:
                raise OSError("the store is gone")
            return method(*args)

        return call


def test_the_circuit_opens_after_failures_in_a_row_lets_one_trial_through_and_closes():
    now = [0.0]
    flaky = _Flaky()
    store = GuardedBlobStore(
        flaky, circuit=Circuit(failures=3, open_seconds=10, clock=lambda: now[0])
    )
    store.put("a", b"1")
    flaky.down = True
    for _ in range(3):
        with pytest.raises(StoreUnavailable):
            store.get("a")
    calls = flaky.calls
    with pytest.raises(StoreUnavailable) as refused:
        store.get("a")
    assert flaky.calls == calls  # open: not tried
    assert refused.value.retry_after == 10
    now[0] = 10.5
    with pytest.raises(StoreUnavailable):  # the trial call fails: open again
        store.get("a")
    assert flaky.calls == calls + 1
    assert store.circuit.state == "open"
    flaky.down = False
    now[0] = 21
    assert store.get("a") == b"1"  # the trial works: closed
    assert store.circuit.state == "closed" and store.status()["status"] == "ok"


def test_answers_are_not_failures():
    """A conflict or a bad name is the store answering: it never opens the circuit."""
    store = GuardedBlobStore(MemoryBlobStore(), circuit=Circuit(failures=1))
    store.put("a", b"1")
    with pytest.raises(BlobConflict):
        store.put("a", b"2")
    with pytest.raises(ValueError):
        store.get("../up")
    assert store.get("missing") is None
    assert store.circuit.state == "closed"


def test_a_half_open_circuit_lets_one_call_through_at_a_time():
    now = [0.0]
    circuit = Circuit(failures=1, open_seconds=5, clock=lambda: now[0])
    assert circuit.failed()  # opens
    assert not circuit.allow()
    now[0] = 6
    assert circuit.allow()  # the trial
    assert not circuit.allow()  # another, while the trial is under way
    assert circuit.succeeded()
    assert circuit.allow()


def test_a_bug_below_the_guard_is_not_an_outage():
    """Only a store that cannot be reached is StoreUnavailable: any other exception is a bug,
    raised as it is (the API logs its traceback), and never opens the circuit."""
    flaky = _Flaky()
    store = GuardedBlobStore(flaky, circuit=Circuit(failures=1))
    flaky.inner.get = lambda name: {}["a bug"]
    with pytest.raises(KeyError):
        store.get("a")
    assert store.circuit.state == "closed" and not store.outage.down
