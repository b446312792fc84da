"""Issue 22 item 9: audits, exports and imports run in a child process of the worker, at the
lowest CPU priority, so that a big one does not slow the worker's ordinary requests
(``service/offload.py``, ``service/api/long_work.py``; figures: ``python -m bench.bounded_work``).

Each test builds two apps on the suite's redis-server: one whose long requests run in the child
(the default when the app reaches Redis by URL) and one that runs them inline; the answers must
be the same, errors included.
"""

from __future__ import annotations

import json
import os
import signal
import uuid
from collections.abc import Iterator

import pytest
from flask import Flask

from service.api.factory import create_app
from service.api.long_work import offload_of
from service.offload import NICE, InlineOffload, OffloadFailed, ProcessOffload
from service.settings import Settings
from tests.api.helpers import Hearts

BOTS = [{"bot": "random"}] * 4


def built_apps(redis_server: str, key_prefix: str) -> Iterator[tuple[Flask, Flask]]:
    built = [
        create_app(Settings(redis_url=redis_server, key_prefix=key_prefix, long_work=mode))
        for mode in ("process", "inline")
    ]
    yield built[0], built[1]
    for app in built:
        app.extensions["hearts.bots_stop"]()
        offload_of(app).close()


@pytest.fixture
def apps(redis_server, key_prefix) -> Iterator[tuple[Flask, Flask]]:
    yield from built_apps(redis_server, key_prefix)


@pytest.fixture(scope="module")
def import_apps(redis_server) -> Iterator[tuple[Flask, Flask]]:
    """The pair for the refused imports: a refusal writes nothing, so one pair (one child
    process, started once) serves every body."""
    yield from built_apps(redis_server, f"test-imports-{uuid.uuid4().hex[:12]}")


def finished_game(app: Flask) -> str:
    hearts = Hearts(app.test_client())
    game_id = hearts.create(BOTS, rules={"score_limit": 30})["id"]
    hearts.wait_for(game_id, lambda view: view["phase"] == "finished", timeout=120)
    return game_id


def children(app: Flask) -> list:
    offload = offload_of(app)
    assert isinstance(offload, ProcessOffload)
    return list(offload._all)


def test_the_child_answers_as_the_worker_would(apps):
    child, inline = apps
    assert isinstance(offload_of(inline)._offload, InlineOffload)
    game_id = finished_game(inline)
    a, b = child.test_client(), inline.test_client()

    for path in (f"/api/v1/games/{game_id}/audit", f"/api/v1/games/{game_id}/export"):
        answers = [a.get(path), b.get(path)]
        assert [r.status_code for r in answers] == [200, 200]
        assert answers[0].headers["ETag"] == answers[1].headers["ETag"]
        first, second = (r.get_json() for r in answers)
        if "exported_at" in first:  # the export says when it was made
            first.pop("exported_at"), second.pop("exported_at")
        assert first == second
    text = [c.get(f"/api/v1/games/{game_id}/export?format=text") for c in (a, b)]
    assert text[0].mimetype == "text/plain"
    # The first lines say when the export was made; the rest is the game.
    assert text[0].data.splitlines()[3:] == text[1].data.splitlines()[3:]

    export = a.get(f"/api/v1/games/{game_id}/export").data
    imported = a.post("/api/v1/games/import", data=export, content_type="application/json")
    assert imported.status_code == 201, imported.get_json()
    again = b.post("/api/v1/games/import", data=export, content_type="application/json")
    assert again.status_code == 200 and again.get_json()["id"] == imported.get_json()["id"]
    assert a.get(f"/api/v1/games/{imported.get_json()['id']}/audit").get_json()["ok"]

    # The work ran in a child of this process, at the lowest priority.
    (process,) = children(child)
    assert process.alive() and process.process.pid != os.getpid()
    assert os.getpriority(os.PRIO_PROCESS, process.process.pid) == NICE


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"[" * 40 + b"]" * 40, 400, "json-too-deep"),
        (b"{not json", 400, "malformed-json"),
        (b"[1, 2]", 422, "validation-error"),
        (b'{"events": "\\ud800"}', 422, "invalid-unicode"),
        (b'{"format": 1}', 422, "invalid-export"),
    ],
)
def test_a_bad_import_is_the_same_problem_from_the_child(import_apps, body, status, code):
    for app in import_apps:
        response = app.test_client().post(
            "/api/v1/games/import", data=body, content_type="application/json"
        )
        assert response.status_code == status, response.get_json()
        assert response.mimetype == "application/problem+json"
        assert response.get_json()["code"] == code


def test_errors_raised_in_the_child_keep_their_problem(apps):
    child, inline = apps
    hearts = Hearts(inline.test_client())
    open_game = hearts.create([None, None, None, None])["id"]
    for app in apps:
        client = app.test_client()
        missing = client.get("/api/v1/games/gnothere/audit")
        assert (missing.status_code, missing.get_json()["code"]) == (404, "game-not-found")
        assert "gnothere" in missing.get_json()["detail"]
        early = client.get(f"/api/v1/games/{open_game}/export")
        assert (early.status_code, early.get_json()["code"]) == (409, "game-in-progress")


def test_a_dead_child_is_replaced_and_a_call_it_dropped_is_a_503(apps):
    child, inline = apps
    game_id = finished_game(inline)
    client = child.test_client()
    assert client.get(f"/api/v1/games/{game_id}/audit").status_code == 200
    (first,) = children(child)
    os.kill(first.process.pid, signal.SIGKILL)
    first.process.wait()
    # Killed while idle: the next call starts another child (an export: the game's audit is
    # kept now, answered without a job).
    assert client.get(f"/api/v1/games/{game_id}/export").status_code == 200
    (second,) = children(child)
    assert second is not first

    # Killed during a call: that call is answered 503 (it may have done part of an import's
    # reads, never a partial append: an append is one script), and the next one works again.
    offload = offload_of(child)
    with pytest.raises(OffloadFailed):
        offload.call("audit", _Suicide())
    response = client.get(f"/api/v1/games/{game_id}/audit")
    assert response.status_code == 200


class _Suicide:
    """Unpickled in the child, it kills the child: a stand-in for a crash mid-call."""

    def __reduce__(self):
        return (os._exit, (17,))


def test_an_offload_failure_is_a_503_problem(apps, monkeypatch):
    child, _ = apps

    def fail(*args):
        raise OffloadFailed("the long-work process failed: gone")

    monkeypatch.setattr(offload_of(child), "call", fail)
    response = child.test_client().get("/api/v1/games/gwhatever/audit")
    assert response.status_code == 503
    assert response.get_json()["code"] == "unavailable"
    assert response.headers["Retry-After"] == "1"
    assert json.loads(response.data)["type"] == "/problems/unavailable"
