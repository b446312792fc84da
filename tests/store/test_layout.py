"""The partition count is recorded with the data, and a process with another count refuses to
start: the store, the app (create_app) and every CLI command (service/store/layout.py)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from domain import RuleOptions
from service.api.factory import create_app
from service.cli import main
from service.settings import Settings
from service.store.event_store import RedisEventStore
from service.store.layout import (
    LayoutMismatch,
    check_layout,
    layout_key,
    recorded_partitions,
)
from tests import children
from tests.projections.games import append_all, play_game
from tests.redis_helpers import free_port, start_redis_server, stop_redis_server


def _games(store: RedisEventStore, count: int) -> None:
    """Games appended through the store (hands enough to list them), as any process writes."""
    rng = random.Random(7)
    plans = [
        play_game(f"layout-{i}", RuleOptions(score_limit=100), rng, max_hands=1)
        for i in range(count)
    ]
    append_all(store, plans, rng)


def test_the_first_use_records_the_count_and_the_same_count_passes(redis_client, key_prefix):
    store = RedisEventStore(redis_client, prefix=key_prefix, partitions=16)
    assert recorded_partitions(redis_client, key_prefix) is None
    assert check_layout(store) == 16
    assert recorded_partitions(redis_client, key_prefix) == 16
    assert check_layout(RedisEventStore(redis_client, prefix=key_prefix)) == 16


def test_another_count_is_refused_naming_both(redis_client, key_prefix):
    check_layout(RedisEventStore(redis_client, prefix=key_prefix, partitions=16))
    with pytest.raises(LayoutMismatch) as raised:
        check_layout(RedisEventStore(redis_client, prefix=key_prefix, partitions=32))
    message = str(raised.value)
    assert "HEARTS_PARTITIONS is 32" in message and "written with 16 partitions" in message
    assert (raised.value.configured, raised.value.recorded) == (32, 16)
    assert recorded_partitions(redis_client, key_prefix) == 16  # nothing changed


def test_another_prefix_is_another_layout(redis_client, key_prefix):
    check_layout(RedisEventStore(redis_client, prefix=key_prefix, partitions=16))
    assert check_layout(RedisEventStore(redis_client, prefix=f"{key_prefix}-b", partitions=8)) == 8


@pytest.mark.parametrize("redis_client", ["fake", "real"], indirect=True)
@pytest.mark.parametrize(("written", "configured"), [(16, 8), (16, 32), (4, 16)])
def test_data_from_before_the_layout_key_is_checked_by_its_games(
    redis_client, key_prefix, written, configured
):
    # Eight games are enough, and always the same eight (their ids are fixed): under each
    # (written, configured) pair four to six of them are misplaced, and the highest partition
    # they sit in names the count written (14 of 16, 3 of 4). Forty took five times as long.
    _games(RedisEventStore(redis_client, prefix=key_prefix, partitions=written), 8)
    redis_client.delete(layout_key(key_prefix))
    with pytest.raises(LayoutMismatch) as raised:
        check_layout(RedisEventStore(redis_client, prefix=key_prefix, partitions=configured))
    assert raised.value.recorded == written, str(raised.value)
    assert f"HEARTS_PARTITIONS is {configured}" in str(raised.value)
    assert recorded_partitions(redis_client, key_prefix) is None  # refused: nothing recorded
    # The count they were written with passes, and is recorded from then on.
    assert check_layout(RedisEventStore(redis_client, prefix=key_prefix, partitions=written))
    assert recorded_partitions(redis_client, key_prefix) == written


def test_an_app_with_another_count_does_not_start(redis_client, key_prefix):
    create_app(Settings(key_prefix=key_prefix, partitions=16), redis=redis_client)
    with pytest.raises(LayoutMismatch, match="HEARTS_PARTITIONS is 8"):
        create_app(Settings(key_prefix=key_prefix, partitions=8), redis=redis_client)


def test_an_app_started_before_redis_checks_at_its_first_request(tmp_path, key_prefix):
    port = free_port()
    client = redis.Redis(port=port, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    app = create_app(Settings(key_prefix=key_prefix, partitions=8), redis=client)
    web = app.test_client()
    assert web.get("/healthz").status_code == 503  # started: Redis is down, and it says so
    process, url = start_redis_server(tmp_path, port=port)
    try:
        writer = redis.Redis.from_url(url)
        check_layout(RedisEventStore(writer, prefix=key_prefix, partitions=16))
        writer.close()
        for _ in range(2):  # refused for as long as the process runs with the wrong count
            answer = web.get("/api/v1/games")
            assert answer.status_code == 503, answer.get_data(as_text=True)
            problem = answer.get_json()
            assert problem["type"] == "/problems/unavailable"
            assert "HEARTS_PARTITIONS is 8" in problem["detail"]
            assert "written with 16 partitions" in problem["detail"]
    finally:
        client.close()
        stop_redis_server(process)


def test_a_cli_command_with_another_count_exits_2_naming_both(
    redis_server, key_prefix, monkeypatch, capsys
):
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)
    assert main(["archive", "status"]) == 0  # the first use records 16 (the default)
    capsys.readouterr()
    monkeypatch.setenv("HEARTS_PARTITIONS", "12")
    with pytest.raises(SystemExit) as exited:
        main(["archive", "status"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "HEARTS_PARTITIONS is 12" in err and "written with 16 partitions" in err
    assert "Traceback" not in err


def test_a_projector_started_before_redis_stops_once_it_sees_another_count(tmp_path, key_prefix):
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    # Data written with 16 partitions, on a server then stopped (its append-only file kept).
    process, _ = start_redis_server(tmp_path, appendonly=True, port=port)
    writer = redis.Redis.from_url(url)
    check_layout(RedisEventStore(writer, prefix=key_prefix, partitions=16))
    writer.close()
    stop_redis_server(process)
    env = {**os.environ, "REDIS_URL": url, "HEARTS_KEY_PREFIX": key_prefix}
    env["HEARTS_PARTITIONS"] = "8"
    projector = children.start(
        [sys.executable, "-m", "service.cli", "project", "--block-ms", "100"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # the projector waits for Redis (or, on a slow machine, is still starting)
    process, _ = start_redis_server(tmp_path, appendonly=True, port=port)
    try:
        # Whether it met Redis down or up, the projector ends and says why.
        _, err = projector.communicate(timeout=120)
    finally:
        if projector.poll() is None:
            projector.kill()
            projector.wait()
        stop_redis_server(process)
    assert "HEARTS_PARTITIONS is 8" in err and "written with 16 partitions" in err, err
