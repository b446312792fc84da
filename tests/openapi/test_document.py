"""The OpenAPI document itself: errors are problems, rule options come from the domain's
declaration, tokens are a declared bearer scheme."""

from __future__ import annotations

import fakeredis
import pytest

from domain.rules import OPTIONS, PRESETS, TIME_CONTROLS, OptionKind
from service.api.common import IDEMPOTENCY_KEY_PATTERN, MAX_IDEMPOTENCY_KEY
from service.api.factory import create_app
from service.settings import Settings

METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def document():
    app = create_app(Settings(key_prefix="doc", sweep_on_start=False), redis=fakeredis.FakeRedis())
    return app.test_client().get("/api/v1/openapi.json").json


def operations(document):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield f"{method.upper()} {path}", operation


def test_every_error_is_a_problem_and_every_success_has_a_body(document):
    for name, operation in operations(document):
        responses = operation["responses"]
        assert "default" not in responses, name  # each status is listed, none caught by default
        assert {"500", "503"} <= set(responses), name
        for status, response in responses.items():
            content = response.get("content", {})
            if int(status) >= 400:
                schema = content["application/problem+json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/Problem"}, (name, status)
                assert set(content) == {"application/problem+json"}, (name, status)
            elif int(status) in (200, 201):
                # JSON, or text where a format says so (the public log's key and checkpoints),
                # or bytes (its tiles, c2sp.org/tlog-tiles)
                formats = ("application/json", "text/plain", "application/octet-stream")
                media = next((m for m in formats if m in content), None)
                assert media is not None and "schema" in content[media], (name, status)


def test_the_problem_schema_is_rfc_9457_with_code_and_errors(document):
    properties = document["components"]["schemas"]["Problem"]["properties"]
    assert {"type", "title", "status", "detail", "instance", "code", "errors"} <= set(properties)


def test_rule_options_are_the_domains_declaration(document):
    create = document["components"]["schemas"]["CreateGame"]["properties"]["rules"]
    shown = document["components"]["schemas"]["PublicView"]["properties"]["rules"]
    assert create["properties"]["preset"]["enum"] == list(PRESETS)
    assert set(create["properties"]) == {"preset", "time_control", *OPTIONS}
    assert create["properties"]["time_control"]["enum"] == list(TIME_CONTROLS)
    assert set(shown["properties"]) == set(OPTIONS) == set(shown["required"])
    assert create["additionalProperties"] is False
    for name, spec in OPTIONS.items():
        option = create["properties"][name]
        if spec.kind is OptionKind.INTEGER:
            assert (option["minimum"], option["maximum"]) == (spec.minimum, spec.maximum)
        if spec.kind is OptionKind.CHOICE:
            nulls = [None] if spec.nullable else []
            assert option["enum"] == [*spec.choices, *nulls], name
        if spec.kind is OptionKind.BOOLEAN:
            assert option["type"] == "boolean", name


def test_seat_operations_declare_the_bearer_scheme(document):
    scheme = document["components"]["securitySchemes"]["bearerAuth"]
    assert scheme == {"type": "http", "scheme": "bearer"}
    for name, operation in operations(document):
        if any(name.endswith(s) for s in ("/pass", "/play", "/moon", "/bot", "/resume")):
            assert operation["security"] == [{"bearerAuth": []}], name


def test_links_lead_from_create_to_join_to_moves(document):
    paths = document["paths"]
    created = paths["/api/v1/games"]["post"]["responses"]["201"]["links"]
    joined = paths["/api/v1/games/{game_id}/seats"]["post"]["responses"]["201"]["links"]
    moved = paths["/api/v1/games/{game_id}/pass"]["post"]["responses"]["200"]["links"]
    assert created["Join"]["operationRef"].endswith("~1seats/post")
    assert joined["Pass"]["operationRef"].endswith("~1pass/post")
    assert moved["Play"]["operationRef"].endswith("~1play/post")


def _schemas(node):
    """Every schema object in the document (anything that may hold an anyOf)."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schemas(value)


def test_a_nested_schema_that_may_be_null_admits_null_and_nothing_else(document):
    # apispec's OpenAPI 3.0 form adds a branch {"type": "object", "nullable": true}, which any
    # object matches: the document then accepted bodies the schema refuses.
    branches = [b for s in _schemas(document) for b in s.get("anyOf", ()) if "$ref" not in b]
    assert branches  # the view's clock, a seek's rating range, a hand's moon choice ...
    for branch in branches:
        if branch.get("nullable"):
            assert branch.get("enum") == [None], branch
    seek = document["components"]["schemas"]["Seek"]["properties"]["rating_range"]
    assert {"$ref": "#/components/schemas/RatingRange"} in seek["anyOf"]


def test_idempotency_keys_are_declared_as_they_are_checked(document):
    for name, operation in operations(document):
        for parameter in operation.get("parameters", ()):
            if parameter.get("name") == "Idempotency-Key":
                schema = parameter["schema"]
                assert schema["maxLength"] == MAX_IDEMPOTENCY_KEY, name
                assert schema["minLength"] >= 1, name
                assert schema["pattern"] in (IDEMPOTENCY_KEY_PATTERN, "^[A-Za-z0-9_=-]+$"), name
