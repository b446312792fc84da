"""The analysis of a finished hand, as a job (docs/analysis.md).

- ``POST /games/{id}/hands/{n}/analysis`` (body ``{}``): starts it unless it is kept or under
  way; 202 with the status and its URL (``Location``). Only scored hands (409
  hand-in-progress): during play an analysis would be a cheating aid. A worker queues a few
  analyses at most (503 analyses-busy, with Retry-After).
- ``GET`` the same URL: the status (queued, running with the decisions done and their total,
  failed) or, once done, the analysis itself; 404 analysis-not-started if nobody POSTed it
  (``?if_started=true``: 204 instead, for a page that only shows one if there is one, without
  a failed request in its console).
  With ``Accept: text/event-stream``: the progress as Server-Sent Events (``progress`` at each
  change, then ``done`` with the analysis or ``failed``; keep-alive comments; ``reconnect`` at the
  stream's lifetime), counted against the same stream bounds as a game's live events.

The result is kept in Redis keyed by (game, hand, analysis version, budget), so asking twice
costs nothing, and every worker answers for any job. No token: a finished hand is public.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Response, current_app, request, stream_with_context, url_for
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from service.api import storage_costs
from service.api.common import json_response, service
from service.api.problems import BODY, documented
from service.api.rate_limits import client, rate_limited, spends_storage
from service.api.replay import EVENT_STREAM, TEXT, wants_stream
from service.app.analysis import AnalysisJobs, service_budget
from service.app.errors import AnalysisNotStarted
from service.app.live import StreamSlots
from service.store.analysis_queue import AnalysisQueue

blp = Blueprint(
    "analysis",
    __name__,
    url_prefix="/api/v1/games",
    description="What each decision of a finished hand was worth",
)

STATES = ("queued", "running", "done", "failed")


class AnalysisRequestSchema(Schema):
    """Nothing to say yet: the server chooses the budget (every POST to the API is JSON)."""


class AnalysisStatusSchema(Schema):
    """A hand analysis job: its state and progress, and the analysis once done."""

    state = fields.String(validate=validate.OneOf(STATES))
    done = fields.Integer(metadata={"description": "Decisions analysed so far"})
    total = fields.Integer(metadata={"description": "Decisions in the hand (0 until it starts)"})
    status_url = fields.String(metadata={"description": "Where to GET this status"})
    detail = fields.String(metadata={"description": "Why it failed (state failed)"})
    result = fields.Dict(
        metadata={
            "description": "The analysis (state done): per decision every option's value with "
            "its 95% interval, the option played, its loss and mark; per seat its decisions "
            "with a real choice, those forced (one option: neither good nor bad), its marks, "
            "total_loss (expected points its choices gave away) and accuracy (the share of its "
            "real choices unmarked, in percent; 100 with none). docs/analysis.md"
        }
    )


class AnalysisQuerySchema(Schema):
    if_started = fields.Boolean(
        load_default=False,
        metadata={
            "description": "true: answer 204 (no body) rather than 404 analysis-not-started "
            "when nobody has asked for this hand's analysis"
        },
    )


def _jobs() -> AnalysisJobs:
    jobs = current_app.extensions.get("hearts.analyses")
    if jobs is None:
        store = service().store
        settings = current_app.extensions["hearts.settings"]
        external = settings.analysis_worker == "external"
        queue = AnalysisQueue(store) if external else None  # for `hearts analyst`
        jobs = current_app.extensions.setdefault(
            "hearts.analyses",
            AnalysisJobs(
                store,
                budget=service_budget(settings),
                queue=queue,
                # The hand is checked on the game's cached fold, not by reading its log (33).
                game=lambda g: service().snapshot(g).state.state,
            ),
        )
    return jobs


def _answer(status: dict, game_id: str, number: int, code: int):
    url = url_for("analysis.AnalysisJob", game_id=game_id, number=number)
    body = {**status, "status_url": url}
    headers = {"Location": url} if code == 202 else {}
    return json_response(body, status=code, headers=headers)


@blp.route("/<game_id>/hands/<int:number>/analysis")
class AnalysisJob(MethodView):
    @blp.doc(operationId="startAnalysis")
    @blp.arguments(AnalysisRequestSchema)
    @blp.response(202, AnalysisStatusSchema, description="Started, under way or done: GET Location")
    @documented(blp, *BODY, 404, 409, 503)
    @spends_storage(
        blp, storage_costs.ANALYSIS, endpoint="AnalysisJob", unless=lambda: request.method != "POST"
    )
    @rate_limited(blp, "analysis", endpoint="AnalysisJob", unless=lambda: request.method != "POST")
    def post(self, body: dict, game_id: str, number: int):
        """Start the analysis of finished hand ``number``; its status and where to follow it."""
        return _answer(_jobs().start(game_id, number), game_id, number, 202)

    @blp.doc(operationId="getAnalysis")
    @blp.arguments(AnalysisQuerySchema, location="query")
    @blp.response(200, AnalysisStatusSchema, description="The job's status, or the analysis")
    @blp.alt_response(204, description="Not started (with if_started=true): nobody asked for it")
    @blp.alt_response(
        200,
        schema=TEXT,
        content_type=EVENT_STREAM,
        description="With Accept: text/event-stream, its progress as Server-Sent Events",
    )
    @documented(blp, 404, 409, 422, 429)
    def get(self, query: dict, game_id: str, number: int):
        """The analysis of hand ``number`` once done; until then its job's status (or, asked
        as a stream, its progress until done)."""
        jobs = _jobs()
        try:
            status = jobs.status(game_id, number)  # 404/409 before any stream starts
        except AnalysisNotStarted:
            if query["if_started"]:
                return Response(status=204)
            raise
        if wants_stream():
            return _progress_response(jobs, game_id, number, status)
        return _answer(status, game_id, number, 200)


POLL_SECONDS = 0.5  # how often a progress stream reads its job's status (one Redis GET)


def _progress_response(jobs: AnalysisJobs, game_id: str, number: int, first: dict) -> Response:
    settings = current_app.extensions["hearts.settings"]
    slots: StreamSlots = current_app.extensions["hearts.stream_slots"]
    slot = slots.take(client())  # 429/503 over the stream bounds
    stream = progress_stream(
        lambda: jobs.peek(game_id, number),
        first,
        settings.sse_keepalive_seconds,
        settings.sse_max_seconds,
    )
    response = Response(stream_with_context(stream), mimetype=EVENT_STREAM)
    response.call_on_close(slot.release)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def progress_stream(
    peek: Callable[[], dict[str, Any] | None],
    status: dict[str, Any] | None,
    keepalive: float,
    lifetime: float,
    poll: float = POLL_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[str]:
    """``progress`` at each change of the status, ``done`` (with the analysis) or ``failed`` at
    the end, ``end`` if the job was forgotten (its worker died: POST again)."""
    now = clock()
    deadline, quiet_until = now + lifetime, now + keepalive
    last = None
    yield "retry: 2000\n: hearts analysis progress\n\n"
    while True:
        if status is None:
            yield f"event: end\ndata: {json.dumps({'reason': 'forgotten'})}\n\n"
            return
        state = status["state"]
        if state in ("done", "failed"):
            yield f"event: {state}\ndata: {json.dumps(status)}\n\n"
            return
        seen = (state, status.get("done"), status.get("total"))
        if seen != last:
            yield f"event: progress\ndata: {json.dumps(status)}\n\n"
            last, quiet_until = seen, clock() + keepalive
        now = clock()
        if now >= deadline:
            yield "event: reconnect\ndata: {}\n\n"
            return
        if now >= quiet_until:
            yield ": keep-alive\n\n"
            quiet_until = now + keepalive
        sleep(poll)
        status = peek()
