"""Every operation's examples (service/api/examples.py, recorded from a real game) are in the
OpenAPI document, match its schemas, and have the shape the API answers with today."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest
from openapi_schema_validator import OAS30Validator, validate

from service.api import examples
from service.api.factory import create_app
from service.settings import Settings

JSON = "application/json"


@pytest.fixture(scope="module")
def document() -> dict:
    settings = Settings(key_prefix="examples-doc", sweep_on_start=False)
    app = create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    return app.test_client().get("/api/v1/openapi.json").json


def _operations(document: dict):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "responses" in operation:
                yield f"{method.upper()} {path}", operation


def _has_example(content: dict) -> bool:
    return "example" in content or bool(content.get("examples"))


def _examples(content: dict) -> list[Any]:
    """The content's example, or each of its named ``examples`` (an arena's beside a
    duplicate's, for the tournament operations)."""
    if "example" in content:
        return [content["example"]]
    return [e["value"] for e in content.get("examples", {}).values()]


def _valid(document: dict, value: Any, schema: dict) -> None:
    # The schema's $refs point into the document's components: give them to the validator.
    validate(value, {"components": document["components"], **schema}, cls=OAS30Validator)


def test_every_operation_has_a_request_and_a_response_example(document) -> None:
    missing = []
    for where, operation in _operations(document):
        body = operation.get("requestBody", {}).get("content", {}).get(JSON)
        if body is not None and not _has_example(body):
            missing.append(f"{where}: request")
        success = [r for s, r in operation["responses"].items() if s.startswith("2")]
        contents = [r.get("content", {}) for r in success]
        if all(set(c) == {"application/octet-stream"} for c in contents):
            continue  # bytes (the public log's tiles): no example a document can show
        answers = [c for content in contents for c in content.values()]
        if not any(_has_example(c) for c in answers):  # JSON, or the text form of a text answer
            missing.append(f"{where}: response")
    assert not missing, "no example (python -m service.api.examples records them): " + str(missing)


def test_the_examples_match_the_documents_schemas(document) -> None:
    checked = 0
    for _, operation in _operations(document):
        contents = [operation.get("requestBody", {}).get("content", {}).get(JSON, {})]
        contents += [r.get("content", {}).get(JSON, {}) for r in operation["responses"].values()]
        for content in contents:
            for example in _examples(content):
                _valid(document, example, content["schema"])
                checked += 1
    assert checked >= 2 * 7 + 11  # 7 operations with a body, 18 responses
    # The validator does read the referenced schemas: a created game whose id is a number fails.
    create = document["paths"]["/api/v1/games"]["post"]["responses"]["201"]["content"][JSON]
    broken = {**create["example"], "id": 12}
    with pytest.raises(Exception, match="12 is not of type 'string'"):
        _valid(document, broken, create["schema"])


def _shape(value: Any, at: str = "") -> set[str]:
    """The paths of the keys in a JSON value (list items merged): what a body looks like."""
    if isinstance(value, dict):
        found = set()
        for key, item in value.items():
            found.add(f"{at}/{key}")
            found |= _shape(item, f"{at}/{key}")
        return found
    if isinstance(value, list):
        return set().union(*(_shape(item, f"{at}[]") for item in value))
    return set()


def test_recording_again_gives_the_stored_examples() -> None:
    """Recorded again now (fixed clock, ids and seeds: issue 35), the examples are the stored
    ones to the byte: a recording is deterministic, so a change to one field re-records as a
    one-field diff. Shapes first, as a body that gained or lost a field is the usual cause."""
    stored = examples.load()
    fresh = examples.record()
    assert set(stored) == set(fresh)
    stale = []
    for operation_id, example in fresh.items():
        for part in ("request", "response"):
            if _shape(example.get(part)) != _shape(stored[operation_id].get(part)):
                stale.append(f"{operation_id} {part}")
    assert not stale, f"run python -m service.api.examples: {stale}"
    changed = sorted(op for op in fresh if examples.dumps(fresh[op]) != examples.dumps(stored[op]))
    assert not changed, f"run python -m service.api.examples: {changed}"
