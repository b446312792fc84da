"""A replayed answer is held to the same durability as a first one (issue 18, item 10): with
HEARTS_MIN_REPLICAS=N, no 2xx until N replicas have the events it reports."""

from __future__ import annotations

import pytest

from service.api.factory import create_app
from service.settings import Settings
from tests.api.helpers import Hearts


@pytest.fixture
def lonely_apps(real_redis, key_prefix):
    """Two apps on one redis-server without any replica: one that asks for none, one for one."""
    relaxed = create_app(Settings(key_prefix=key_prefix), redis=real_redis)
    strict = create_app(
        Settings(key_prefix=key_prefix, min_replicas=1, replica_timeout_ms=100), redis=real_redis
    )
    return relaxed.test_client(), strict.test_client()


def test_a_join_answered_not_replicated_stays_503_when_retried_with_its_key(lonely_apps):
    relaxed, strict = lonely_apps
    game = Hearts(relaxed).create([None, None, {"bot": "random"}, {"bot": "random"}])
    path = f"/api/v1/games/{game['id']}/seats"
    headers = {"Idempotency-Key": "join-k-" + "7f3a9c2e5b1d4f6a8c0e2b4d6f8a1c3e"}  # unguessable
    first = strict.post(path, json={"name": "ann"}, headers=headers)
    assert first.status_code == 503, first.get_json()
    assert first.get_json()["type"].endswith("/not-replicated")
    for _ in range(2):  # the README's advice: retry with the same key
        again = strict.post(path, json={"name": "ann"}, headers=headers)
        assert again.status_code == 503, again.get_json()
        assert again.get_json()["type"].endswith("/not-replicated")
        assert "token" not in again.get_json()
    # Without the durability asked for, the same receipt answers (the join was recorded).
    relaxed_again = relaxed.post(path, json={"name": "ann"}, headers=headers)
    assert relaxed_again.status_code == 201
    assert relaxed_again.headers.get("Idempotent-Replayed") == "true"
    assert relaxed_again.get_json()["token"]


def test_a_move_answered_not_replicated_stays_503_when_retried(lonely_apps):
    relaxed, strict = lonely_apps
    hearts = Hearts(relaxed)
    game_id, tokens = hearts.new_game(1)
    view = hearts.view(game_id, tokens[0], 0)
    endpoint, body = hearts.move(view)
    path = f"/api/v1/games/{game_id}/{endpoint}"
    headers = {"Authorization": f"Bearer {tokens[0]}", "Idempotency-Key": "move-k"}
    assert strict.post(path, json=body, headers=headers).status_code == 503
    retried = strict.post(path, json=body, headers=headers)
    assert retried.status_code == 503
    assert retried.get_json()["type"].endswith("/not-replicated")
