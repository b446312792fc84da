"""Issue 22, item 1: every answer of the app carries the security headers: the web table's page
and each of its files, the API docs page and Swagger UI's files, and the API's answers (success
and problem alike). The policy is strict: only the service's own files, no inline script or
style, no plugins, no <base>, never framed, forms only to the service."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.factory import create_app
from service.settings import Settings
from service.web.docs import SWAGGER_UI

STATIC = Path(__file__).resolve().parents[2] / "service" / "web" / "static"

pytestmark = pytest.mark.parametrize("redis_client", ["fake"], indirect=True)


@pytest.fixture
def client(redis_client, key_prefix):
    return create_app(Settings(key_prefix=key_prefix), redis=redis_client).test_client()


def policy_of(headers) -> dict[str, list[str]]:
    directives = [d.split() for d in headers["Content-Security-Policy"].split(";") if d.strip()]
    return {d[0]: d[1:] for d in directives}


def assert_secured(response, what: str) -> None:
    headers = response.headers
    assert "Content-Security-Policy" in headers, what
    policy = policy_of(headers)
    assert policy["default-src"] == ["'self'"], what
    for directive in ("script-src", "style-src"):
        sources = policy.get(directive, policy["default-src"])
        assert "'unsafe-inline'" not in sources and "'unsafe-eval'" not in sources, what
        assert all(s == "'self'" for s in sources), what  # no other host, no data:
    assert policy["object-src"] == ["'none'"], what
    assert policy["base-uri"] == ["'none'"], what
    assert policy["frame-ancestors"] == ["'none'"], what
    assert policy["form-action"] == ["'self'"], what
    assert headers["X-Content-Type-Options"] == "nosniff", what
    assert headers["Referrer-Policy"] == "no-referrer", what


def test_the_web_table_page(client):
    response = client.get("/")
    assert response.status_code == 200
    assert_secured(response, "/")


def test_every_static_file_of_the_web_table(client):
    files = sorted(p.name for p in STATIC.iterdir() if p.is_file())
    assert "app.js" in files and "style.css" in files
    for name in files:
        response = client.get(f"/web/{name}")
        assert response.status_code == 200, name
        assert_secured(response, name)
        response.close()


def test_the_docs_page_and_every_swagger_ui_file(client):
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    assert_secured(response, "/api/v1/docs")
    files = sorted(p.name for p in SWAGGER_UI.iterdir() if p.is_file())
    assert "swagger-ui-bundle.js" in files
    for name in files:
        response = client.get(f"/api/v1/docs/swagger-ui/{name}")
        assert response.status_code == 200, name
        assert_secured(response, name)
        response.close()


def test_api_answers_and_problems(client):
    created = client.post("/api/v1/games", json={"seats": [None, None, None, None]})
    assert created.status_code == 201
    assert_secured(created, "POST /api/v1/games")
    for path, status in (
        ("/api/v1/games", 200),
        (f"/api/v1/games/{created.get_json()['id']}", 200),
        ("/api/v1/openapi.json", 200),
        ("/healthz", 200),
        ("/metrics", 200),
        (f"/api/v1/games/g{'0' * 20}", 404),  # a problem
        ("/no/such/page", 404),
    ):
        response = client.get(path)
        assert response.status_code == status, path
        assert_secured(response, path)
    refused = client.post("/api/v1/games", data="{", content_type="application/json")
    assert refused.status_code == 400
    assert_secured(refused, "malformed JSON")
