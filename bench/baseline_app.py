"""bench/api.py's app: the production app plus its ceiling, a POST that does one XADD and nothing
else.

``hearts serve --app bench.baseline_app:create_app`` runs it, so the ceiling sits in the same app,
behind the same hooks and gunicorn config as the real endpoints; the production app has no such
route. The stream is capped (approximate MAXLEN) so a long benchmark cannot fill Redis.
"""

from __future__ import annotations

from flask import Blueprint, Flask, request

from service.api.common import json_response, service
from service.api.factory import create_app as create_production_app
from service.settings import Settings

MAX_ENTRIES = 100_000

bp = Blueprint("bench_baseline", __name__)


@bp.post("/api/v1/bench/xadd")
def xadd():
    store = service().store
    entry = store.redis.xadd(
        f"{store.prefix}:bench-baseline",
        {"body": request.get_data()},
        maxlen=MAX_ENTRIES,
        approximate=True,
    )
    return json_response({"id": entry.decode() if isinstance(entry, bytes) else entry})


def create_app(settings: Settings | None = None) -> Flask:
    app = create_production_app(settings)
    app.register_blueprint(bp)
    return app
