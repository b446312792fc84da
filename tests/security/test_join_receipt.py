"""Issue 22, item 5: a join's token could be taken by anyone who repeated its Idempotency-Key.

The receipt seals the token under a key derived from the Idempotency-Key (which the server does
not keep), so only its holder can open it; a join's key must therefore be unguessable (22+
base64url characters with some variety, or a UUID): a guessable one is refused before anything
is written."""

from __future__ import annotations

import secrets
import uuid

import pytest

from service.api.factory import create_app
from service.app.auth import unguessable_key
from service.settings import Settings
from tests.api.helpers import Hearts
from tests.api.test_errors import assert_problem


@pytest.fixture
def client(redis_client, key_prefix):
    return create_app(Settings(key_prefix=key_prefix), redis=redis_client).test_client()


@pytest.fixture
def hearts(client) -> Hearts:
    return Hearts(client)


def join(client, game_id: str, name: str, key: str):
    return client.post(
        f"/api/v1/games/{game_id}/seats", json={"name": name}, headers={"Idempotency-Key": key}
    )


@pytest.mark.parametrize(
    "weak",
    [
        "join-1",
        "1",
        "a" * 40,
        "abababababababababababab",
        "0123456" * 4,
        "short-but-random-Q9",
        "x y" * 10,
    ],
)
def test_the_attack_a_guessable_join_key_is_refused_and_nothing_is_written(
    hearts: Hearts, client, weak
):
    game = hearts.create([None] * 4)
    response = join(client, game["id"], "ann", weak)
    assert_problem(response, 422, "idempotency-key-guessable")
    assert client.get(f"/api/v1/games/{game['id']}").get_json()["version"] == game["version"]
    # The attacker's repeat finds no receipt and no token: a guessable key seals nothing.
    again = join(client, game["id"], "ann", weak)
    assert_problem(again, 422, "idempotency-key-guessable")
    assert "token" not in again.get_json()


# Each kind of key a client would make, drawn in the test: a parameter drawn at collection
# would differ between pytest-xdist's workers, which refuse a run whose tests they name apart.
STRONG_KEYS = {
    "token_urlsafe": lambda: secrets.token_urlsafe(16),
    "uuid4": lambda: str(uuid.uuid4()),
    "uuid4_hex": lambda: uuid.uuid4().hex,
    "token_hex": lambda: secrets.token_hex(16),
}


@pytest.mark.parametrize("kind", sorted(STRONG_KEYS))
def test_unguessable_keys_are_accepted_and_replay_for_their_holder(hearts: Hearts, client, kind):
    strong = STRONG_KEYS[kind]()
    assert unguessable_key(strong)
    game = hearts.create([None] * 4)
    first = join(client, game["id"], "ann", strong)
    again = join(client, game["id"], "ann", strong)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json()["token"] == first.get_json()["token"]


def test_another_caller_without_the_key_gets_no_token(hearts: Hearts, client):
    game = hearts.create([None] * 4)
    mine = secrets.token_urlsafe(16)
    first = join(client, game["id"], "ann", mine)
    assert first.status_code == 201
    # Same body, another (unguessable) key: a new join for another seat, never ann's token.
    other = join(client, game["id"], "ann2", secrets.token_urlsafe(16))
    assert other.status_code == 201
    assert other.get_json()["token"] != first.get_json()["token"]
    assert other.get_json()["seat"] != first.get_json()["seat"]


def test_the_guessable_key_problem_is_documented_on_the_join(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    join_op = spec["paths"]["/api/v1/games/{game_id}/seats"]["post"]
    (param,) = [p for p in join_op["parameters"] if p.get("name") == "Idempotency-Key"]
    assert param["schema"]["minLength"] == 22
    assert "unguessable" in param["description"]
    assert "422" in join_op["responses"]
    assert client.get("/problems/idempotency-key-guessable").status_code == 200
