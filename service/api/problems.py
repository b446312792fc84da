"""Every error as an RFC 9457 problem (``application/problem+json``), from one handler.

``type`` is ``/problems/<code>`` (relative to the server; ``GET /problems/<code>`` describes it),
stable per rule broken; ``code`` repeats the last segment for clients that switch on it. A rule
violation maps by its ``kind``: conflict with the game's state 409, malformed command 422, no
such game 404. Nothing a client sends may end in a 500: anything unexpected is logged and
answered as ``internal-error`` without details.
"""

from __future__ import annotations

import http
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis
import redis.exceptions as redis_errors
from flask import Flask, Response, has_request_context, json, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound

from bots import UnknownBot
from domain.cards import InvalidCard
from domain.errors import ALL_VIOLATIONS, RuleViolation
from domain.tournament.errors import TOURNAMENT_VIOLATIONS
from service.api.schemas import PROBLEM_DOC
from service.app import errors as app_errors
from service.app.auth import Forbidden, Unauthorized
from service.app.export import ImportRefused
from service.app.tournaments import BoardsHidden, TooManyTournaments
from service.offload import OffloadFailed
from service.store.append import writes_refused
from service.store.blobs import BlobStoreError
from service.store.errors import CorruptStore, IdempotencyKeyReused, NotReplicated
from service.store.outage import Outage

log = logging.getLogger(__name__)

# Requests failed because Redis is gone, or refuses writes: an outage is a few lines of this
# process's log (one when it goes, a summary a minute, one when it is back), never one per
# request (service/store/outage.py). back_if_answering() notices the return.
REDIS_DOWN = Outage(log, "requests", is_outage=lambda error: True)  # _UNAVAILABLE said so
WRITES_REFUSED = Outage(
    log,
    "requests",
    dependency="Redis's writes",
    is_outage=lambda error: True,
    advice="Redis refuses writes (out of memory under maxmemory, a read-only replica, a failed "
    "save): see its log and INFO; docs/operations.md, Redis",
)
_CHECK_EVERY = 1.0  # while an outage lasts, Redis is pinged at most this often to see it back
_next_check = 0.0

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "/problems/"

KIND_STATUS = {"conflict": 409, "invalid": 422, "not-found": 404, "forbidden": 403}


@dataclass(frozen=True, slots=True)
class ProblemType:
    code: str
    status: int
    title: str
    description: str = ""

    @property
    def type(self) -> str:
        return TYPE_PREFIX + self.code


class Problem(Exception):
    """Raise anywhere in a request to answer with this problem."""

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        status: int | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        known = CATALOGUE.get(code)
        self.code = code
        self.detail = detail
        self.status = status or (known.status if known else 400)
        self.title = known.title if known else _title(code)
        self.headers = headers or {}
        self.extra = extra


def _title(code: str) -> str:
    return code.replace("-", " ").capitalize()


