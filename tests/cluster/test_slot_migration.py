"""Rebalancing a live cluster: one partition's slot migrates to another master while games are
played on it; no event is lost or duplicated, and every game audits clean afterwards."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable

import pytest

from service.api.factory import create_app
from service.settings import Settings
from service.store.redis_server import client_for
from tests.api.helpers import Hearts, auth, chosen_seed
from tests.redis_helpers import RedisServerMissing, start_redis_cluster


@pytest.fixture
def cluster(tmp_path):
    try:
        cluster = start_redis_cluster(tmp_path, masters=3)
    except RedisServerMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    yield cluster
    cluster.stop()


def _node_id(node) -> str:
    return node.execute_command("CLUSTER", "MYID").decode()


def _migrate_slot(
    cluster,
    slot: int,
    source_port: int,
    target_port: int,
    moved: list,
    migrating: Callable[[], None],
    between: Callable[[], None],
) -> None:
    """The documented resharding steps (IMPORTING, MIGRATING, MIGRATE in batches, SETSLOT
    NODE everywhere), as redis-cli --cluster reshard does them; ``migrating`` runs once the slot
    is migrating, ``between`` after each key moved."""
    source, target = cluster.node(source_port), cluster.node(target_port)
    source_id, target_id = _node_id(source), _node_id(target)
    target.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    source.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    migrating()
    while True:
        keys = source.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1)
        if not keys:
            break
        source.execute_command("MIGRATE", "127.0.0.1", target_port, "", 0, 5000, "KEYS", *keys)
        moved += keys
        between()
    for port in cluster.nodes:
        node = cluster.node(port)
        node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
        node.close()
    source.close()
    target.close()


@pytest.mark.unlimited(
    "creates games as fast as it can until four share a partition, some 20 in a second (the "
    "default lets an address create 10 a second)"
)
def test_a_partition_slot_migrates_while_games_are_played_and_nothing_is_lost(cluster):
    client = client_for(cluster.url)
    app = create_app(Settings(key_prefix="mig"), redis=client)
    store = app.extensions["hearts"].store
    hearts = Hearts(app.test_client())
    # Games until four share one partition: those are played while its slot migrates.
    by_partition: dict[int, dict] = collections.defaultdict(dict)
    while max(len(g) for g in [*by_partition.values(), {}]) < 4:
        game_id, tokens = hearts.new_game(humans=1, seed=chosen_seed(f"mig-{len(by_partition)}"))
        by_partition[store.partition_of(game_id)][game_id] = tokens
    partition = max(by_partition, key=lambda p: len(by_partition[p]))
    games = by_partition[partition]
    slot = client.keyslot(store.log_key(partition))
    source = cluster.master_of_slot(slot)
    target = next(port for port in list(cluster.nodes)[: cluster.masters] if port != source)

    stop = threading.Event()
    statuses: collections.Counter = collections.Counter()
    failures: list = []

    def play() -> None:
        player = Hearts(app.test_client())
        while not stop.is_set():
            for game_id, tokens in games.items():
                view = player.http.get(f"/api/v1/games/{game_id}", headers=auth(tokens[0]))
                if view.status_code != 200:
                    statuses[view.status_code] += 1
                    continue
                if view.get_json()["phase"] == "finished" or 0 not in view.get_json()["awaiting"]:
                    continue
                endpoint, body = player.move(view.get_json())
                answer = player.post(f"/api/v1/games/{game_id}/{endpoint}", body, tokens[0])
                statuses[answer.status_code] += 1
                if answer.status_code not in (200, 503):
                    failures.append(answer.get_json())

    thread = threading.Thread(target=play)
    thread.start()
    moved: list = []
    try:
        while statuses[200] < 20:  # games are being played before the migration starts
            threading.Event().wait(0.01)
        before = sum(statuses.values())

        def a_move_is_answered() -> None:
            # The slot is migrating: a move is tried and answered (a 503 while an append would
            # create a key in the slot, which Redis refuses until the slot has moved). Waited
            # for, not left to a pause: on a busy machine one move can take longer than moving
            # the whole slot, and then none was tried mid-migration (seen under pytest-xdist).
            deadline = time.monotonic() + 10
            while sum(statuses.values()) == before and time.monotonic() < deadline:
                threading.Event().wait(0.01)

        def a_pause() -> None:  # one key at a time, so moves are tried with the keys split
            threading.Event().wait(0.1)

        _migrate_slot(cluster, slot, source, target, moved, a_move_is_answered, a_pause)
        tried = sum(statuses.values())
        played = statuses[200]
        while statuses[200] < played + 20:  # and carry on after it
            threading.Event().wait(0.01)
    finally:
        stop.set()
        thread.join(30)
    assert not failures, failures
    assert moved, "the partition's slot held no keys to migrate"
    assert cluster.master_of_slot(slot) == target
    assert tried > before, "no move was tried while the slot was migrating"

    # Every game's stream and the partition logs agree: each event once, in order.
    in_logs = collections.Counter()
    for p in range(store.partitions):
        for entry in store.read_log(p, count=100_000):
            in_logs[(entry.game_id, entry.seq)] += 1
    for game_id in games:
        events = store.read(game_id)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert all(in_logs[(game_id, e.seq)] == 1 for e in events)
        assert store.verify(game_id) == []
        report = hearts.http.get(f"/api/v1/games/{game_id}/audit").get_json()
        assert report["ok"], report
    every_game = [g for group in by_partition.values() for g in group]
    assert sum(in_logs.values()) == sum(len(store.read(g)) for g in every_game)
    assert all(count == 1 for count in in_logs.values())
    client.close()
