"""An answer that carries a seat's token is never kept by a cache (issue 22, item 7):
``Cache-Control: no-store`` on a join, on its replay under the same Idempotency-Key, and in the
OpenAPI document; no other answer carries a token."""

from __future__ import annotations

import fakeredis
import pytest

from service.api.factory import create_app
from service.settings import Settings


@pytest.fixture
def client():
    redis_client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    app = create_app(Settings(key_prefix="nostore", sweep_on_start=False), redis=redis_client)
    return app.test_client()


def test_a_join_is_not_stored_by_any_cache(client):
    game = client.post("/api/v1/games", json={}).get_json()["id"]
    joined = client.post(f"/api/v1/games/{game}/seats", json={"name": "ann"})
    assert joined.status_code == 201 and joined.get_json()["token"]
    assert joined.headers["Cache-Control"] == "no-store"


def test_a_replayed_join_is_not_stored_either(client):
    game = client.post("/api/v1/games", json={}).get_json()["id"]
    url = f"/api/v1/games/{game}/seats"
    key = {"Idempotency-Key": "a7c1f0e2-2b7d-4d8e-9a57-4f5b0f0f5d31"}
    first = client.post(url, json={"name": "ann"}, headers=key)
    again = client.post(url, json={"name": "ann"}, headers=key)
    assert again.status_code == 201 and again.headers.get("Idempotent-Replayed") == "true"
    for response in (first, again):
        assert response.headers["Cache-Control"] == "no-store"


def test_the_document_says_a_join_is_no_store(client):
    document = client.get("/api/v1/openapi.json").get_json()
    created = document["paths"]["/api/v1/games/{game_id}/seats"]["post"]["responses"]["201"]
    assert created["headers"]["Cache-Control"]["schema"]["enum"] == ["no-store"]


def test_no_other_answer_carries_a_token(client):
    # The token appears once, in the join's answer: views, resume and events never repeat it.
    game = client.post(
        "/api/v1/games", json={"seats": [None, {"bot": "random"}, {"bot": "random"}, None]}
    ).get_json()["id"]
    token = client.post(f"/api/v1/games/{game}/seats", json={"name": "ann"}).get_json()["token"]
    client.post(f"/api/v1/games/{game}/seats", json={"name": "bob"})
    bearer = {"Authorization": f"Bearer {token}"}
    for path in ("", "/resume", "/events", "/state?at=2"):
        response = client.get(f"/api/v1/games/{game}{path}", headers=bearer)
        assert response.status_code == 200, (path, response.get_json())
        assert token not in response.get_data(as_text=True), path
