"""``POST|GET /api/v1/games/{id}/hands/{n}/analysis``: the analysis of a finished hand as a job."""

from __future__ import annotations

import json
import time

import fakeredis
import pytest

from bots.analysis import AnalysisBudget
from service.api.analysis import progress_stream
from service.api.factory import create_app
from service.app.analysis import AnalysisJobs
from service.settings import Settings
from tests.replay.helpers import play_game

SMALL = AnalysisBudget(samples=4)


@pytest.fixture
def app(key_prefix):
    # A small budget through the setting (HEARTS_ANALYSIS_SAMPLES), as an operator sets it.
    settings = Settings(key_prefix=key_prefix, sweep_on_start=False, analysis_samples=4)
    app = create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    store = app.extensions["hearts"].store
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
    # Asked "if started" (the web replay, issue 34): nothing, and no failed request.
    quiet = client.get(url, query_string={"if_started": "true"})
    assert quiet.status_code == 204 and quiet.data == b""
    bad = client.get(url, query_string={"if_started": "banana"})
    assert bad.status_code == 422 and "if_started" in bad.get_data(as_text=True)
    started = client.post(url, json={})
    assert started.status_code == 202
    assert started.headers["Location"] == url and started.json["status_url"] == url
    assert started.json["state"] in ("queued", "running", "done")
    body = _until_done(client, url)
    assert body["state"] == "done", body
    assert client.get(url, query_string={"if_started": "true"}).json == body
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


def _events(text: str) -> list[tuple[str, str]]:
    """(event name, data) of each message of an SSE body; comments left out."""
    out = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        fields = dict(line.split(": ", 1) for line in lines if ": " in line)
        if "data" in fields:
            out.append((fields.get("event", "message"), fields["data"]))
    return out


def test_its_progress_is_a_stream_that_ends_with_the_analysis(app) -> None:
    client = app.test_client()
    url = "/api/v1/games/analysed/hands/1/analysis"
    stream = {"Accept": "text/event-stream"}
    before = client.get(url, headers=stream)  # a problem, not a stream
    assert before.status_code == 404 and before.json["code"] == "analysis-not-started"
    assert client.post(url, json={}).status_code == 202
    response = client.get(url, headers=stream)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    events = _events(response.get_data(as_text=True))
    names = [name for name, _ in events]
    assert names[-1] == "done" and set(names[:-1]) <= {"progress"}
    done = json.loads(events[-1][1])
    assert done["result"]["hand_number"] == 1 and done["done"] == done["total"]
    counts = [json.loads(data)["done"] for name, data in events if name == "progress"]
    assert counts == sorted(counts)  # progress only moves forward
    # Kept: a stream asked for later is the analysis at once.
    assert [n for n, _ in _events(client.get(url, headers=stream).get_data(as_text=True))] == [
        "done"
    ]


def test_the_progress_stream_keeps_alive_reports_changes_and_ends_when_forgotten() -> None:
    now = [0.0]
    statuses = iter(
        [
            {"state": "running", "done": 1, "total": 3},
            {"state": "running", "done": 1, "total": 3},
            {"state": "running", "done": 1, "total": 3},
            {"state": "running", "done": 2, "total": 3},
            None,  # its worker died: forgotten
        ]
    )

    def sleep(seconds: float) -> None:
        now[0] += seconds

    stream = progress_stream(
        lambda: next(statuses),
        {"state": "queued", "done": 0, "total": 0},
        keepalive=1.0,
        lifetime=100.0,
        poll=0.5,
        clock=lambda: now[0],
        sleep=sleep,
    )
    text = "".join(stream)
    assert [name for name, _ in _events(text)] == ["progress", "progress", "progress", "end"]
    assert ": keep-alive" in text
    assert json.loads(_events(text)[-1][1]) == {"reason": "forgotten"}


def test_the_progress_stream_asks_for_a_reconnect_at_its_lifetime() -> None:
    now = [0.0]
    stream = progress_stream(
        lambda: {"state": "running", "done": 1, "total": 3},
        {"state": "running", "done": 1, "total": 3},
        keepalive=15.0,
        lifetime=2.0,
        poll=0.5,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert [name for name, _ in _events("".join(stream))] == ["progress", "reconnect"]
