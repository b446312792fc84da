"""Replay on a Redis Cluster: export a game, import it (most likely into another partition, so
another slot), audit both, and follow the copy's log from the store as a live stream does."""

from __future__ import annotations

import json

from domain.rules import RuleOptions
from service.app.replay import Replay
from service.store.event_store import RedisEventStore
from service.store.redis_server import client_for
from tests.replay.helpers import play_game
from tests.replay.test_export import views_at_every_seq


def test_export_import_audit_and_follow_on_a_cluster(redis_cluster, key_prefix):
    client = client_for(redis_cluster.url)
    store = RedisEventStore(client, prefix=key_prefix)
    play_game(store, "original", rules=RuleOptions(score_limit=15), seed="cluster")
    replay = Replay(store)
    document = json.loads(json.dumps(replay.export("original", finished_only=False)))
    assert replay.import_(document, "copy").body["version"] == store.version("original")
    assert replay.audit("original").ok and replay.audit("copy").ok
    assert views_at_every_seq(store, "copy") == views_at_every_seq(store, "original")
    followed = store.follow("copy", after=3, block_ms=100)
    assert [e.seq for e in followed] == list(range(4, store.version("copy") + 1))
    client.close()