_HTTP = [
    ProblemType(
        "malformed-json",
        400,
        "Malformed JSON",
        "The body is not valid JSON, or not JSON that every reader reads alike (RFC 7493): a "
        "name twice in one object, NaN or Infinity, a number past a double's range.",
    ),
    ProblemType("bad-request", 400, "Bad request", "The request is malformed."),
    # Input hygiene (service/api/hygiene.py): refused before any view reads the request.
    ProblemType(
        "json-too-deep",
        400,
        "JSON nested too deep",
        "Arrays and objects nest at most 32 levels in a request body.",
    ),
    ProblemType(
        "uri-too-long",
        414,
        "Request line too long",
        "The request line (method, path and query) is at most 8,190 bytes.",
    ),
    ProblemType(
        "headers-too-large",
        431,
        "Header fields too large",
        "At most 100 header fields, each at most 8,190 bytes.",
    ),
    ProblemType(
        "invalid-unicode",
        422,
        "Not Unicode text",
        "A string in the body holds a lone surrogate (e.g. \\ud800); 'errors' names each field.",
    ),
    ProblemType("invalid-cursor", 400, "Invalid cursor", "The cursor is not one this API gave."),
    ProblemType(
        "invalid-event-id",
        400,
        "Not an event id",
        "Last-Event-ID and after name where a stream or page resumes, as the stream numbered it: "
        "a game's event seq (a whole number from 0 to 2^63-1), a player notice's id "
        "('<n>-<m>', each part from 0 to 2^64-1). Nothing was read.",
    ),
    ProblemType(
        "too-many-streams",
        429,
        "Too many open streams",
        "This client holds as many open live event streams as it may; close one, or retry "
        "after Retry-After seconds.",
    ),
    ProblemType(
        "streams-full",
        503,
        "Streams full",
        "The server holds as many open live event streams as it may; retry after Retry-After.",
    ),
    ProblemType(
        "bot-games-full",
        503,
        "Games of bots full",
        "The server plays as many games with no person seated as it allows at once "
        "(HEARTS_MAX_BOT_GAMES); seat a person, or retry after Retry-After seconds.",
    ),
    ProblemType(
        "unauthorized",
        401,
        "Missing or invalid token",
        "Send 'Authorization: Bearer <token>' with the token your seat got when joining.",
    ),
    ProblemType(
        "forbidden",
        403,
        "Not your seat",
        "The token is valid but belongs to another seat than the one acted for.",
    ),
    ProblemType("not-found", 404, "Not found", "No such resource."),
    ProblemType("method-not-allowed", 405, "Method not allowed"),
    ProblemType(
        "precondition-failed",
        412,
        "Stale version",
        "If-Match named a version other than the game's current one; reload and retry.",
    ),
    ProblemType("body-too-large", 413, "Body too large", "The request body exceeds the limit."),
    ProblemType(
        "unsupported-media-type", 415, "Unsupported media type", "Send application/json bodies."
    ),
    ProblemType(
        "validation-error",
        422,
        "Invalid request",
        "The body does not match the schema; 'errors' names each field.",
    ),
    ProblemType("invalid-card", 422, "Not a card", "Write cards like 2C, 10H, QS or Q♠."),
    ProblemType("unknown-bot", 422, "Unknown bot", "Name a bot strategy the server has."),
    ProblemType(
        "name-reserved",
        422,
        "Name reserved",
        "Bots are known by their strategy's name: a player may not take one.",
    ),
    ProblemType(
        "player-name-taken",
        409,
        "Name registered",
        "A registered player holds this name (or one that compares equal: case, width and "
        "spacing folded): it cannot be registered again, nor taken at a table without its key.",
    ),
    ProblemType(
        "deals-arranged",
        409,
        "Deals arranged",
        "The game's creator chose its deals (a seed or explicit deals): contributions to the "
        "shuffle are not taken.",
    ),
    ProblemType(
        "too-many-tournaments",
        409,
        "Too many tournaments",
        "You organise as many upcoming or running tournaments as one player may.",
    ),
    ProblemType(
        "tournament-boards-hidden",
        403,
        "Boards hidden",
        "A table game of a tournament round still in play: only its own seats may read it "
        "until every table has finished the round (docs/tournaments.md).",
    ),
    ProblemType(
        "seek-not-found",
        404,
        "No such seek",
        "You have no seek with this id (seeks are only ever shown to the player who posted them).",
    ),
    ProblemType(
        "already-seeking",
        409,
        "Already seeking",
        "You already wait for a table of this kind: cancel that seek, or wait for it.",
    ),
    ProblemType(
        "too-many-seeks",
        429,
        "Too many seeks",
        "So many seeks from your address wait already (HEARTS_SEEKS_PER_ADDRESS): wait for "
        "one to be paired, or cancel it.",
    ),
    ProblemType(
        "invalid-seek",
        422,
        "Invalid seek",
        "The seek names no table the service deals: an unknown preset or time control, a "
        "rating range whose lower bound is above its upper, or no clock (time_control off: a "
        "matched game is rated, and a rated game always has a clock).",
    ),
    ProblemType(
        "challenge-not-found",
        404,
        "No such challenge",
        "No challenge to or from you has this id (a challenge is shown only to its two "
        "players), or it ended over an hour ago.",
    ),
    ProblemType(
        "challenge-not-yours",
        403,
        "Not your answer",
        "Only the challenged player accepts or declines a challenge; only its challenger "
        "cancels it.",
    ),
    ProblemType(
        "challenge-expired",
        409,
        "Challenge expired",
        "The challenge was not answered in time (HEARTS_CHALLENGE_TTL): send a new one.",
    ),
    ProblemType(
        "challenge-answered",
        409,
        "Challenge answered",
        "The challenge was accepted, declined or cancelled already: it is answered once.",
    ),
    ProblemType(
        "too-many-challenges",
        429,
        "Too many challenges",
        "So many of your challenges wait for an answer (HEARTS_CHALLENGES_OPEN): cancel one, "
        "or wait for it to be answered or to expire.",
    ),
    ProblemType(
        "invalid-challenge",
        422,
        "Invalid challenge",
        "A challenge goes to another registered player: not to yourself, not to a bot.",
    ),
    ProblemType(
        "idempotency-key-reused",
        422,
        "Idempotency key reused",
        "This Idempotency-Key was used for a different request; use a fresh key.",
    ),
    ProblemType(
        "join-code-invalid",
        403,
        "Join code invalid",
        "The table is private: a seat is taken with its invitation's join code (join_code), "
        "and this request sent none or another one. Each try counts against the join limit.",
    ),
    ProblemType(
        "idempotency-key-guessable",
        422,
        "Idempotency key guessable",
        "A join's Idempotency-Key gives the seat's token back to whoever repeats it, so it must "
        "be unguessable: at least 22 random base64url characters (128 bits) or a UUIDv4.",
    ),
    ProblemType(
        "seed-guessable",
        422,
        "Seed guessable",
        "A game's chosen seed must be unguessable (at least 22 random base64url characters, "
        "128 bits, or a UUIDv4): once a hand is scored its cards let anyone test guesses of the "
        "seed and deal every hand to come. Reuse such a seed for reproducible games.",
    ),
    ProblemType(
        "idempotency-receipt-unreadable",
        409,
        "Idempotency record damaged",
        "The stored record of this Idempotency-Key's first join no longer opens, so its token "
        "cannot be returned again; nothing was changed. Join under a new name or key.",
    ),
    ProblemType(
        "too-many-conflicts",
        503,
        "Too busy",
        "The game changed under the command too many times in a row; retry.",
    ),
    ProblemType(
        "rate-limited",
        429,
        "Too many requests",
        "Over a rate limit (games created, joins, imports or streams opened per address; "
        "commands per token): retry after the Retry-After seconds.",
    ),
    ProblemType(
        "unavailable",
        503,
        "Service unavailable",
        "The event store cannot be reached, or refuses writes for now (out of memory, a "
        "read-only replica, a failed save), or the archive store that holds ended games and "
        "the public log's tiles does not answer; nothing was written. Retry after Retry-After.",
    ),
    ProblemType(
        "not-replicated",
        503,
        "Not confirmed by replicas",
        "The move was recorded on the primary but fewer replicas than HEARTS_MIN_REPLICAS "
        "confirmed it in time; a failover could still lose it. Retry with the same "
        "Idempotency-Key to learn whether it stands.",
    ),
    ProblemType("internal-error", 500, "Internal error", "A bug: the server logged it."),
    ProblemType("hand-not-found", 404, "No such hand", "That hand has not been dealt."),
    ProblemType("event-not-found", 404, "No such event", "The game has no event with that seq."),
    ProblemType(
        "game-in-progress",
        409,
        "Game in progress",
        "A game is exported once it is finished: until then the export would show hidden cards.",
    ),
    ProblemType(
        "hand-in-progress",
        409,
        "Hand in progress",
        "A hand is analysed once it is scored: during play an analysis would be a cheating aid.",
    ),
    ProblemType(
        "analysis-not-started",
        404,
        "No analysis",
        "Nobody has asked for this hand's analysis yet: POST to the same URL to start it.",
    ),
    ProblemType(
        "analyses-busy",
        503,
        "Analyses busy",
        "This server has as many analyses waiting as it takes; retry after Retry-After.",
    ),
    ProblemType(
        "long-work-busy",
        503,
        "Long work busy",
        "This worker has as many long requests (audits, exports, imports, long reads) waiting "
        "as it takes, or you have as many in flight as one client may; retry after Retry-After.",
    ),
    ProblemType("invalid-export", 422, "Not an export", "The body is not a hearts-game-export."),
    ProblemType(
        "unsupported-export-version",
        422,
        "Unsupported export version",
        "The export's format_version is not one this server reads.",
    ),
    ProblemType(
        "export-fails-audit",
        422,
        "Export fails its audit",
        "The export's events fail the audit ('discrepancies' lists them); nothing was imported.",
    ),
    ProblemType(
        "corrupt-game",
        409,
        "Damaged game log",
        "The game's stored log cannot be read (an event missing, altered or unreadable), so "
        "the game cannot be shown or played; GET /api/v1/games/{id}/audit names the damage.",
    ),
]

