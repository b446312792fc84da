"""Root endpoints: ``/healthz`` (Redis answers), ``/metrics`` (Prometheus), ``/problems/<code>``."""

from __future__ import annotations

from flask import Blueprint, Response, current_app

from service.api.common import json_response, service
from service.api.problems import CATALOGUE, Problem, describe
from service.metrics import exposition

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    try:
        service().store.redis.ping()
    except Exception as error:  # any failure to reach Redis means unhealthy
        raise Problem("unavailable", f"redis does not answer: {error}", status=503) from None
    return json_response({"status": "ok", "redis": "ok"})


@bp.get("/metrics")
def metrics():
    body, content_type = exposition(current_app.extensions["hearts.settings"].metrics_dir)
    return Response(body, mimetype=None, content_type=content_type)


@bp.get("/problems")
def problems():
    return json_response([describe(code) for code in sorted(CATALOGUE)])


@bp.get("/problems/<code>")
def problem(code: str):
    described = describe(code)
    if described is None:
        raise Problem("not-found", f"no problem type {code!r}", status=404)
    return json_response(described)
