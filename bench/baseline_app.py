"""bench/api.py's and bench/capacity.py's app: the production app plus its ceilings.

- ``POST /api/v1/bench/xadd`` (bench/api.py): one XADD and nothing else.
- The minimal fan-out (bench/capacity.py): ``POST /api/v1/bench/fanout/<table>`` with
  ``{"seq": n}`` appends one entry (one XADD, id ``0-n``) to the table's stream, and
  ``GET /api/v1/bench/fanout/<table>/events`` follows that stream as Server-Sent Events, one
  ``XREAD BLOCK`` after another on a Redis connection of its own, each entry sent as
  ``data: {"seq": n}``. No views, no redaction, no hub: the least a live table can cost on this
  stack (the same gunicorn/gevent workers), what the live path is measured against.

``hearts serve --app bench.baseline_app:create_app`` runs it, so the ceilings sit in the same
app, behind the same hooks and gunicorn config as the real endpoints; the production app has no
such routes. The streams are capped (approximate MAXLEN) so a long benchmark cannot fill Redis.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import redis
from flask import Blueprint, Flask, Response, current_app, request

from service.api.common import json_response, service
from service.api.factory import create_app as create_production_app
from service.api.problems import Problem
from service.settings import Settings

MAX_ENTRIES = 100_000
FANOUT_MAX_ENTRIES = 10_000
# A fan-out stream ends by itself: every loop of a benchmark is bounded.
FANOUT_LIFETIME = 900.0
FANOUT_BLOCK_MS = 1000

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


def _fanout_key(table: str) -> str:
    return f"{service().store.prefix}:bench-fanout:{table}"


@bp.post("/api/v1/bench/fanout/<table>")
def fanout_post(table: str):
    body = request.get_json(silent=True)
    seq = body.get("seq") if isinstance(body, dict) else None
    # A move's number is a positive integer (bool is an int to Python, not to JSON readers).
    if not isinstance(seq, int) or isinstance(seq, bool) or not 1 <= seq < 2**63:
        raise Problem("bad-request", 'the body must be {"seq": n}, n a positive integer')
    # The id is the move's number: one XADD, and Redis refuses a move out of order.
    try:
        service().store.redis.xadd(
            _fanout_key(table),
            {"seq": seq},
            id=f"0-{seq}",
            maxlen=FANOUT_MAX_ENTRIES,
            approximate=True,
        )
    except redis.ResponseError:
        raise Problem("bad-request", f"move {seq} is not after the table's last") from None
    return json_response({"version": seq})


@bp.get("/api/v1/bench/fanout/<table>/events")
def fanout_events(table: str):
    url = current_app.extensions["hearts.settings"].redis_url
    key = _fanout_key(table)

    def stream() -> Iterator[str]:
        follower = redis.Redis.from_url(url)  # a connection per stream: XREAD BLOCK holds it
        last = "0-0"
        deadline = time.monotonic() + FANOUT_LIFETIME
        try:
            yield "retry: 2000\n\n"
            while time.monotonic() < deadline:
                answer = follower.xread({key: last}, block=FANOUT_BLOCK_MS, count=100)
                for _, entries in answer:
                    for entry_id, _fields in entries:
                        last = entry_id.decode()
                        seq = int(last.split("-")[1])
                        yield f"id: {seq}\ndata: {json.dumps({'seq': seq})}\n\n"
                if not answer:
                    yield ": keep-alive\n\n"  # a write that finds a client gone ends the stream
        finally:
            follower.close()

    response = Response(stream(), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    return response


def create_app(settings: Settings | None = None) -> Flask:
    app = create_production_app(settings)
    app.register_blueprint(bp)
    return app
