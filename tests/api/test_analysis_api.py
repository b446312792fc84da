"""``POST|GET /api/v1/games/{id}/hands/{n}/analysis``: the analysis of a finished hand as a job."""

from __future__ import annotations

import time

import fakeredis
import pytest

from bots.analysis import AnalysisBudget
from service.api.factory import create_app
from service.app.analysis import AnalysisJobs
from service.settings import Settings
from tests.replay.helpers import play_game

SMALL = AnalysisBudget(samples=4)


@pytest.fixture
def app(key_prefix):
    settings = Settings(key_prefix=key_prefix, sweep_on_start=False)
    app = create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    store = app.extensions["hearts"].store
    app.extensions["hearts.analyses"] = AnalysisJobs(store, budget=SMALL)
    # Hand 1 scored (about 77 events with the creation and joins), hand 2 in play.
    play_game(store, "analysed", seed="analyse", stop_after=100)
    return app


def _until_done(client, url: str) -> dict:
    deadline = time.monotonic() + 120  # a loaded machine: poll, never sleep for a state
    while True:
        body = client.get(url).json
        if body["state"] in ("done", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def test_a_finished_hand_is_analysed_once_as_a_job(app) -> None:
    client = app.test_client()
    url = "/api/v1/games/analysed/hands/1/analysis"
    before = client.get(url)
    assert before.status_code == 404 and before.json["code"] == "analysis-not-started"
    started = client.post(url, json={})
    assert started.status_code == 202
    assert started.headers["Location"] == url and started.json["status_url"] == url
    assert started.json["state"] in ("queued", "running", "done")
    body = _until_done(client, url)
    assert body["state"] == "done", body
    result = body["result"]
    assert result["hand_number"] == 1 and result["budget"]["samples"] == 4
    assert body["done"] == body["total"] == len(result["decisions"])
    assert len(result["seats"]) == 4
    again = client.post(url, json={})  # kept: nothing runs again
    assert again.status_code == 202 and again.json["state"] == "done"
    assert again.json["result"] == result


def test_what_is_refused(app) -> None:
    client = app.test_client()
    in_play = client.post("/api/v1/games/analysed/hands/2/analysis", json={})
    assert in_play.status_code == 409 and in_play.json["code"] == "hand-in-progress"
    assert client.get("/api/v1/games/analysed/hands/2/analysis").status_code == 409
    never = client.post("/api/v1/games/analysed/hands/9/analysis", json={})
    assert never.status_code == 404 and never.json["code"] == "hand-not-found"
    missing = client.post("/api/v1/games/no-such-game/hands/1/analysis", json={})
    assert missing.status_code == 404 and missing.json["code"] == "game-not-found"


class _Full:
    size = 0

    def submit(self, job) -> bool:
        return False


def test_a_full_queue_answers_busy_and_leaves_no_job_behind(app) -> None:
    store = app.extensions["hearts"].store
    app.extensions["hearts.analyses"] = AnalysisJobs(store, runner=_Full(), budget=SMALL)  # type: ignore[arg-type]
    client = app.test_client()
    url = "/api/v1/games/analysed/hands/1/analysis"
    busy = client.post(url, json={})
    assert busy.status_code == 503 and busy.json["code"] == "analyses-busy"
    assert int(busy.headers["Retry-After"]) > 0
    assert client.get(url).json["code"] == "analysis-not-started"
