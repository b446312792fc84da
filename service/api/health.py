"""Root endpoints: ``/healthz`` (Redis answers), ``/readyz`` (Redis, the projector and its lag, in
detail), ``/metrics`` (Prometheus), ``/problems/<code>``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, has_app_context
from prometheus_client.core import GaugeMetricFamily, Metric

from service.api.common import json_response, service
from service.api.problems import CATALOGUE, Problem, describe
from service.api.projections import projections
from service.app.projector import live_projectors
from service.metrics import exposition, register_collector

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    try:
        service().store.redis.ping()
    except Exception as error:  # any failure to reach Redis means unhealthy
        raise Problem("unavailable", f"redis does not answer: {error}", status=503) from None
    return json_response({"status": "ok", "redis": "ok"})


@bp.get("/readyz")
def readyz():
    """Redis, the projector and the projection lag, and the archive store. 503 (a problem, with
    the same details) when Redis does not answer; 200 otherwise, with ``status`` ``degraded``
    when no projector is alive (commands and games work; scoreboards, the leaderboard and
    statistics stand still) or the archive store does not answer (games in play go on; archived
    games and the public log's tiles answer 503)."""
    report = readiness()
    if report["redis"]["status"] != "ok":
        raise Problem(
            "unavailable",
            f"redis does not answer: {report['redis']['error']}",
            status=503,
            redis=report["redis"],
            projector=report["projector"],
        )
    return json_response(report)


def readiness(probe: bool = True) -> dict[str, Any]:
    """The report /readyz answers (and the gauges /metrics shows). ``probe``: ask the archive
    store (one HEAD, bounded by its timeouts; none while its circuit is open), else report what
    its last calls said."""
    store = service().store
    redis: dict[str, Any] = {"status": "ok"}
    projector: dict[str, Any] = {"status": "unknown", "live": [], "lag": None}
    archive = archive_status(store, probe)
    try:
        store.redis.ping()
        live = live_projectors(store.redis, store.prefix)
        as_of = projections().as_of()
    except Exception as error:  # Redis unreachable, or failing: say so, never a 500
        redis = {"status": "down", "error": str(error)}
        return {"status": "unavailable", "redis": redis, "projector": projector, "archive": archive}
    projector = {
        # running: at least one projector's heartbeat is fresh (service/app/projector.py).
        "status": "running" if live else "down",
        "live": live,
        "lag": as_of.lag,
        "generation": as_of.generation,
    }
    # A store that is down is degraded, not down: games in play, commands and the read models
    # live in Redis; only archived games and the public log's tiles wait for it.
    ok = live and archive["status"] == "ok"
    return {
        "status": "ok" if ok else "degraded",
        "redis": redis,
        "projector": projector,
        "archive": archive,
    }


def archive_status(store: Any, probe: bool) -> dict[str, Any]:
    """The archive store's state: ``ok`` or ``down`` (service/store/blob_guard.py), ``none``
    when this app has no archive (an app handed its Redis keeps objects in memory)."""
    blobs = store.archive.blobs if store.archive is not None else None
    if blobs is None or not hasattr(blobs, "status"):
        return {"status": "ok" if blobs is not None else "none"}
    return blobs.probe() if probe else blobs.status()


def _readiness_metrics() -> Iterator[Metric]:
    if not has_app_context() or "hearts" not in current_app.extensions:
        return
    report = readiness(probe=False)
    yield GaugeMetricFamily(
        "hearts_redis_up",
        "1 if Redis answered this scrape's PING, else 0.",
        value=1 if report["redis"]["status"] == "ok" else 0,
    )
    if report["archive"]["status"] != "none":
        yield GaugeMetricFamily(
            "hearts_archive_store_up",
            "1 if this process's last call to the archive store worked (its circuit closed), "
            "else 0.",
            value=1 if report["archive"]["status"] == "ok" else 0,
        )
    if report["redis"]["status"] == "ok":
        yield GaugeMetricFamily(
            "hearts_projectors_live",
            "Projectors whose heartbeat is fresh (0: scoreboards and statistics stand still).",
            value=len(report["projector"]["live"]),
        )


register_collector(_readiness_metrics)


def _archive_metrics() -> Iterator[Metric]:
    """Ended games and the archive (docs/operations.md): read from Redis at scrape time."""
    if not has_app_context() or "hearts" not in current_app.extensions:
        return
    store = current_app.extensions["hearts"].store
    if store.archive is None:
        return
    try:
        counts = store.archive.counts()
        oldest = store.archive.oldest_ended_seconds()
    except Exception:  # Redis down: /metrics still answers, without these figures
        return
    yield GaugeMetricFamily(
        "hearts_archive_games", "Ended games moved to the archive.", value=counts["archived"]
    )
    yield GaugeMetricFamily(
        "hearts_archive_ended_hot",
        "Ended games still in Redis, waiting to move to the archive.",
        value=counts["ended_hot"],
    )
    yield GaugeMetricFamily(
        "hearts_archive_oldest_ended_seconds",
        "How long the longest-waiting ended game has waited to move (0: none waits).",
        value=oldest or 0.0,
    )
    yield GaugeMetricFamily(
        "hearts_archive_log_entries",
        "Partition-log entries moved out of Redis with their games.",
        value=counts["removed_log_entries"],
    )


register_collector(_archive_metrics)


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