_DOMAIN_TITLES = {
    "not-your-turn": "Not your turn",
    "must-follow-suit": "You must follow suit",
    "hearts-not-broken": "Hearts are not broken",
    "card-not-in-hand": "Card not in hand",
    "wrong-phase": "Not now",
    "must-lead-lowest-club": "You must lead the lowest club",
    "no-points-on-first-trick": "No points on the first trick",
    "must-play-queen": "You must play the queen of spades",
    "game-not-found": "No such game",
    "name-taken": "Name taken",
    "name-confusable": "Name looks like another",
    "invalid-name": "Name not allowed",
}

CATALOGUE: dict[str, ProblemType] = {p.code: p for p in _HTTP}
for _cls in ALL_VIOLATIONS + TOURNAMENT_VIOLATIONS:
    if _cls.code not in CATALOGUE:
        CATALOGUE[_cls.code] = ProblemType(
            _cls.code,
            KIND_STATUS.get(_cls.kind, 409),
            _DOMAIN_TITLES.get(_cls.code, _title(_cls.code)),
            (_cls.__doc__ or "").strip() or "A rule of the game forbids this command.",
        )

# The application's refusals (service/app/errors.py) as HTTP statuses: the one mapping table.
# A subclass not listed gets its nearest listed base's status.
SERVICE_STATUS: dict[type[app_errors.ServiceError], int] = {
    app_errors.GameNotFound: 404,
    app_errors.GameAlreadyExists: 409,
    app_errors.CorruptGame: 409,
    app_errors.StaleVersion: 412,
    app_errors.TooManyConflicts: 503,
    app_errors.WritesUnavailable: 503,
    app_errors.IdempotencyKeyReused: 422,
    app_errors.ReceiptUnreadable: 409,
    app_errors.NameReserved: 422,
    app_errors.GuessableIdempotencyKey: 422,
    app_errors.JoinCodeInvalid: 403,
    app_errors.GuessableSeed: 422,
    app_errors.PlayerNameTaken: 409,
    app_errors.InvalidDeal: 422,
    app_errors.InvalidCursor: 400,
    app_errors.InvalidEventId: 400,
    app_errors.TooManyStreams: 429,
    app_errors.StreamsFull: 503,
    app_errors.BotGamesFull: 503,
    app_errors.HandNotFound: 404,
    app_errors.EventNotFound: 404,
    app_errors.GameInProgress: 409,
    app_errors.InvalidHead: 422,  # the transparency log (service/api/transparency.py)
    app_errors.HeadNotExtended: 409,
    app_errors.NotInLog: 404,
    app_errors.TileNotFound: 404,
    app_errors.BadTreeSize: 400,
    app_errors.InvalidCosignature: 422,
    app_errors.HandInProgress: 409,
    app_errors.AnalysisNotStarted: 404,
    app_errors.AnalysesBusy: 503,
    app_errors.LongWorkBusy: 503,
    app_errors.DealsArranged: 409,
    app_errors.SeekNotFound: 404,
    app_errors.AlreadySeeking: 409,
    app_errors.TooManySeeks: 429,
    app_errors.InvalidSeek: 422,
    app_errors.ChallengeNotFound: 404,
    app_errors.ChallengedPlayerNotFound: 404,
    app_errors.ChallengeNotYours: 403,
    app_errors.ChallengeExpired: 409,
    app_errors.ChallengeAnswered: 409,
    app_errors.TooManyChallenges: 429,
    app_errors.InvalidChallenge: 422,
    ImportRefused: 422,
    TooManyTournaments: 409,  # service/app/tournaments.py
    BoardsHidden: 403,
    app_errors.ServiceError: 400,
}


