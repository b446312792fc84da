"""Issue 22, item 2 (Redis out of memory): a Redis that refuses writes (OOM under ``maxmemory``
with ``noeviction``, READONLY on a replica, MISCONF after a failed save) answers 503 problem
``unavailable`` with Retry-After, and leaves nothing half-written: no event, no partition-log
entry, no idempotency receipt, no games-index entry.

Each test starts its own throwaway redis-server and reconfigures only that one."""

from __future__ import annotations

import uuid

import pytest
import redis
import redis.exceptions as redis_errors

from service.api.factory import create_app
from service.settings import Settings
from service.store.append import IdempotencyRecord, writes_refused
from service.store.envelope import NewEvent
from service.store.errors import WritesRefused
from service.store.event_store import RedisEventStore
from tests.api.helpers import PROBLEM, Hearts
from tests.redis_helpers import free_port, start_redis_server, stop_redis_server


@pytest.fixture
def own_redis(tmp_path):
    # redis-server is required by the suite (README, .ci/run): no binary is a failure, not a skip.
    process, url = start_redis_server(tmp_path)
    client = redis.Redis.from_url(url)
    client.config_set("maxmemory-policy", "noeviction")
    yield client
    client.close()
    stop_redis_server(process)


@pytest.fixture
def hearts(own_redis):
    prefix = f"sec-{uuid.uuid4().hex[:8]}"
    app = create_app(Settings(key_prefix=prefix), redis=own_redis)
    return Hearts(app.test_client())


def snapshot(client: redis.Redis) -> dict[bytes, object]:
    """Every key of the throwaway server with its content, to compare before and after: but
    the rate limits' counters (``<prefix>:limits:...``), which count a request whatever its
    answer and are no part of any game."""
    out: dict[bytes, object] = {}
    for key in client.scan_iter(count=1000):
        if b":limits:" in key:
            continue
        kind = client.type(key)
        if kind == b"stream":
            out[key] = client.xrange(key)
        elif kind == b"string":
            out[key] = client.get(key)
        elif kind == b"zset":
            out[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == b"hash":
            out[key] = client.hgetall(key)
        else:
            out[key] = kind
    return out


def out_of_memory(client: redis.Redis) -> None:
    client.config_set("maxmemory", "1")  # any use is over it: every write is refused


def writable(client: redis.Redis) -> None:
    client.config_set("maxmemory", "0")
    client.execute_command("REPLICAOF", "NO", "ONE")


def assert_unavailable(response) -> None:
    assert response.status_code == 503, response.get_json()
    assert response.mimetype == PROBLEM
    body = response.get_json()
    assert body["code"] == "unavailable"
    assert body["type"].endswith("/unavailable")
    assert int(response.headers["Retry-After"]) >= 1


def refusals(client: redis.Redis) -> list:
    """Make the server refuse writes each way a Redis can: (name, refuse, undo)."""
    return [
        ("oom", lambda: out_of_memory(client)),
        ("readonly", lambda: client.execute_command("REPLICAOF", "127.0.0.1", str(free_port()))),
    ]


@pytest.mark.parametrize("how", ["oom", "readonly"])
def test_a_join_refused_by_redis_is_503_and_leaves_nothing(own_redis, hearts, how):
    game = hearts.create([None, None, {"bot": "random"}, {"bot": "random"}])
    hearts.join(game["id"], "ann")
    before = snapshot(own_redis)
    dict(refusals(own_redis))[how]()
    key = {"Idempotency-Key": uuid.uuid4().hex + "ab"}
    response = hearts.http.post(
        f"/api/v1/games/{game['id']}/seats", json={"name": "bob"}, headers=key
    )
    assert_unavailable(response)
    writable(own_redis)
    assert snapshot(own_redis) == before  # no event, log entry, receipt or index entry
    # Nothing was written, so the same request goes through once Redis takes writes again.
    again = hearts.http.post(f"/api/v1/games/{game['id']}/seats", json={"name": "bob"}, headers=key)
    assert again.status_code == 201, again.get_json()
    assert again.get_json()["seat"] == 1


@pytest.mark.parametrize("how", ["oom", "readonly"])
def test_creating_a_game_refused_by_redis_is_503_and_leaves_nothing(own_redis, hearts, how):
    hearts.create()  # the server works before
    before = snapshot(own_redis)
    dict(refusals(own_redis))[how]()
    response = hearts.http.post("/api/v1/games", json={}, headers={"Idempotency-Key": "c" * 32})
    assert_unavailable(response)
    writable(own_redis)
    assert snapshot(own_redis) == before


def test_a_command_refused_by_redis_is_503_and_the_game_is_unchanged(own_redis, hearts):
    game_id, tokens = hearts.new_game(humans=4)
    view = hearts.view(game_id, tokens[0], 0)
    endpoint, body = hearts.move(view)
    before = snapshot(own_redis)
    out_of_memory(own_redis)
    response = hearts.post(f"/api/v1/games/{game_id}/{endpoint}", body, tokens[0])
    assert_unavailable(response)
    writable(own_redis)
    assert snapshot(own_redis) == before
    assert hearts.view(game_id)["version"] == view["version"]


def test_the_store_refuses_as_one_exception_and_writes_no_receipt(own_redis):
    store = RedisEventStore(own_redis, prefix=f"st-{uuid.uuid4().hex[:8]}")
    event = NewEvent("Noted", 1, {"n": 1})
    store.append("g1", 0, [event], "c1")
    before = snapshot(own_redis)
    out_of_memory(own_redis)
    receipt = IdempotencyRecord("key-1", "fp", "{}", 60)
    with pytest.raises(WritesRefused) as refused:
        store.append("g1", 1, [event, event], "c2", idempotency=receipt)
    assert refused.value.reason == "oom"
    writable(own_redis)
    assert snapshot(own_redis) == before
    assert store.get_idempotent("g1", "key-1") is None
    assert store.version("g1") == 1


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (
            redis_errors.OutOfMemoryError("command not allowed when used memory > 'maxmemory'"),
            "oom",
        ),
        (redis_errors.ReadOnlyError("You can't write against a read only replica."), "readonly"),
        (
            redis_errors.ResponseError(
                "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
                "persist to disk."
            ),
            "misconf",
        ),
        (
            redis_errors.ResponseError(
                "ERR Error running script (call to f_1): @user_script:1: -MISCONF Errors writing"
            ),
            "misconf",
        ),
    ],
)
def test_every_kind_of_refusal_is_recognised(error, reason):
    refused = writes_refused(error)
    assert refused is not None and refused.reason == reason


def test_other_redis_errors_are_not_taken_for_refusals():
    assert writes_refused(redis_errors.ResponseError("WRONGTYPE Operation against a key")) is None


def test_a_misconf_refusal_is_503_unavailable(monkeypatch, own_redis, hearts):
    game = hearts.create([None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}])
    before = snapshot(own_redis)

    def refuse(*args, **kwargs):
        raise redis_errors.ResponseError("MISCONF Redis is configured to save RDB snapshots")

    store = hearts.http.application.extensions["hearts"].store
    monkeypatch.setattr(store._appender, "_script", refuse)
    response = hearts.http.post(f"/api/v1/games/{game['id']}/seats", json={"name": "ann"})
    assert_unavailable(response)
    assert snapshot(own_redis) == before
