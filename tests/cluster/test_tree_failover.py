"""The public log of games on a Redis Cluster (issue 21): the master holding the Merkle tree is
killed after a checkpoint was signed; once its replica took over, the tree still has that
checkpoint's root at its size (nothing a witness could have cosigned was lost), and the tree
grows from it (a consistency proof from the old checkpoint to the new one verifies: no fork)."""

from __future__ import annotations

import base64
import time

from hearts_client import merkle
from hearts_client.note import Checkpoint, Note

from service.api.factory import create_app
from service.settings import Settings
from service.store.redis_server import client_for
from tests.api.helpers import Hearts
from tests.transparency.test_api import finished_games, project


def checkpoint(client) -> Checkpoint:
    response = client.get("/api/v1/log/checkpoint")
    assert response.status_code == 200, response.get_data(as_text=True)
    return Checkpoint.parse(Note.parse(response.get_data(as_text=True)).text)


def test_a_killed_master_under_the_public_log_neither_forks_nor_loses_it(
    cluster_with_replicas, key_prefix
):
    cluster = cluster_with_replicas
    redis = client_for(cluster.url)
    app = create_app(Settings(key_prefix=key_prefix, min_replicas=1), redis=redis)
    try:
        http = app.test_client()
        hearts = Hearts(http)
        first = finished_games(hearts, 2)
        project(app)
        signed = checkpoint(http)  # signed only once a replica holds its leaves
        assert signed.size == len(first)

        tree = app.extensions["hearts.log"].tree
        slot = redis.keyslot(tree.leaves_key)
        doomed = cluster.master_of_slot(slot)
        cluster.nodes[doomed].kill()
        cluster.nodes[doomed].wait()
        deadline = time.monotonic() + 60
        while cluster.master_of_slot(slot) == doomed:
            assert time.monotonic() < deadline, "no replica took over the tree's slot"
            time.sleep(0.1)
        cluster.restart(doomed)  # back as a replica of its replacement
        cluster.wait_ok()

        # Nothing signed was lost: the same root at the signed size.
        deadline = time.monotonic() + 30
        while True:
            try:
                assert tree.root(signed.size) == signed.root
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                redis.nodes_manager.initialize()  # the client learns the new layout
                time.sleep(0.2)

        # The log grows from it: no fork between the old checkpoint and the new one.
        later = finished_games(hearts, 1)
        project(app)
        grown = checkpoint(http)
        assert grown.size == len(first) + len(later)
        proof = http.get(f"/api/v1/log/consistency?old={signed.size}&new={grown.size}")
        merkle.verify_consistency(
            signed.size,
            grown.size,
            signed.root,
            grown.root,
            [base64.b64decode(h) for h in proof.get_json()["proof"]],
        )
        for game_id in first + later:  # each game once, at its place
            assert tree.leaf(game_id) is not None
    finally:
        app.extensions["hearts.stop"]()
        redis.close()
