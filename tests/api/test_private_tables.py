"""Issue 44: a private table, unlisted, joined by the join code its invitation carries.

Given a game created with ``"private": true``, when it is listed, joined without its code,
with another code or with its code, then: it is in no listing, the first two are refused with
the problem ``join-code-invalid`` (and take no seat), the last takes a seat; the code is kept
only as its hash, and a retried create gets the same code back."""

from __future__ import annotations

import secrets

from service.app.auth import credential_of
from tests.api.helpers import PROBLEM


def create_private(client, **extra) -> dict:
    body = {"seats": [None, None, {"bot": "random"}, {"bot": "random"}], "private": True}
    response = client.post("/api/v1/games", json=body, **extra)
    assert response.status_code == 201, response.get_json()
    assert response.headers["Cache-Control"] == "no-store"
    return response.get_json()


def join(client, game_id: str, name: str, code: str | None):
    body = {"name": name} | ({"join_code": code} if code is not None else {})
    return client.post(f"/api/v1/games/{game_id}/seats", json=body)


def listed_ids(client) -> set[str]:
    response = client.get("/api/v1/games?limit=100")
    assert response.status_code == 200
    return {game["id"] for game in response.get_json()["games"]}


def test_a_private_table_is_unlisted_and_its_invitation_carries_the_code(client, service):
    public = client.post("/api/v1/games", json={}).get_json()
    created = create_private(client)
    game_id, code = created["id"], created["join_code"]
    assert created["private"] is True
    assert created["invitation"] == f"/#/invite/{game_id}/{code}"
    assert len(code) >= 22  # 128 bits, base64url
    assert "join_code" not in public and public["private"] is False
    ids = listed_ids(client)
    assert public["id"] in ids and game_id not in ids
    # Still a game anyone with its id may look at, as any game's link.
    assert client.get(f"/api/v1/games/{game_id}").status_code == 200
    # Kept only as its hash.
    assert service.invitations.credential(game_id) == credential_of(code)


def test_a_seat_needs_the_join_code(client):
    created = create_private(client)
    game_id, code = created["id"], created["join_code"]
    for given in (None, "not-the-code", code[:-1] + ("A" if code[-1] != "A" else "B")):
        refused = join(client, game_id, "eve", given)
        assert refused.status_code == 403, refused.get_json()
        assert refused.mimetype == PROBLEM
        assert refused.get_json()["code"] == "join-code-invalid"
    view = client.get(f"/api/v1/games/{game_id}").get_json()
    assert all(seat["name"] is None for seat in view["seats"][:2])  # nothing taken
    joined = join(client, game_id, "ann", code)
    assert joined.status_code == 201, joined.get_json()
    assert joined.get_json()["seat"] == 0


def test_a_listed_table_ignores_a_join_code(client):
    game = client.post("/api/v1/games", json={}).get_json()
    assert join(client, game["id"], "bob", "whatever").status_code == 201


def test_a_retried_create_gets_the_same_code_back(client):
    key = secrets.token_urlsafe(16)
    first = create_private(client, headers={"Idempotency-Key": key})
    again = create_private(client, headers={"Idempotency-Key": key})
    assert again["id"] == first["id"] and again["join_code"] == first["join_code"]
    assert first["id"] not in listed_ids(client)


def test_a_private_create_with_a_guessable_key_is_refused_and_marks_nothing(client, service):
    body = {"private": True}
    refused = client.post("/api/v1/games", json=body, headers={"Idempotency-Key": "abc"})
    assert refused.status_code == 422
    assert refused.get_json()["code"] == "idempotency-key-guessable"


def test_a_private_retry_of_a_public_create_leaves_the_game_listed(client, service):
    key = secrets.token_urlsafe(16)
    public = client.post("/api/v1/games", json={}, headers={"Idempotency-Key": key})
    assert public.status_code == 201
    game_id = public.get_json()["id"]
    reused = client.post("/api/v1/games", json={"private": True}, headers={"Idempotency-Key": key})
    assert reused.status_code == 422
    assert reused.get_json()["code"] == "idempotency-key-reused"
    assert service.invitations.credential(game_id) is None
    assert game_id in listed_ids(client)
    assert join(client, game_id, "cy", None).status_code == 201
