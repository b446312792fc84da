"""The OpenAPI document is written on its first read, not by ``create_app`` (issue 44: building
an app was 0.2 s of CPU, nine tenths of it the document, which most apps never serve); written
late, it is the document flask-smorest writes at registration, and threads that read it first
at once get one document."""

from __future__ import annotations

import copy
import json
from concurrent.futures import ThreadPoolExecutor

import fakeredis
import pytest
from flask_smorest import Api

from service.api.factory import HeartsApi, create_app
from service.api.schemas import PROBLEM_DOC
from service.settings import Settings


def _app():
    settings = Settings(key_prefix="lazy-doc", sweep_on_start=False)
    return create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))


def _api(app) -> HeartsApi:
    return app.extensions["flask-smorest"]["apis"][""]["ext_obj"]


def _served(app) -> str:
    """The app's document, its log key (the app's own) aside."""
    return _keyless(app, app.test_client().get("/api/v1/openapi.json").get_json())


def _keyless(app, document: dict) -> str:
    assert document["info"].pop("x-hearts-log-key") == app.extensions["hearts.log"].vkey
    return json.dumps(document)


def test_an_app_writes_its_document_when_first_read_as_flask_smorest_would_at_once():
    lazy = _app()
    assert _api(lazy)._undocumented, "create_app wrote the document"
    with pytest.MonkeyPatch.context() as patch:  # flask-smorest's own: documented at once
        patch.setattr(HeartsApi, "register_blueprint", Api.register_blueprint)
        eager = _app()
    assert not _api(eager)._undocumented
    # Byte for byte, in the same order (tags, paths, components).
    assert _served(lazy) == _served(eager)
    assert not _api(lazy)._undocumented


def test_threads_reading_a_new_apps_document_at_once_get_the_same_one():
    reference = _served(_app())
    app = _app()
    with ThreadPoolExecutor(max_workers=4) as pool:
        documents = list(pool.map(lambda _: _api(app).spec.to_dict(), range(4)))
    assert {_keyless(app, document) for document in documents} == {reference}
    assert _served(app) == reference


def test_the_documents_problem_schema_is_one_instance_never_copied():
    assert copy.deepcopy(PROBLEM_DOC) is PROBLEM_DOC
    assert copy.deepcopy({"schema": PROBLEM_DOC})["schema"] is PROBLEM_DOC
