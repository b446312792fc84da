"""Replay, audit, export and resume: the log as a product.

- ``GET /games/{id}/events?after=N``: the events after seq N as the caller may see them (the
  public, or the seat of the bearer token; see service/app/redaction.py). With
  ``Accept: text/event-stream``: Server-Sent Events, live, ``id:`` = seq, resumable with
  ``Last-Event-ID``, a keep-alive comment every ``Settings.sse_keepalive_seconds`` (15), ending
  with an ``end`` event when the game ends (or after ``Settings.sse_max_seconds``, 3600, when the
  client reconnects with its Last-Event-ID like after any drop). Open streams are bounded per
  client address and per worker (429 too-many-streams, 503 streams-full); a stream waits in the
  process's live hub (service/store/live.py), holding no Redis connection.
- ``GET /games/{id}/hands/{n}``: a hand's complete record (what the caller may see while in play).
- ``GET /games/{id}/state?at=SEQ``: the view after event SEQ (time travel), public or seat.
- ``GET /games/{id}/export`` (``?format=text``) of a finished game; ``POST /games/import``.
- ``GET /games/{id}/audit``: the audit report.
- ``GET /games/{id}/resume``: with the token, the seat's view and the next action expected.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Response, current_app, g, request, stream_with_context
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from domain.state import GameState, Phase
from domain.views import awaiting, seat_view
from service.api import long_work
from service.api.common import (
    BEARER_DOC,
    IDEMPOTENCY_DOC,
    OPTIONAL_BEARER_DOC,
    actor,
    etag,
    json_response,
    service,
    token,
    view_dict,
)
from service.api.departures import Departures
from service.api.event_ids import MAX_SEQ, SeqParameter, game_seq
from service.api.problems import BODY, documented
from service.api.rate_limits import client, import_cost, rate_limited, spends_storage
from service.api.schemas import (
    AuditSchema,
    EventsPageSchema,
    ExportSchema,
    HandSchema,
    ImportedSchema,
    ResumeSchema,
    SeatViewSchema,
)
from service.app.auth import credential_of
from service.app.errors import EventNotFound
from service.app.game import StoredGame
from service.app.live import StreamSlots
from service.app.replay import Replay, Stream
from service.app.replay_text import render_hand
from service.app.state_cache import Snapshot
from service.store.kept_audits import KeptAudits
from service.store.live import LiveHub

blp = Blueprint(
    "replay",
    __name__,
    url_prefix="/api/v1/games",
    description="Replay, follow live, audit, export/import and resume games",
)

EVENT_STREAM = "text/event-stream"
MAX_IMPORT_BYTES = 8 * 1024 * 1024  # a long game exports to a few hundred kB
EVENTS_PAGE = 1000
TEXT = {"type": "string"}  # the schema of a text body (an event stream, a rendered hand)


class EventsQuery(Schema):
    after = SeqParameter(
        load_default="0",
        metadata={
            "description": "Only the events after this seq (default 0); not a seq: 400 "
            "invalid-event-id.",
            "minimum": 0,
            "maximum": MAX_SEQ,
        },
    )
    limit = fields.Integer(load_default=EVENTS_PAGE, validate=validate.Range(1, EVENTS_PAGE))


class StreamHeaders(Schema):
    last_event_id = fields.String(
        data_key="Last-Event-ID",
        metadata={
            "description": "A live stream resumes after this seq (an EventSource sends it when "
            "it reconnects); it overrides ``after``. Not a seq: 400 invalid-event-id."
        },
    )


class StateQuery(Schema):
    at = fields.Integer(required=True, validate=validate.Range(min=1))


class FormatQuery(Schema):
    format = fields.String(load_default="json", validate=validate.OneOf(["json", "text"]))


# -- who asks -------------------------------------------------------------------------------------


def _viewer(snap: Snapshot[StoredGame]) -> int | None:
    """The seat of the bearer token (401 if the token is not one of this game's), else None."""
    tok = token()
    return service().seat_of_token(snap, tok) if tok is not None else None


# -- the log, and the live stream -----------------------------------------------------------------


@blp.route("/<game_id>/events", methods=["GET"])
@blp.doc(operationId="listEvents")
@blp.arguments(EventsQuery, location="query")
@blp.arguments(StreamHeaders, location="headers")
@blp.doc(security=OPTIONAL_BEARER_DOC)
@blp.response(200, EventsPageSchema, description="The events (JSON), or a live stream")
@blp.alt_response(200, schema=TEXT, content_type=EVENT_STREAM, description="Server-Sent Events")
@blp.alt_response(204, description="The stream asked for has nothing more to send, ever")
@documented(blp, 400, 401, 404, 409, 422, 429)
@rate_limited(blp, "stream", unless=lambda: not wants_stream())
def events(query: dict[str, Any], headers: dict[str, Any], game_id: str):
    """The game's events after ``after``, redacted for the caller; SSE with
    ``Accept: text/event-stream`` (resume with ``Last-Event-ID``).

    A live stream sends a ``: keep-alive`` comment every HEARTS_SSE_KEEPALIVE seconds while
    nothing happens. Open streams are bounded per client address
    (HEARTS_SSE_MAX_STREAMS_PER_CLIENT: 429 too-many-streams) and per worker
    (HEARTS_SSE_MAX_STREAMS: 503 streams-full), both with Retry-After. An ``after`` or
    ``Last-Event-ID`` that is not an event seq is 400 invalid-event-id."""
    after = game_seq("after", query["after"], 0)
    svc = service()
    snap = svc.snapshot(game_id)
    viewer = _viewer(snap)
    if wants_stream():
        after = game_seq("Last-Event-ID", headers.get("last_event_id"), after)
        # A seat's stream ends when its token stops working (a resume): what it proved, when.
        proved = (credential_of(token() or ""), snap.version) if viewer is not None else None
        return _sse_response(Replay(svc.store), game_id, viewer, after, snap.version, proved)
    current = svc.snapshot(game_id)  # at least as new as the events read next
    now, limit = current.state.state, min(query["limit"], long_work.page())
    # The page and the fold before it (what it may reveal): in the worker if that is a page of
    # the log at most, else a long-work job (issue 33).
    if min(current.version, after + limit) <= long_work.page():
        page = Replay(svc.store).events(game_id, viewer, now, after, limit, current.version)
    else:
        page = long_work.work().events(game_id, viewer, now, after, limit, current.version)
    body = {
        "id": game_id,
        "version": page.version,
        "phase": page.phase.value,
        "events": page.items,
        "next_after": page.next_after,
        "more": page.more,
    }
    return json_response(body, version=page.version, headers={"Vary": "Authorization, Accept"})


def wants_stream() -> bool:
    """Only an Accept that names text/event-stream (and prefers it) gets the stream: JSON is
    the default, also for ``*/*``."""
    accept = request.accept_mimetypes
    named = any(value == EVENT_STREAM and quality > 0 for value, quality in accept)
    return named and accept.best_match(["application/json", EVENT_STREAM]) == EVENT_STREAM


def _stream_start(
    replay: Replay,
    game_id: str,
    viewer: int | None,
    after: int,
    version: int,
    proved: tuple[str, int] | None,
) -> Stream | None:
    """A live stream's start with a page of its backlog: in the worker if that reads a page of
    the log at most, else a long-work job (the fold up to ``after`` comes back with it).
    ``proved``: the seat's credential and the seq it was proved at (see Follower)."""
    page = long_work.page()
    credential, since = proved if proved is not None else (None, 0)
    if min(version, after + page) <= page:
        return replay.stream(game_id, viewer, after, page, credential, since)
    return long_work.work().stream(game_id, viewer, after, page, credential, since)


def _sse_response(
    replay: Replay,
    game_id: str,
    viewer: int | None,
    after: int,
    version: int,
    proved: tuple[str, int] | None = None,
) -> Response:
    settings = current_app.extensions["hearts.settings"]
    keepalive, lifetime = settings.sse_keepalive_seconds, settings.sse_max_seconds
    hub: LiveHub = current_app.extensions["hearts.live"]
    slots: StreamSlots = current_app.extensions["hearts.stream_slots"]
    # Counted from here until the response is closed (the client gone, or the stream's end).
    slot = slots.take(client())
    try:
        start = _stream_start(replay, game_id, viewer, after, version, proved)
        if start is None:
            # Nothing more will ever come: 204 tells an EventSource to stop reconnecting.
            slot.release()
            return Response(status=204)
        departures: Departures = current_app.extensions["hearts.departures"]
        sock = request.environ.get("gunicorn.socket")
        stream = sse_stream(
            replay,
            hub,
            game_id,
            start,
            keepalive,
            lifetime,
            lambda cancel: departures.watch(sock, cancel),
            page=long_work.page(),
        )
    except BaseException:
        slot.release()
        raise
    return event_stream(stream, slot.release)


def event_stream(stream: Iterator[str], release: Callable[[], None]) -> Response:
    """A live stream's response. The WSGI server closes it when the stream ends or its client
    is gone (the stream saw it, or a write failed): the generator's cleanup runs
    (GeneratorExit) and ``release`` gives the stream's slot back, also for a stream that never
    started."""
    response = Response(stream_with_context(stream), mimetype=EVENT_STREAM)
    response.call_on_close(release)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # a proxy in front must not buffer the stream
    return response


def sse_message(item: dict[str, Any]) -> str:
    return f"id: {item['seq']}\ndata: {json.dumps(item, separators=(',', ':'))}\n\n"


def sse_stream(
    replay: Replay,
    hub: LiveHub,
    game_id: str,
    start: Stream,
    keepalive: float,
    lifetime: float,
    on_client_gone: Callable[[Callable[[], None]], Callable[[], None]] | None = None,
    *,
    page: int | None = None,
) -> Iterator[str]:
    """The live stream: the backlog first, then each new event as it is appended.

    Waits in the process's live hub (service/store/live.py: one XREAD per partition for every
    followed game, no Redis connection per stream; under the gevent worker a parked greenlet,
    not a thread), sending a comment line every ``keepalive`` seconds without events so proxies
    and clients see the line alive. ``on_client_gone(cancel)`` arranges for ``cancel`` to be
    called when the client has gone (service/api/departures.py) and returns what undoes that.
    ``page``: the most events read at once; after a full page the next is read at once (the
    backlog of a stream far behind), not waited for.
    The watch is closed however the generator ends: the game over, its lifetime up, the client
    gone, or closed (GeneratorExit) by the server when a write failed.
    """
    now = time.monotonic()
    deadline = now + lifetime
    follower, after, new = start.follower, start.after, start.backlog
    last = new[-1].seq if new else after
    yield f"retry: 2000\n: hearts events of {game_id} after {after}\n\n"
    quiet_until = now + keepalive  # the next keep-alive, unless an event comes first
    with hub.watch(game_id, last) as watch:
        forget = on_client_gone(watch.cancel) if on_client_gone is not None else None
        try:
            while True:
                full = page is not None and len(new) >= page  # more may be there already
                cut = follower.superseded_at(new)
                if cut is not None:
                    new = new[:cut]  # nothing the old token may no longer see
                if new:
                    # One write for all the events that came together (one socket send each
                    # costs the most of a follower's event: bench/README.md, issue 36).
                    yield "".join(sse_message(item) for item in follower.items(new))
                    after = new[-1].seq
                    quiet_until = time.monotonic() + keepalive
                if cut is not None:
                    # The token was superseded (a resume): it reconnects to a 401.
                    yield f"event: revoked\ndata: {json.dumps({'version': after})}\n\n"
                    return
                if follower.state.phase is Phase.FINISHED:
                    winners = list(follower.state.winners)
                    end = {"reason": "finished", "version": after, "winners": winners}
                    yield f"event: end\ndata: {json.dumps(end)}\n\n"
                    return
                if follower.state.phase is Phase.EXPIRED:
                    end = {"reason": "expired", "version": after}
                    yield f"event: end\ndata: {json.dumps(end)}\n\n"
                    return
                now = time.monotonic()
                if now >= deadline:
                    # Bounded lifetime: the client reconnects with Last-Event-ID, loses nothing.
                    yield f"event: reconnect\ndata: {json.dumps({'after': after})}\n\n"
                    return
                if now >= quiet_until:
                    yield ": keep-alive\n\n"
                    quiet_until = now + keepalive
                if full:
                    new = replay.next_page(game_id, after, page or 0)
                else:
                    new = replay.wait(watch, after, min(quiet_until, deadline) - now)
                if watch.cancelled:
                    return  # the client has gone
        finally:
            if forget is not None:
                forget()


# -- hands, time travel ---------------------------------------------------------------------------


@blp.route("/<game_id>/hands/<int:number>", methods=["GET"])
@blp.doc(operationId="getHand")
@blp.arguments(FormatQuery, location="query")
@blp.doc(security=OPTIONAL_BEARER_DOC)
@blp.response(200, HandSchema, description="The hand's record (JSON, or text with ?format=text)")
@blp.alt_response(200, schema=TEXT, content_type="text/plain", description="?format=text")
@documented(blp, 401, 404, 409, 422)
def hand(query: dict[str, Any], game_id: str, number: int):
    """Hand ``number`` in full once it is finished; while in play, what the caller may see."""
    svc = service()
    snap = svc.snapshot(game_id)
    viewer = _viewer(snap)
    # A hand's record reads the whole log: in the worker only if that is a page at most.
    if snap.version <= long_work.page():
        version, record = Replay(svc.store).hand(game_id, number, viewer)
    else:
        version, record = long_work.work().hand(game_id, number, viewer)
    if query["format"] == "text":
        return Response(render_hand(record) + "\n", mimetype="text/plain")
    return json_response(
        {"id": game_id, "version": version, **record.to_dict()},
        version=version,
        headers={"Vary": "Authorization"},
    )


@blp.route("/<game_id>/state", methods=["GET"])
@blp.doc(operationId="getStateAt")
@blp.arguments(StateQuery, location="query")
@blp.doc(security=OPTIONAL_BEARER_DOC)
@blp.response(200, SeatViewSchema, description="The public or seat view after event ``at``")
@documented(blp, 401, 404, 409, 422)
def state_at(query: dict[str, Any], game_id: str):
    """The game as it stood after event ``at``: the same view ``GET /games/{id}`` gave then."""
    svc = service()
    snap = svc.snapshot(game_id)
    viewer = _viewer(snap)
    at = query["at"]
    if at > snap.version:
        raise EventNotFound(game_id, snap.version, at)
    # Folded from the start up to ``at``: in the worker if that is a page at most.
    if at <= long_work.page():
        table = Replay(svc.store).state_at(game_id, at)
    else:
        table = long_work.work().state_at(game_id, at)
    return json_response(
        view_dict(table, at, viewer), version=at, headers={"Vary": "Authorization"}
    )


# -- audit, export, import ------------------------------------------------------------------------


@blp.route("/<game_id>/audit", methods=["GET"])
@blp.doc(operationId="auditGame")
@blp.response(200, AuditSchema, description="The audit report; ok is false on any discrepancy")
@documented(blp, 404, 409)  # 409 corrupt-game: an entry the store cannot even read
@rate_limited(blp, "long_reads")
def audit(game_id: str):
    """Re-verify the whole log: hash chain, seed commitments, deals, every event re-decided.
    The clean audit of a game that is over is computed once and kept (its log cannot change)."""
    kept = KeptAudits(service().store)
    head = _over_at(game_id)
    if head is not None:
        report = kept.get(game_id, head[1])
        if report is not None and report.get("last_seq") == head[0]:
            return json_response(report, version=head[0])
    report, last_seq = long_work.work().audit(game_id)
    if head is not None and last_seq == head[0]:
        kept.put(game_id, head[1], report)
    return json_response(report, version=last_seq)


def _over_at(game_id: str) -> tuple[int, str] | None:
    """The version and head hash of a game that is over (it can change no more), as this
    worker has it; None for a game in play, or one it cannot fold (the audit says why)."""
    try:
        snap = service().snapshot(game_id)
    except Exception:  # noqa: BLE001 - a damaged log is what the audit is for: it reads it
        return None
    if snap.state.state.phase not in (Phase.FINISHED, Phase.EXPIRED):
        return None
    return snap.version, snap.last_hash


@blp.route("/<game_id>/export", methods=["GET"])
@blp.doc(operationId="exportGame")
@blp.arguments(FormatQuery, location="query")
@blp.response(200, ExportSchema, description="The export document (JSON), or its text form")
@blp.alt_response(200, schema=TEXT, content_type="text/plain", description="?format=text")
@documented(blp, 404, 409, 422)
@rate_limited(blp, "long_reads")
def export(query: dict[str, Any], game_id: str):
    """The whole game as one self-contained document, once it is finished."""
    text = query["format"] == "text"
    body, version = long_work.work().export(game_id, text)
    filename = f"hearts-{game_id}"
    if text:
        response = Response(body, mimetype="text/plain")
        response.headers["Content-Disposition"] = f'inline; filename="{filename}.txt"'
        return response
    response = Response(body, mimetype="application/json")
    response.headers["ETag"] = etag(version)
    response.headers["Content-Disposition"] = f'inline; filename="{filename}.json"'
    return response


@blp.before_app_request
def _import_body_limit() -> None:
    # Runs before the app's own hooks: an export is larger than a command body.
    if request.method == "POST" and request.path == "/api/v1/games/import":
        request.max_content_length = MAX_IMPORT_BYTES


@blp.route("/import", methods=["POST"])
@blp.doc(operationId="importGame")
@blp.response(201, ImportedSchema, description="The new game; Location points at it")
@blp.alt_response(
    200, schema=ImportedSchema, description="This export was imported before: that game"
)
@documented(blp, *BODY, 409)
@spends_storage(blp, import_cost)
@rate_limited(blp, "import")
@blp.doc(
    parameters=[IDEMPOTENCY_DOC],
    requestBody={"required": True, "content": {"application/json": {"schema": ExportSchema}}},
)
def import_():
    """Import an export as a new game: refused (422) unless it passes the audit. An export
    already imported answers 200 with that game (its id follows from the export's content).
    With an Idempotency-Key, a retry gets the first response and imports nothing."""
    body_bytes = request.get_data(cache=True)
    # The app's hook parsed and checked it, unless the child process does (long_work.py).
    document = g.get("json_body")
    key = request.headers.get("Idempotency-Key")
    body, replayed, existing = long_work.work().import_(body_bytes, document, key, actor(None))
    return _imported(body, replayed, existing)


def _imported(body: dict[str, Any], replayed: bool = False, existing: bool = False) -> Response:
    body = {**body, "imported": True}  # its seats are guests, whatever they are called
    headers = {"Location": f"/api/v1/games/{body['id']}"}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return json_response(body, 200 if existing else 201, version=body["version"], headers=headers)


# -- resume ---------------------------------------------------------------------------------------


@blp.route("/<game_id>/resume", methods=["GET"])
@blp.doc(operationId="resumeGame")
@blp.doc(security=BEARER_DOC)
@blp.response(200, ResumeSchema, description="The seat's view and the action expected next")
@documented(blp, 401, 404, 409)
def resume(game_id: str):
    """Everything a seat needs to carry on after a crash (its own or the server's): its view,
    the action expected of it next, and where to follow the game from."""
    svc = service()
    snap = svc.load(game_id)  # hands the game over if a bot must act (a crash may have lost it)
    tok = token()
    seat = svc.seat_of_token(snap, tok)
    state = snap.state.state
    base = f"/api/v1/games/{game_id}"
    body = {
        "id": game_id,
        "version": snap.version,
        "seat": seat,
        "view": view_dict(snap.state, snap.version, seat),
        "next_action": next_action(state, seat, base),
        "events_url": f"{base}/events?after={snap.version}",
    }
    return json_response(body, version=snap.version, headers={"Vary": "Authorization"})


def next_action(state: GameState, seat: int, base: str = "") -> dict[str, Any]:
    """What ``seat`` must do now, or whom it waits for."""
    phase = state.phase
    if phase is Phase.FINISHED:
        return {"action": "none", "reason": "finished", "winners": list(state.winners)}
    if phase is Phase.EXPIRED:
        return {"action": "none", "reason": "expired"}
    due = awaiting(state)
    if phase is Phase.WAITING:
        return {"action": "wait", "for": list(state.open_seats), "reason": "players to join"}
    if seat in due:
        view = seat_view(state, seat)
        legal = [str(c) for c in view.legal_cards]
        if phase is Phase.PASSING:
            return {
                "action": "pass",
                "cards": view.cards_to_pass,
                "direction": view.public.pass_direction,
                "legal_cards": legal,
                "optional": state.rules.optional_passing,
                "post": f"{base}/pass",
            }
        if phase is Phase.PLAYING:
            return {"action": "play", "legal_cards": legal, "post": f"{base}/play"}
        if phase is Phase.MOON_CHOICE:
            return {
                "action": "choose_moon_scoring",
                "choices": ["add_to_others", "subtract_from_shooter"],
                "post": f"{base}/moon",
            }
    return {"action": "wait", "for": list(due)}
