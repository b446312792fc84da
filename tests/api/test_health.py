"""/healthz, /metrics and the OpenAPI document."""

from __future__ import annotations

import fakeredis
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from service.api.factory import create_app
from service.api.schemas import CommandResultSchema, JoinedSchema, PublicViewSchema
from service.settings import Settings
from tests.api.helpers import Hearts
from tests.background import settle


def test_healthz_pings_redis(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.get_json()["redis"] == "ok"


def test_healthz_is_503_when_redis_is_down():
    dead = redis.Redis(
        host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )
    app = create_app(Settings(), redis=dead)
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json()["type"] == "/problems/unavailable"


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_metrics_count_requests_events_and_conflicts(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(1)
    hearts.act(game_id, 0, tokens[0])
    text = client.get("/metrics").get_data(as_text=True)
    assert 'hearts_http_requests_total{method="POST",route="/api/v1/games",status="201"}' in text
    assert "hearts_http_request_duration_seconds_bucket" in text
    assert "hearts_events_appended_total" in text
    assert "hearts_conflicts_retried_total" in text
    assert "hearts_bot_moves_total" in text


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_openapi_document_and_docs_page(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    assert spec["openapi"].startswith("3.")
    paths = spec["paths"]
    for path in (
        "/api/v1/games",
        "/api/v1/games/{game_id}",
        "/api/v1/games/{game_id}/seats",
        "/api/v1/games/{game_id}/pass",
        "/api/v1/games/{game_id}/play",
        "/api/v1/games/{game_id}/moon",
        "/api/v1/games/{game_id}/seats/{seat}/bot",
    ):
        assert path in paths
    assert client.get("/api/v1/docs").status_code == 200


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_responses_match_their_documented_schemas(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(1)
    result = hearts.act(game_id, 0, tokens[0])
    assert CommandResultSchema().validate(result) == {}
    assert set(CommandResultSchema().fields) <= set(result)
    view = hearts.view(game_id)
    assert PublicViewSchema().validate(view) == {}
    assert set(PublicViewSchema().fields) <= set(view)
    game = hearts.create([None] * 4)
    joined = client.post(f"/api/v1/games/{game['id']}/seats", json={"name": "x"}).get_json()
    assert JoinedSchema().validate(joined) == {}


def test_fakeredis_without_lua_is_not_needed_here():
    # The app runs on any client the store accepts, e.g. a private fakeredis server.
    app = create_app(Settings(), redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    assert app.test_client().get("/healthz").status_code == 200


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_readyz_says_degraded_until_a_projector_beats_then_running(app, client, hearts):
    from service.api.projections import projections
    from service.app.projector import Projector

    game_id, _ = hearts.new_game(1)
    settle(app, [game_id])  # the bots' pass appends in the background: the lag must hold still
    before = client.get("/readyz")
    assert before.status_code == 200
    body = before.get_json()
    assert body["status"] == "degraded" and body["redis"]["status"] == "ok"
    assert body["projector"]["status"] == "down" and body["projector"]["live"] == []
    assert body["projector"]["lag"] > 0  # the game's events, not projected
    with app.app_context():
        projector = Projector(projections(), consumer="ready-test", blocking=False)
        projector.ensure_groups()
        projector.heartbeat()
        while projector.poll(block_ms=0):
            pass
    after = client.get("/readyz").get_json()
    assert after["status"] == "ok"
    assert after["projector"] == {
        "status": "running",
        "live": ["ready-test"],
        "lag": 0,
        "generation": after["projector"]["generation"],
    }
    text = client.get("/metrics").get_data(as_text=True)
    assert "hearts_redis_up 1.0" in text and "hearts_projectors_live 1.0" in text


def test_readyz_is_503_when_redis_is_down_and_says_why():
    dead = redis.Redis(
        host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )
    client = create_app(Settings(), redis=dead).test_client()
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["type"] == "/problems/unavailable"
    assert body["redis"]["status"] == "down" and body["redis"]["error"]
    assert body["projector"]["status"] == "unknown"
    assert "hearts_redis_up 0.0" in client.get("/metrics").get_data(as_text=True)
