"""``/games``: create, list and view games."""

from __future__ import annotations

from typing import Any

from flask import current_app, request
from flask_smorest import Blueprint

from domain.cards import InvalidCard
from domain.state import Phase
from service.api.common import (
    HEAD_DOC,
    IDEMPOTENCY_DOC,
    NO_STORE,
    OPTIONAL_BEARER_DOC,
    etag,
    head_headers,
    idempotency,
    json_response,
    replayed,
    service,
    snapshot_view,
    token,
)
from service.api.links import AFTER_CREATE
from service.api.problems import BODY, Problem, documented
from service.api.rate_limits import (
    all_bots,
    create_cost,
    player_key,
    preset_deals,
    rate_limited,
    seats_a_bot,
    spends_storage,
)
from service.api.schemas import (
    CreatedSchema,
    CreateGameSchema,
    GameListSchema,
    GamesQuerySchema,
    SeatViewSchema,
)
from service.app.auth import join_code
from service.app.deal_plan import DealPlan
from service.app.expiry import anonymous_head_start
from service.app.game_service import game_id_for_key, new_game_id, parse_deals
from service.app.players import is_player_key

blp = Blueprint("games", __name__, url_prefix="/api/v1/games", description="Create and view games")


@blp.route("", methods=["POST"])
@blp.doc(operationId="createGame")
@blp.arguments(CreateGameSchema())
@blp.response(201, CreatedSchema, description="The game; Location points at it")
@documented(blp, *BODY, 401, 409, 503)
@blp.doc(security=OPTIONAL_BEARER_DOC)
@spends_storage(blp, create_cost)
@rate_limited(blp, "bot_games", unless=lambda: not all_bots())
@rate_limited(blp, "bot_seats", unless=lambda: not seats_a_bot())
@rate_limited(blp, "preset_deals", unless=lambda: not preset_deals(), cost=preset_deals)
@rate_limited(
    blp,
    "preset_deals_key",
    unless=lambda: not preset_deals() or player_key() is None,
    cost=preset_deals,
)
@rate_limited(blp, "create")  # the first mark applied documents the 429
@blp.doc(parameters=[IDEMPOTENCY_DOC], responses={201: {"links": AFTER_CREATE}})
def create_game(body: dict[str, Any]):
    """Create a game: rule options, seats (open or a bot), optional seed and explicit deals.

    A game with every seat a bot is limited further: per client address
    (HEARTS_RATE_LIMIT_BOT_GAMES, on top of HEARTS_RATE_LIMIT_CREATE: 429 rate-limited) and in
    play at once on the whole server (HEARTS_MAX_BOT_GAMES: 503 bot-games-full, with
    Retry-After). A game with any bot seated counts against HEARTS_RATE_LIMIT_BOT_SEATS too.
    A score_limit above the most (500) is 422 invalid-rules naming it. Preset deals count, one
    a deal, against HEARTS_RATE_LIMIT_PRESET_DEALS per client address and, with a player's key,
    per key too (429 rate-limited).

    ``"private": true`` makes a private table: in no listing, its seats taken only with the
    join code this answer gives once (``join_code``; ``invitation`` is the web table's link
    carrying it). With an Idempotency-Key the code is derived from the key (a retry gets it
    back), so that key must then be unguessable (422 idempotency-key-guessable)."""
    try:
        deals = parse_deals(body["deals"] or ())
    except InvalidCard as error:
        raise Problem("invalid-card", f"deals: {error}") from None
    plan = DealPlan(body["seed"], deals)
    # A creator known by a player's key keeps its waiting game HEARTS_WAITING_GAME_TTL; an
    # anonymous one's expires after HEARTS_ANONYMOUS_WAITING_GAME_TTL (issue 42). A key that
    # no longer works is 401 before anything is stored, rather than a silently shorter wait.
    creator_key = token()
    keyed = creator_key is not None and is_player_key(creator_key)
    if keyed:
        current_app.extensions["hearts.players"].authenticate(creator_key)
    key = request.headers.get("Idempotency-Key")
    # A created game's id comes from the key, so a retry lands on the same game and record.
    game_id = game_id_for_key(key) if key is not None else new_game_id()
    # A private table's join code: from the key if any, so a retry gets the same one back.
    code = join_code(game_id, key) if body["private"] else None
    outcome = service().create(
        game_id,
        rules=body["rules"],
        seats=body["seats"],
        plan=plan,
        idempotency=idempotency(game_id, None),  # None without a key; a bad key is 400
        join_code=code,
    )
    state = outcome.state
    if not keyed and not outcome.replayed and state.phase is Phase.WAITING:
        settings = current_app.extensions["hearts.settings"]
        service().wait_earlier(
            outcome.game_id,
            anonymous_head_start(settings.waiting_game_ttl, settings.anonymous_waiting_game_ttl),
        )
    created = {
        "id": outcome.game_id,
        "version": outcome.version,
        "seats": [
            {"seat": i, "name": seat.name, "bot": seat.bot} for i, seat in enumerate(state.seats)
        ],
        "private": code is not None,
    }
    if code is not None:
        created["join_code"] = code
        created["invitation"] = f"/#/invite/{outcome.game_id}/{code}"
    location = f"/api/v1/games/{outcome.game_id}"
    # A private table's answer holds its join code: no cache may keep it.
    headers = {"Location": location, **replayed(outcome), **(NO_STORE if code else {})}
    return json_response(created, 201, version=outcome.version, headers=headers)


