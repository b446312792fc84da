"""The CLI on a Redis Cluster: simulate --record, list and audit, rebuild the read models."""

from __future__ import annotations

import json

from service.app.replay import Replay
from service.cli import main as hearts
from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from service.store.redis_server import client_for


def test_simulate_record_then_audit_and_rebuild_on_a_cluster(
    redis_cluster, key_prefix, monkeypatch, capsys
):
    monkeypatch.setenv("REDIS_URL", redis_cluster.url)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)
    argv = ["simulate", "--games", "2", "--seats", "random,random,random,random"]
    argv += ["--rules", '{"score_limit": 10}', "--seed", "cluster", "--record", "--no-progress"]
    assert hearts(argv) == 0
    client = client_for(redis_cluster.url)
    store = RedisEventStore(client, prefix=key_prefix)
    listed, cursor = [], None
    while True:
        page = store.list_games(cursor, limit=3)  # pages across partitions on several masters
        listed += page.game_ids
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(listed) == len(set(listed)) == 8  # 2 games x 4 seat rotations
    for game_id in listed:
        assert Replay(store).audit(game_id).ok
    capsys.readouterr()
    assert hearts(["projections", "rebuild", "--no-progress"]) == 0
    rebuilt = json.loads(capsys.readouterr().out)
    projections = ProjectionStore(store)
    assert projections.current_generation() == rebuilt["generation"]
    assert projections.as_of().lag == 0
    assert all(projections.scoreboard(game_id) is not None for game_id in listed)
    client.close()
