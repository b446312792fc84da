"""Issue 18, item 10, on a 3+3 cluster: with HEARTS_MIN_REPLICAS=1 a move whose master cannot
reach its replica is answered 503 not-replicated, and so is every retry with the same
Idempotency-Key (the replay from the receipt waits for the replica too); the master is then
killed, and every move ever answered 2xx (first or replayed) is in the log after the failover."""

from __future__ import annotations

import os
import signal
import time

from service.api.factory import create_app
from service.settings import Settings
from service.store.redis_server import client_for
from tests.api.helpers import Hearts, auth, chosen_seed


def replica_of(cluster, master: int) -> int:
    node = cluster.node(master)
    try:
        return int(node.info("replication")["slave0"]["port"])
    finally:
        node.close()


def test_no_2xx_until_a_replica_has_the_events_even_when_replayed(
    cluster_with_replicas, key_prefix
):
    cluster = cluster_with_replicas
    client = client_for(cluster.url)
    settings = Settings(
        key_prefix=key_prefix, min_replicas=1, replica_timeout_ms=1500
    )  # a loaded machine
    app = create_app(settings, redis=client)
    store = app.extensions["hearts"].store
    hearts = Hearts(app.test_client())
    game_id, tokens = hearts.new_game(humans=1, seed=chosen_seed("replayed-durability"))
    token = tokens[0]
    acknowledged: list[dict] = []  # every event a 2xx reported

    def move(key: str):
        # Bots move in the background, after an answer: wait for this seat's turn.
        hearts.wait_for(game_id, lambda v: 0 in v["awaiting"], timeout=90)
        view = hearts.view(game_id, token, 0)
        endpoint, body = hearts.move(view)
        path = f"/api/v1/games/{game_id}/{endpoint}"
        return path, body, hearts.post(path, body, token, **{"Idempotency-Key": key})

    for i in range(4):
        _, _, response = move(f"before-{i}")
        assert response.status_code == 200, response.get_json()
        acknowledged += response.get_json()["events"]

    slot = client.keyslot(store.game_key(game_id))
    master = cluster.master_of_slot(slot)
    replica = replica_of(cluster, master)
    os.kill(cluster.nodes[replica].pid, signal.SIGSTOP)  # the replication link is cut
    try:
        path, body, first = move("cut-off")
        assert first.status_code == 503, first.get_json()
        assert first.get_json()["type"].endswith("/not-replicated")
        for _ in range(3):  # the README's advice: retry with the same key
            again = hearts.post(path, body, token, **{"Idempotency-Key": "cut-off"})
            assert again.status_code == 503, again.get_json()
            assert again.get_json()["type"].endswith("/not-replicated")
        cluster.nodes[master].kill()  # the master dies with the move on it alone
        cluster.nodes[master].wait()
    finally:
        os.kill(cluster.nodes[replica].pid, signal.SIGCONT)

    # The replica takes over; the old master comes back as its replica; retries go through.
    restarted = False
    deadline = time.monotonic() + 90
    status = None
    while time.monotonic() < deadline:
        try:
            if not restarted and cluster.master_of_slot(slot) != master:
                cluster.restart(master)
                restarted = True
        except RuntimeError:
            pass
        response = hearts.http.get(f"/api/v1/games/{game_id}", headers=auth(token))
        if response.status_code == 200:
            retried = hearts.post(path, body, token, **{"Idempotency-Key": "cut-off"})
            # 200: replayed (the move survived, with its receipt) or made again (both lost).
            status = retried.status_code
            if status == 200:
                break
            assert status == 503, retried.get_json()
        time.sleep(0.1)
    assert status == 200, status
    acknowledged += retried.get_json()["events"]
    cluster.wait_ok()
    for i in range(3):
        _, _, response = move(f"after-{i}")
        assert response.status_code == 200, response.get_json()
        acknowledged += response.get_json()["events"]

    log = {event.seq: event for event in store.read(game_id)}
    for event in acknowledged:
        stored = log.get(event["seq"])
        assert stored is not None, f"acknowledged event {event['seq']} is not in the log"
        assert (stored.type, stored.command_id) == (event["type"], event["command_id"])
    assert store.verify(game_id) == []
    client.close()