def _service_problem(error: app_errors.ServiceError) -> Problem:
    status = next(s for cls, s in SERVICE_STATUS.items() if isinstance(error, cls))
    headers = {}
    retry_after = getattr(error, "retry_after_seconds", None)
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    extra: dict[str, Any] = {}
    if isinstance(error, ImportRefused) and error.report is not None:
        extra["discrepancies"] = [d.to_dict() for d in error.report.discrepancies]
    if isinstance(error, app_errors.HeadNotExtended):
        extra.update(seq=error.seq, expected_hash=error.expected, found_hash=error.found)
    return Problem(error.code, error.detail, status=status, headers=headers, **extra)


_HTTP_CODES = {
    400: "bad-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    412: "precondition-failed",
    413: "body-too-large",
    414: "uri-too-long",
    415: "unsupported-media-type",
    422: "validation-error",
    429: "rate-limited",
    431: "headers-too-large",
}


# Routing's own answers (no route; a route without that method) say where the paths are,
# instead of Werkzeug's text for a person typing a URL; a view's own 404 keeps its detail.
_ROUTING_DETAILS = {
    NotFound.description: "No operation at this path: the API's paths are in "
    "/api/v1/openapi.json (and shown at /api/v1/docs).",
    MethodNotAllowed.description: "This path does not take that method: its methods are in "
    "the Allow header.",
}


