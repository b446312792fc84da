"""``/players``: register a player, its API key (rotate, revoke), the player's games.

The use cases are ``service/app/players.py``'s; a player authenticates with
``Authorization: Bearer <key>`` (its key starts with ``hp_``).
"""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask_smorest import Blueprint

from domain.views import awaiting
from service.api import storage_costs
from service.api.common import BEARER_DOC, NO_STORE, NO_STORE_DOC, json_response, token
from service.api.problems import BODY, documented
from service.api.rate_limits import rate_limited, spends_storage
from service.api.schemas import (
    AccountKeySchema,
    AccountSchema,
    EmptySchema,
    MyGamesQuerySchema,
    MyGamesSchema,
    RegisterSchema,
)
from service.app.players import Player, PlayerService

blp = Blueprint("players", __name__, url_prefix="/api/v1/players", description="Players")


def players() -> PlayerService:
    return current_app.extensions["hearts.players"]


def _player(player: Player) -> dict[str, Any]:
    return {"id": player.player_id, "name": player.name, "created": player.created}


@blp.route("", methods=["POST"])
@blp.doc(operationId="registerPlayer")
@blp.arguments(RegisterSchema)
@blp.response(201, AccountKeySchema, description="The player and its key (shown only this once)")
@documented(blp, *BODY, 409)
@spends_storage(blp, storage_costs.REGISTER)
@rate_limited(blp, "register")
@blp.doc(responses={201: {"headers": NO_STORE_DOC}})
def register(body: dict[str, Any]):
    """Register a name, held across the service; the answer carries the player's API key."""
    player, key = players().register(body["name"])
    return json_response({**_player(player), "key": key}, 201, headers=NO_STORE)


@blp.route("/me", methods=["GET"])
@blp.doc(operationId="getMe", security=BEARER_DOC)
@blp.response(200, AccountSchema)
@documented(blp, 401)
@rate_limited(blp, "account")
def me():
    """The player whose key authenticates the request."""
    return json_response(_player(players().authenticate(token())))


@blp.route("/me/key", methods=["POST"])
@blp.doc(operationId="rotatePlayerKey", security=BEARER_DOC)
@blp.arguments(EmptySchema)
@blp.response(200, AccountKeySchema, description="The new key (shown only this once)")
@documented(blp, *BODY, 401)
@blp.doc(responses={200: {"headers": NO_STORE_DOC}})
@rate_limited(blp, "account")
def rotate(body: dict[str, Any]):
    """A new key; the one this request was made with stops working at once, and the player
    streams opened with it end within a second (``event: revoked``)."""
    svc = players()
    player = svc.authenticate(token())
    key = svc.rotate(player)
    return json_response({**_player(player), "key": key}, headers=NO_STORE)


@blp.route("/me/key", methods=["DELETE"])
@blp.doc(operationId="revokePlayerKey", security=BEARER_DOC)
@blp.response(200, AccountSchema, description="Revoked: the player has no key now")
@documented(blp, 401)
@rate_limited(blp, "account")
def revoke():
    """Revoke the key: nothing authenticates as this player any more (its name stays held);
    the player streams opened with it end within a second (``event: revoked``). The tokens of
    seats it took keep working."""
    svc = players()
    player = svc.authenticate(token())
    svc.revoke(player)
    return json_response(_player(player))


@blp.route("/me/games", methods=["GET"])
@blp.doc(operationId="listMyGames", security=BEARER_DOC)
@blp.arguments(MyGamesQuerySchema, location="query")
@blp.response(200, MyGamesSchema)
@documented(blp, 401, 422)
@rate_limited(blp, "account")
def my_games(query: dict[str, Any]):
    """The player's games (in play and finished), latest joined first, with its seat in each;
    ``POST /games/{id}/seats/{seat}/resume`` gives that seat's token on this device."""
    svc = players()
    found = svc.my_games(svc.authenticate(token()), query["limit"])
    games = [
        {
            "id": game.state.game_id,
            "seat": game.seat,
            "phase": game.state.phase.value,
            "version": game.snap.version,
            "scores": list(game.state.scores),
            "winners": list(game.state.winners),
            "awaiting": list(awaiting(game.state)),
        }
        for game in found
    ]
    return json_response({"games": games})
