"""The analysis of a finished hand, as a job (docs/analysis.md).

- ``POST /games/{id}/hands/{n}/analysis`` (body ``{}``): starts it unless it is kept or under
  way; 202 with the status and its URL (``Location``). Only scored hands (409
  hand-in-progress): during play an analysis would be a cheating aid. A worker queues a few
  analyses at most (503 analyses-busy, with Retry-After).
- ``GET`` the same URL: the status (queued, running with the decisions done and their total,
  failed) or, once done, the analysis itself; 404 analysis-not-started if nobody POSTed it.

The result is kept in Redis keyed by (game, hand, analysis version, budget), so asking twice
costs nothing, and every worker answers for any job. No token: a finished hand is public.
"""

from __future__ import annotations

from flask import current_app, url_for
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from service.api.common import json_response, service
from service.api.problems import BODY, documented
from service.app.analysis import AnalysisJobs

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
            "its 95% interval, the option played, its loss and mark; per seat its accuracy"
        }
    )


def _jobs() -> AnalysisJobs:
    jobs = current_app.extensions.get("hearts.analyses")
    if jobs is None:
        jobs = current_app.extensions.setdefault("hearts.analyses", AnalysisJobs(service().store))
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
    def post(self, body: dict, game_id: str, number: int):
        """Start the analysis of finished hand ``number``; its status and where to follow it."""
        return _answer(_jobs().start(game_id, number), game_id, number, 202)

    @blp.doc(operationId="getAnalysis")
    @blp.response(200, AnalysisStatusSchema, description="The job's status, or the analysis")
    @documented(blp, 404, 409)
    def get(self, game_id: str, number: int):
        """The analysis of hand ``number`` once done; until then its job's status."""
        return _answer(_jobs().status(game_id, number), game_id, number, 200)
