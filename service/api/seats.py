"""``/games/{id}/seats``: join a game; hand a seat to a bot or take it back."""

from __future__ import annotations

from typing import Any

from flask import g, request
from flask_smorest import Blueprint

from domain.commands import ReturnToSeat, SetSeatBot
from service.api import storage_costs
from service.api.common import (
    BEARER_DOC,
    IDEMPOTENCY_DOC,
    IF_MATCH_DOC,
    JOIN_IDEMPOTENCY_DOC,
    NO_STORE,
    NO_STORE_DOC,
    OPTIONAL_BEARER_DOC,
    command_result,
    idempotency,
    if_match,
    json_response,
    replayed,
    service,
    token,
    view_dict,
)
from service.api.links import AFTER_JOIN
from service.api.players import players
from service.api.problems import BODY, TOKEN, Problem, documented
from service.api.rate_limits import command_cost, rate_limited, spends_storage
from service.api.schemas import (
    CommandResultSchema,
    EmptySchema,
    JoinedSchema,
    JoinSchema,
    SeatBotSchema,
)
from service.app.auth import Forbidden
from service.app.game import StoredGame
from service.app.state_cache import Snapshot

blp = Blueprint("seats", __name__, url_prefix="/api/v1/games", description="Join and seats")


@blp.route("/<game_id>/seats", methods=["POST"])
@blp.doc(operationId="joinGame")
@blp.arguments(JoinSchema)
@blp.response(201, JoinedSchema, description="Your seat and its token (shown only this once)")
@documented(blp, *BODY, 401, 403, 404, 409, 412)
@spends_storage(blp, storage_costs.JOIN)
@rate_limited(blp, "join")
@blp.doc(
    parameters=[JOIN_IDEMPOTENCY_DOC],
    responses={201: {"links": AFTER_JOIN, "headers": NO_STORE_DOC}},
    security=OPTIONAL_BEARER_DOC,
)
def join(body: dict[str, Any], game_id: str):
    """Take a seat (the first open one unless ``seat`` is given). The first hand is dealt when
    every seat is filled. With a player's key (``Authorization: Bearer hp_...``) the seat is
    that player's, under its registered name; without one, a guest's.

    A retry with the same Idempotency-Key and body gets the same token back (``replayed``), so
    a join's key must be unguessable (at least 22 random base64url characters, i.e. 128 bits,
    or a UUIDv4; 422 ``idempotency-key-guessable`` otherwise): the token is sealed in the
    receipt under a key derived from the Idempotency-Key, which the server does not keep.

    A private table's seat needs its ``join_code`` (from the invitation): without it or with
    another, 403 join-code-invalid; every try counts against the join limit."""
    key = token()
    outcome = players().join(
        game_id,
        key=key,
        name=body["name"],
        seat=body["seat"],
        idempotency=idempotency(game_id, key),
        join_code=body["join_code"],
    )
    seat = outcome.seat
    assert seat is not None
    joined = {
        "seat": seat,
        "token": outcome.token,
        "version": outcome.version,
        "view": view_dict(outcome.table, outcome.version, seat),
    }
    headers = {
        "Location": f"/api/v1/games/{game_id}",
        # The body holds a bearer token, also when a retry replays it: no cache may keep it.
        **NO_STORE,
        **replayed(outcome),
    }
    return json_response(joined, 201, version=outcome.version, headers=headers)


@blp.route("/<game_id>/seats/<int:seat>/resume", methods=["POST"])
@blp.doc(operationId="resumeSeat", security=BEARER_DOC)
@blp.arguments(EmptySchema)
@blp.response(200, JoinedSchema, description="The seat's new token (shown only this once)")
@documented(blp, *BODY, 401, 403, 404, 409)
@spends_storage(blp, command_cost)  # its SeatResumed event in the game's log
@rate_limited(blp, "account")
@blp.doc(responses={200: {"headers": NO_STORE_DOC}})
def resume(body: dict[str, Any], game_id: str, seat: int):
    """With the player's key: a fresh token for the seat the player joined (to play on from
    another device). The seat's old token stops working, and the event streams opened with it
    end within a second (``event: revoked``)."""
    outcome = players().resume(game_id, seat, token())
    body = {
        "seat": seat,
        "token": outcome.token,
        "version": outcome.version,
        "view": view_dict(outcome.table, outcome.version, seat),
    }
    return json_response(body, version=outcome.version, headers=NO_STORE)