@blp.route("", methods=["GET"])
@blp.doc(operationId="listGames")
@blp.arguments(GamesQuerySchema(), location="query")
@blp.response(200, GameListSchema)
@documented(blp, 400, 422)
def list_games(query: dict[str, Any]):
    """Games, oldest first; filter by phase (``status``), by a player's name (games played
    here: an imported game is nobody's), by whether the creator chose the deals (``arranged``),
    by whether the game was imported from an export (``imported``) and by whether anyone still
    plays (``active``). A game of the page that cannot be read (a damaged archived object) is
    named in ``damaged`` (present only then), and the others are listed."""
    idle = current_app.extensions["hearts.settings"].lobby_idle_seconds
    found, cursor, damaged = service().list_games(
        status=query.get("status"),
        player=query.get("player"),
        arranged=query.get("arranged"),
        imported=query.get("imported"),
        limit=query["limit"],
        cursor=query.get("cursor"),
        idle_after=idle if query.get("active") and idle else None,
    )
    # A tournament round's tables are not listed while the round is in play (their boards).
    hidden = current_app.extensions["hearts.tournaments"].hidden_games(
        [snap.state.state.game_id for snap in found]
    )
    body: dict[str, Any] = {
        "games": [
            snapshot_view(snap, None) for snap in found if snap.state.state.game_id not in hidden
        ],
        "next_cursor": cursor,
    }
    if damaged:  # named, not served: GET /games/{id} answers its 409 corrupt-game
        body["damaged"] = [{"id": game_id, "detail": why} for game_id, why in damaged]
    return json_response(body)


@blp.route("/<game_id>", methods=["GET"])
@blp.doc(operationId="getGame")
@blp.response(
    200,
    SeatViewSchema,
    description="A seat's view with a token, else the public view (without the seat's fields)",
    headers=HEAD_DOC,
)
@blp.alt_response(
    304,
    description="Not modified: If-None-Match named the current ETag of this view: the version "
    'for the public view ("12"), the version and seat for a seat\'s view ("12.s0")',
)
@documented(blp, 401, 404, 409)
@blp.doc(security=OPTIONAL_BEARER_DOC)
def get_game(game_id: str):
    """The game as anyone sees it, or as your seat sees it with ``Authorization: Bearer``."""
    tok = token()
    svc = service()
    snap = svc.load(game_id)
    seat = svc.seat_of_token(snap, tok) if tok is not None else None
    tag = etag(snap.version, seat)
    if request.headers.get("If-None-Match") in (tag, f"W/{tag}"):
        response = json_response(None, 304, headers={"ETag": tag, **_vary()})
        response.set_data(b"")
        return response
    head = head_headers(game_id, snap.version, snap.last_hash)
    return json_response(snapshot_view(snap, seat), headers={"ETag": tag, **_vary(), **head})


def _vary() -> dict[str, str]:
    return {"Vary": "Authorization"}
