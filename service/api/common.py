"""What every endpoint shares: the service, the caller's token, Idempotency-Key, If-Match, and
the JSON shapes of views and command results."""

from __future__ import annotations

import re
from typing import Any

from flask import Response, current_app, json, request

from domain.clock import clock_view
from domain.views import Contribution, NextDeal, Served, public_view, seat_view
from service.api.problems import Problem
from service.app import game_log
from service.app.auth import bearer_token, credential_of
from service.app.game import StoredGame
from service.app.game_service import GameService, Idempotency, Outcome, idempotency_for
from service.app.redaction import disclosure_for, redact_events
from service.app.state_cache import Snapshot
from service.app.transparency import HEAD_HEADER, TransparencyLog

API_PREFIX = "/api/v1"
MAX_IDEMPOTENCY_KEY = 255
# What a key may hold, in one place for the check and the document: printable ASCII (a header
# value's bytes; WSGI reads anything else as Latin-1, which a client may not have meant).
IDEMPOTENCY_KEY_PATTERN = "^[\\x20-\\x7E]+$"
_IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)
# A seat's view is tagged with its seat too ("12.s0"): the same version looks different to
# each viewer, so a cache must not answer one viewer's If-None-Match with another's copy.
_ETAG = re.compile(r'^(?:W/)?"?(\d{1,18})(?:\.s\d{1,2})?"?$')

IDEMPOTENCY_DOC = {
    "in": "header",
    "name": "Idempotency-Key",
    "required": False,
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_IDEMPOTENCY_KEY,
        "pattern": IDEMPOTENCY_KEY_PATTERN,
    },
    "description": "A retry with the same key and body returns the first response and appends "
    "nothing; the same key with another body is 422. Remembered 24 h.",
}
JOIN_IDEMPOTENCY_DOC = {
    **IDEMPOTENCY_DOC,
    "schema": {
        "type": "string",
        "minLength": 22,
        "maxLength": MAX_IDEMPOTENCY_KEY,
        "pattern": "^[A-Za-z0-9_=-]+$",
    },
    "description": "A retry with the same key and body returns the first response, the same "
    "token included, and appends nothing; the same key with another body is 422. Whoever "
    "repeats the key gets the token, so it must be unguessable: 22+ random base64url characters "
    "(128 bits) or a UUIDv4, else 422 idempotency-key-guessable. Remembered 24 h.",
}
IF_MATCH_DOC = {
    "in": "header",
    "name": "If-Match",
    "required": False,
    "schema": {"type": "string"},
    "description": 'The game version (ETag) the command was chosen at, e.g. "12"; 412 if stale.',
}
# An answer that carries a token must never be kept by a browser or proxy cache.
NO_STORE = {"Cache-Control": "no-store"}
NO_STORE_DOC = {
    "Cache-Control": {
        "description": "no-store: the body carries a bearer token",
        "schema": {"type": "string", "enum": ["no-store"]},
    }
}
BEARER_DOC = [{"bearerAuth": []}]
# A token is optional: without one the caller sees what the public sees.
OPTIONAL_BEARER_DOC = [{}, {"bearerAuth": []}]


def service() -> GameService:
    return current_app.extensions["hearts"]


def token() -> str | None:
    return bearer_token(request.headers.get("Authorization"))


def actor(tok: str | None) -> str:
    return credential_of(tok) if tok is not None else "anonymous"


def idempotency(game_id: str, tok: str | None) -> Idempotency | None:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if len(key) > MAX_IDEMPOTENCY_KEY or not _IDEMPOTENCY_KEY.fullmatch(key):
        raise Problem(
            "bad-request",
            f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} printable ASCII characters",
            status=400,
        )
    return idempotency_for(
        key, game_id, actor(tok), request.method, request.path, request.get_data(cache=True)
    )


def if_match() -> int | None:
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    match = _ETAG.match(raw.strip())
    if match is None:
        raise Problem("bad-request", 'If-Match must be a game version, e.g. "12"', status=400)
    return int(match.group(1))


def etag(version: int, seat: int | None = None) -> str:
    """The version, and for a seat's view the seat: If-Match accepts either form."""
    return f'"{version}"' if seat is None else f'"{version}.s{seat}"'


def view_dict(snap_state: StoredGame, version: int, seat: int | None) -> dict[str, Any]:
    """The JSON view (``domain.views.VIEWS``): the domain's view of the state, then what the
    service keeps beside it."""
    state = snap_state.state
    view = public_view(state) if seat is None else seat_view(state, seat)
    out = view.to_dict()
    # The next hand's deal (issue 21): the server's seed committed for it, and the players'
    # contributions so far; null in a game whose creator chose its deals.
    committed = snap_state.committed
    ahead = committed is not None and committed.hand_number == state.hand_number + 1
    served = Served(
        version=version,
        # The creator chose the deals (a seed or explicit deals): anyone who knows them can
        # know every hand, so every viewer is told (the web table shows a badge).
        arranged=not snap_state.plan.empty,
        imported=snap_state.imported,
        imported_from=snap_state.imported_from,
        # The turn clock (domain/clock.py): each seat's deadline and reserve, so a client
        # draws a countdown without asking again; null for a game without one.
        clock=clock_view(snap_state.clock, state),
        next_deal=NextDeal(
            hand_number=committed.hand_number,
            seed_commitment=committed.seed_commitment,
            contributions=tuple(Contribution(s, text) for s, text in state.contributions),
        )
        if ahead and committed is not None and snap_state.plan.empty
        else None,
    )
    out.update(served.to_dict())
    return out


def snapshot_view(snap: Snapshot[StoredGame], seat: int | None) -> dict[str, Any]:
    return view_dict(snap.state, snap.version, seat)


def json_response(
    body: Any, status: int = 200, *, version: int | None = None, headers: dict | None = None
) -> Response:
    response = Response(json.dumps(body), status=status, mimetype="application/json")
    if version is not None:
        response.headers["ETag"] = etag(version)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


HEAD_DOC = {
    HEAD_HEADER: {
        "description": "The head this answer reflects (the game's version and the chain hash of "
        "that event), signed by the server: base64 of a C2SP signed note (docs/verify.md). Keep "
        "the latest; POST /api/v1/games/{id}/verify checks the log still extends it.",
        "schema": {"type": "string"},
    }
}


def transparency() -> TransparencyLog:
    return current_app.extensions["hearts.log"]


def head_headers(game_id: str, version: int, chain_hash: str | None) -> dict[str, str]:
    """The signed ``Hearts-Head`` header of an answer about the game at ``version``."""
    if version < 1 or not chain_hash:
        return {}
    return {HEAD_HEADER: transparency().head(game_id, version, chain_hash)}


def command_result(outcome: Outcome, seat: int) -> Response:
    """``{"version", "view", "events"}``: the seat's view now, and what the request appended."""
    disclosure = disclosure_for(outcome.state, seat, outcome.table.plan.seed is not None)
    body = {
        "version": outcome.version,
        "view": view_dict(outcome.table, outcome.version, seat),
        "events": redact_events(game_log.entries(outcome.events), disclosure, outcome.hand_before),
    }
    last = outcome.events[-1] if outcome.events else None
    head = (
        head_headers(outcome.game_id, outcome.version, last.hash)
        if last is not None and last.seq == outcome.version
        else {}
    )
    return json_response(body, version=outcome.version, headers={**replayed(outcome), **head})


def replayed(outcome: Outcome) -> dict[str, str]:
    return {"Idempotent-Replayed": "true"} if outcome.replayed else {}