@blp.route("/<game_id>/seats/<int:seat>/bot", methods=["POST"])
@blp.doc(operationId="setSeatBot")
@blp.arguments(SeatBotSchema)
@blp.response(200, CommandResultSchema)
@documented(blp, *BODY, *TOKEN, 404, 409, 412, 503)
@spends_storage(blp, lambda: _hand_over_cost())
@rate_limited(blp, "command")
@rate_limited(blp, "bot_games", unless=lambda: not _hands_over_the_last_person())
@blp.doc(parameters=[IDEMPOTENCY_DOC, IF_MATCH_DOC], security=BEARER_DOC)
def set_bot(body: dict[str, Any], game_id: str, seat: int):
    """Hand your seat to a bot (``{"bot": "random"}``) or take it back (``{"bot": null}``).

    A hand-over that leaves every seat to a bot makes a game of bots only: it counts as one
    (its own rate limit per client address, and the deployment's cap: 503 ``bot-games-full``),
    and its bots play at a person's pace (``HEARTS_BOT_AWAY_PACE``)."""
    svc, tok = service(), token()
    snap = _own_seat(game_id, seat, tok)
    bot = body["bot"]
    if bot is not None:
        from bots import UnknownBot, get_bot

        try:
            get_bot(bot)
        except UnknownBot as error:
            raise Problem("unknown-bot", str(error)) from None
    outcome = svc.command(
        game_id,
        seat,
        lambda state: SetSeatBot(seat, bot),
        if_match=if_match(),
        idempotency=idempotency(game_id, tok),
        snap=snap,
        token=tok,
    )
    return command_result(outcome, seat)


@blp.route("/<game_id>/seats/<int:seat>/back", methods=["POST"])
@blp.doc(operationId="seatBack")
@blp.arguments(EmptySchema)
@blp.response(200, CommandResultSchema)
@documented(blp, *BODY, *TOKEN, 404, 409, 412)
@spends_storage(blp, command_cost)
@rate_limited(blp, "command")
@blp.doc(parameters=[IDEMPOTENCY_DOC, IF_MATCH_DOC], security=BEARER_DOC)
def back(body: dict[str, Any], game_id: str, seat: int):
    """I'm back: take your seat back from the bot that played it while you were away (after
    the turn clock ran out on you ``timeouts_until_away`` times in a row) or that you handed it
    to. 409 ``not-away`` if you are playing it yourself."""
    svc, tok = service(), token()
    snap = _own_seat(game_id, seat, tok)
    outcome = svc.command(
        game_id,
        seat,
        lambda state: ReturnToSeat(seat),
        if_match=if_match(),
        idempotency=idempotency(game_id, tok),
        snap=snap,
        token=tok,
    )
    return command_result(outcome, seat)


def _hands_over_the_last_person() -> bool:
    """Whether this request hands the one seat a person still plays to a bot: it makes a game
    of bots only, counted by the all-bot rate limit like a create of one (issue 42). Read
    before the view, on the game as this process has it; the cap, counted at the append, is
    exact whatever this read missed."""
    body = g.get("json_body")
    args = request.view_args or {}
    if not isinstance(body, dict) or body.get("bot") is None:
        return False
    try:
        state = service().snapshot(str(args["game_id"])).state.state
    except Exception:  # no such game, Redis away...: the view answers that, uncounted
        return False
    seat = args.get("seat")
    if not isinstance(seat, int) or not 0 <= seat < len(state.seats):
        return False
    others = [s for n, s in enumerate(state.seats) if n != seat]
    return state.seats[seat].bot is None and all(s.bot is not None for s in others)


def _hand_over_cost() -> int:
    """A hand-over of the last seat a person plays spends what a game of bots only of its rules
    stores (its bots play the rest at a person's pace, but all of it is stored); any other
    costs as a command."""
    if not _hands_over_the_last_person():
        return command_cost()
    try:
        state = service().snapshot(str((request.view_args or {})["game_id"])).state.state
    except Exception:  # gone since: the view answers that
        return command_cost()
    return storage_costs.bot_game(state.rules)


def _own_seat(game_id: str, seat: int, tok: str | None) -> Snapshot[StoredGame]:
    """The game, if it has ``seat`` and the token is that seat's (404 / 401 / 403 otherwise)."""
    svc = service()
    snap = svc.snapshot(game_id)
    if not 0 <= seat < len(snap.state.state.seats):
        raise Problem("not-found", f"game {game_id} has no seat {seat}", status=404)
    mine = svc.seat_of_token(snap, tok)
    if mine != seat:
        raise Forbidden(f"your token is for seat {mine}, not seat {seat}")
    return snap
