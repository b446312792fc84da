"""A Redis Cluster master killed mid-game: 503 problems while its slot fails over, then the game
carries on, and (with HEARTS_MIN_REPLICAS=1) no acknowledged move is lost."""

from __future__ import annotations

import time

from service.api.factory import create_app
from service.settings import Settings
from service.store.redis_server import client_for
from tests.api.helpers import Hearts, auth, chosen_seed


def test_a_killed_master_answers_503_then_the_game_carries_on_losing_nothing_acknowledged(
    cluster_with_replicas, key_prefix
):
    cluster = cluster_with_replicas
    client = client_for(cluster.url)
    app = create_app(Settings(key_prefix=key_prefix, min_replicas=1), redis=client)
    store = app.extensions["hearts"].store
    hearts = Hearts(app.test_client())
    game_id, tokens = hearts.new_game(humans=1, seed=chosen_seed("failover"))
    token = tokens[0]
    for _ in range(6):
        hearts.act(game_id, 0, token)
    hearts.wait_for_humans(game_id, tokens)  # the bots' moves after the last one
    acknowledged = hearts.view(game_id)["version"]
    before = store.read(game_id)

    slot = client.keyslot(store.game_key(game_id))
    doomed = cluster.master_of_slot(slot)
    cluster.nodes[doomed].kill()
    cluster.nodes[doomed].wait()

    # Until a replica is promoted, every answer is a 503 problem (unavailable); then, as the
    # promoted replica has no replica of its own, not-replicated until the killed node is back
    # (as its replica); then the move goes through.
    answers = []
    restarted = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        response = hearts.http.get(f"/api/v1/games/{game_id}", headers=auth(token))
        if response.status_code == 200 and 0 not in response.get_json()["awaiting"]:
            time.sleep(0.05)  # the bots move first, in the background, once Redis takes writes
            continue
        if response.status_code == 200:
            endpoint, body = hearts.move(response.get_json())
            response = hearts.post(
                f"/api/v1/games/{game_id}/{endpoint}",
                body,
                token,
                **{"Idempotency-Key": f"after-kill-{len(answers)}"},
            )
        answers.append(response.status_code)
        if response.status_code == 200:
            break
        assert response.status_code == 503, response.get_json()
        assert response.mimetype == "application/problem+json"
        assert response.get_json()["type"].endswith(("/unavailable", "/not-replicated"))
        if not restarted and cluster.master_of_slot(slot) != doomed:
            cluster.restart(doomed)
            restarted = True
        time.sleep(0.05)
    assert answers[-1] == 200, answers
    assert 503 in answers, "the kill was not noticed"
    cluster.wait_ok()

    # Every event acknowledged before the kill survived the failover, unchanged.
    assert store.read(game_id)[: len(before)] == before
    assert store.version(game_id) > acknowledged
    final = hearts.play_out(game_id, tokens)
    assert final["phase"] == "finished"
    assert store.verify(game_id) == []
    report = hearts.http.get(f"/api/v1/games/{game_id}/audit").get_json()
    assert report["ok"], report
    client.close()
