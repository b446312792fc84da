"""``/games/{id}/pass``, ``/play``, ``/moon``: a seat's moves, authenticated by its token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask_smorest import Blueprint

from domain.cards import Card, InvalidCard
from domain.commands import ChooseMoonScoring, Command, ContributeSeed, PassCards, PlayCard
from domain.rules import MoonScoring
from domain.state import GameState
from service.api.common import (
    BEARER_DOC,
    HEAD_DOC,
    IDEMPOTENCY_DOC,
    IF_MATCH_DOC,
    command_result,
    idempotency,
    if_match,
    service,
    token,
)
from service.api.links import AFTER_MOVE
from service.api.problems import BODY, TOKEN, Problem, documented
from service.api.rate_limits import command_cost, rate_limited, spends_storage
from service.api.schemas import (
    CommandResultSchema,
    ContributionSchema,
    MoonSchema,
    PassSchema,
    PlaySchema,
)
from service.app.auth import Forbidden, seat_of
from service.app.errors import DealsArranged

blp = Blueprint("commands", __name__, url_prefix="/api/v1/games", description="Pass, play, choose")

_DOC = {
    "parameters": [IDEMPOTENCY_DOC, IF_MATCH_DOC],
    "security": BEARER_DOC,
    "responses": {200: {"links": AFTER_MOVE}},
}

# Request schemas are given as instances: given a class, webargs builds a schema (copying every
# field) on each request. Schemas hold no per-request state (marshmallow 4 has no context).


@blp.route("/<game_id>/pass", methods=["POST"])
@blp.doc(operationId="passCards")
@blp.arguments(PassSchema())
@blp.response(200, CommandResultSchema, headers=HEAD_DOC)
@documented(blp, *BODY, *TOKEN, 404, 409, 412)
@spends_storage(blp, command_cost)
@rate_limited(blp, "command")
@blp.doc(**_DOC)
def pass_cards(body: dict[str, Any], game_id: str):
    """Pass cards (``{"cards": ["QS", "AH", "KH"]}``); empty declines where passing is optional."""
    cards = tuple(_card(text) for text in body["cards"])
    return _act(game_id, body, lambda seat: lambda state: PassCards(seat, cards))


@blp.route("/<game_id>/play", methods=["POST"])
@blp.doc(operationId="playCard")
@blp.arguments(PlaySchema())
@blp.response(200, CommandResultSchema, headers=HEAD_DOC)
@documented(blp, *BODY, *TOKEN, 404, 409, 412)
@spends_storage(blp, command_cost)
@rate_limited(blp, "command")
@blp.doc(**_DOC)
def play(body: dict[str, Any], game_id: str):
    """Play a card (``{"card": "QS"}``)."""
    card = _card(body["card"])
    return _act(game_id, body, lambda seat: lambda state: PlayCard(seat, card))


@blp.route("/<game_id>/moon", methods=["POST"])
@blp.doc(operationId="chooseMoonScoring")
@blp.arguments(MoonSchema())
@blp.response(200, CommandResultSchema, headers=HEAD_DOC)
@documented(blp, *BODY, *TOKEN, 404, 409, 412)
@spends_storage(blp, command_cost)
@rate_limited(blp, "command")
@blp.doc(**_DOC)
def moon(body: dict[str, Any], game_id: str):
    """After shooting the moon where the shooter chooses: ``add_to_others`` or
    ``subtract_from_shooter``."""
    choice = MoonScoring(body["choice"])
    return _act(game_id, body, lambda seat: lambda state: ChooseMoonScoring(seat, choice))


_CONTRIBUTION = ContributionSchema()


@blp.route("/<game_id>/contribution", methods=["POST"])
@blp.doc(operationId="contributeSeed")
@blp.arguments(_CONTRIBUTION)
@blp.response(200, CommandResultSchema, headers=HEAD_DOC)
@documented(blp, *BODY, *TOKEN, 404, 409, 412)
@spends_storage(blp, command_cost)
@rate_limited(blp, "command")
@blp.doc(**_DOC)
def contribute(body: dict[str, Any], game_id: str):
    """Add your own seed to the next hand's shuffle (one per seat per hand): the server's seed
    for that hand is committed before (the view's ``next_deal``), so neither the server nor any
    one player can choose the deal. The web table and the client contribute for you. Not in a
    game whose creator chose its deals (409 ``deals-arranged``)."""
    if not service().snapshot(game_id).state.plan.empty:
        raise DealsArranged("this game's creator chose its deals: contributions would not count")

    def make(seat: int) -> Callable[[GameState], Command]:
        def command(state: GameState) -> Command:
            number = body["hand_number"] or state.hand_number + 1
            return ContributeSeed(seat, number, body["seed"])

        return command

    return _act(game_id, body, make)


def _card(text: str) -> Card:
    try:
        return Card(text)
    except InvalidCard as error:
        raise Problem("invalid-card", str(error)) from None


def _act(game_id: str, body: dict[str, Any], make: Callable[[int], Callable[[GameState], Command]]):
    svc = service()
    tok = token()
    # The game as this process last saw it costs no round trip; the append checks its version.
    # A token it does not know (or no cached game) is judged on the game as it is.
    snap = svc.cached(game_id)
    seat = seat_of(snap.state.state.seats, tok) if snap is not None and tok is not None else None
    checked = seat is None
    if seat is None:
        snap = svc.snapshot(game_id)
        seat = svc.seat_of_token(snap, tok)
    if "seat" in body and body["seat"] != seat:
        raise Forbidden(f"your token is for seat {seat}, not seat {body['seat']}")
    outcome = svc.command(
        game_id,
        seat,
        make(seat),
        if_match=if_match(),
        idempotency=idempotency(game_id, tok),
        snap=snap,
        checked=checked,
        token=tok,
    )
    return command_result(outcome, seat)
