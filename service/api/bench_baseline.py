"""The ceiling of this stack for ``bench/api.py``: a POST that does one XADD and nothing else.

Registered by ``create_app`` only when ``HEARTS_BENCH_BASELINE=1``, so it runs in the same app,
behind the same hooks and gunicorn config as the real endpoints. The stream is capped (approximate
MAXLEN) so a long benchmark cannot fill Redis.
"""

from __future__ import annotations

from flask import Blueprint, request

from service.api.common import json_response, service

ENV_FLAG = "HEARTS_BENCH_BASELINE"
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