def to_problem(error: BaseException) -> Problem:
    """The problem answering ``error``."""
    if isinstance(error, Problem):
        return error
    if isinstance(error, RuleViolation):
        return Problem(error.code, error.message, status=KIND_STATUS.get(error.kind, 409))
    if isinstance(error, app_errors.ServiceError):
        return _service_problem(error)
    if isinstance(error, InvalidCard):
        return Problem("invalid-card", str(error))
    if isinstance(error, UnknownBot):
        return Problem("unknown-bot", str(error))
    if isinstance(error, Unauthorized):
        return Problem(
            "unauthorized", error.detail, headers={"WWW-Authenticate": 'Bearer realm="hearts"'}
        )
    if isinstance(error, Forbidden):
        return Problem("forbidden", error.detail)
    if isinstance(error, CorruptStore):  # the store found a stream it did not write like that
        return Problem("corrupt-game", f"{error}: see the game's audit")
    if isinstance(error, IdempotencyKeyReused):
        return Problem(
            "idempotency-key-reused", "this Idempotency-Key was used for a different request"
        )
    if isinstance(error, HTTPException):
        return _from_http(error)
    if isinstance(error, NotReplicated):
        log.error("append not replicated: %s", error)
        return Problem("not-replicated", str(error), headers={"Retry-After": "1"})
    if isinstance(error, redis_errors.ResponseError) and writes_refused(error) is not None:
        # A write outside the event store's appends (a lock, a read model): still nothing
        # half-done that a retry would not redo.
        WRITES_REFUSED.failed(error)
        return Problem(
            "unavailable",
            "the event store refuses writes for now; retry",
            headers={"Retry-After": "5"},
        )
    if isinstance(error, OffloadFailed):  # the long-work process died (service/offload.py)
        log.error("long work failed: %s", error)
        return Problem(
            "unavailable",
            "the server could not finish this request; retry",
            headers={"Retry-After": "1"},
        )
    if isinstance(error, BlobStoreError):
        # The archive store did not answer (service/store/blob_guard.py logs the outage once,
        # not per request): archived games and tiles answer again when it is back.
        retry = getattr(error, "retry_after", 5)
        return Problem(
            "unavailable",
            "the archive store cannot be reached now (archived games and the public log's "
            "tiles are read from it); retry",
            headers={"Retry-After": str(retry)},
        )
    if isinstance(error, _UNAVAILABLE):
        REDIS_DOWN.failed(error)
        return Problem(
            "unavailable", "the event store cannot be reached; retry", headers={"Retry-After": "1"}
        )
    log.exception("unhandled error", exc_info=error)
    return Problem("internal-error", "the server failed to handle this request", status=500)


def back_if_answering(method: str, status: int, ping: Callable[[], Any]) -> None:
    """After a request: while an outage is on, whether it is over (one line if so). Redis is
    back once it answers a PING (tried at most once a second); its writes, once a write
    request succeeded."""
    global _next_check
    if WRITES_REFUSED.down and method in ("POST", "PUT", "PATCH", "DELETE") and status < 300:
        WRITES_REFUSED.ok()
    if not REDIS_DOWN.down or time.monotonic() < _next_check:
        return
    _next_check = time.monotonic() + _CHECK_EVERY
    try:
        ping()
    except Exception:  # still gone: the next failed request counts it
        return
    REDIS_DOWN.ok()


# The store cannot answer now, and may soon: a node down, or a cluster slot failing over to a
# replica (CLUSTERDOWN, TRYAGAIN during a migration, a slot no live master serves yet).
_UNAVAILABLE = (
    redis.ConnectionError,
    redis.TimeoutError,
    redis_errors.ClusterError,
    redis_errors.TryAgainError,
    redis_errors.SlotNotCoveredError,
    redis_errors.AskError,  # and MOVED: the slot moved more times than the client follows
)


# Where webargs found what failed its schema, as the problem's detail names it.
_LOCATIONS = {"json": "the body", "query": "the query", "headers": "a header", "path": "the path"}


def _located(messages: object) -> str:
    places = (
        [_LOCATIONS.get(str(k), str(k)) for k in messages] if isinstance(messages, dict) else []
    )
    places = places or ["the body"]
    return f"{' and '.join(places)} {'does' if len(places) == 1 else 'do'} not match"


def _from_http(error: HTTPException) -> Problem:
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    messages = data.get("messages") or data.get("errors")
    if status in (400, 422) and messages:
        # webargs: a body that fails its schema (or JSON it could not parse).
        errors = messages.get("json", messages) if isinstance(messages, dict) else messages
        if status == 400:
            return Problem("malformed-json", "the body is not valid JSON", status=400)
        return Problem("validation-error", f"{_located(messages)} the schema", errors=errors)
    code = _HTTP_CODES.get(status, "internal-error" if status >= 500 else "bad-request")
    detail = _ROUTING_DETAILS.get(error.description or "", error.description)
    detail = detail or CATALOGUE[code].title
    headers = {}
    if status == 405 and hasattr(error, "valid_methods") and error.valid_methods:
        headers["Allow"] = ", ".join(error.valid_methods)
    return Problem(code, detail, status=status, headers=headers)


def problem_response(problem: Problem) -> Response:
    body: dict[str, Any] = {
        "type": TYPE_PREFIX + problem.code,
        "title": problem.title,
        "status": problem.status,
        "detail": problem.detail,
        "code": problem.code,
    }
    if has_request_context():
        body["instance"] = request.path
    body.update(problem.extra)
    response = Response(json.dumps(body), status=problem.status, mimetype=PROBLEM_JSON)
    for name, value in problem.headers.items():
        response.headers[name] = value
    return response


def handle(error: BaseException) -> Response:
    return problem_response(to_problem(error))


def register(app: Flask) -> None:
    """Answer every error raised in a request with a problem."""
    app.register_error_handler(Exception, handle)
    app.register_error_handler(HTTPException, handle)


def describe(code: str) -> dict[str, Any] | None:
    """The catalogue entry behind ``/problems/<code>``."""
    known = CATALOGUE.get(code)
    if known is None:
        return None
    return {
        "type": known.type,
        "code": known.code,
        "status": known.status,
        "title": known.title,
        "description": known.description,
    }


# -- the problems in the OpenAPI document ---------------------------------------------------------

# Any operation may fail on a bug (500) or an unreachable event store (503), or be refused for a
# request line (414) or header fields (431) too long (service/api/hygiene.py); a JSON body may be
# malformed (400), too large (413), not JSON (415) or not match its schema (422); a token may be
# missing or bad (401) or another seat's (403).
ANY = (414, 431, 500, 503)
BODY = (400, 413, 415, 422)
TOKEN = (401, 403)


def documented(blp: Any, *statuses: int) -> Callable[[Callable], Callable]:
    """Document that an operation answers ``statuses`` with a problem (problem+json)."""

    def describe(status: int) -> str:
        return (
            f"{http.HTTPStatus(status).phrase}: a problem; its code names the rule "
            "(GET /problems lists every type)"
        )

    def decorate(view: Callable) -> Callable:
        first, *rest = sorted(set(statuses) | set(ANY))
        # One alt_response, its entry copied for the other statuses: each alt_response wraps
        # the view once more (a call a request, ~8 an operation) and deep-copies its docs
        # (a tenth of the service's import time); the document is the same.
        view = blp.alt_response(
            first, schema=PROBLEM_DOC, content_type=PROBLEM_JSON, description=describe(first)
        )(view)
        responses = view._apidoc["response"]["responses"]
        for status in rest:
            entry = {**responses[first][-1], "description": describe(status)}
            responses.setdefault(status, []).append(entry)
        return view

    return decorate
