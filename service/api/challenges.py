"""``/challenges``: a registered player challenges another, named, to a private game (issue 44).

The use cases are ``service/app/challenges.py``'s; both players authenticate with their key
(``Authorization: Bearer hp_...``). Sending one counts against the sender's key
(HEARTS_RATE_LIMIT_CHALLENGE) besides the per-address limit of every request with a key.
"""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask_smorest import Blueprint

from domain.clock import iso
from service.api import storage_costs
from service.api.common import BEARER_DOC, NO_STORE, NO_STORE_DOC, json_response, token, view_dict
from service.api.players import players
from service.api.problems import BODY, documented
from service.api.rate_limits import rate_limited, spends_storage
from service.api.schemas import (
    AcceptedChallengeSchema,
    ChallengeAnswerSchema,
    ChallengeListSchema,
    ChallengeSchema,
    EmptySchema,
)
from service.app.challenges import Challenges
from service.app.players import Player
from service.store.challenges import Challenge

blp = Blueprint("challenges", __name__, url_prefix="/api/v1", description="Challenges")


def challenges() -> Challenges:
    return current_app.extensions["hearts.challenges"]


def challenge_body(challenge: Challenge, player: Player) -> dict[str, Any]:
    names = {challenge.challenger_id: challenge.challenger}
    names[challenge.challenged_id] = challenge.challenged
    return {
        "id": challenge.id,
        "state": challenges().state_of(challenge),
        "challenger": challenge.challenger,
        "challenged": challenge.challenged,
        "direction": "outgoing" if player.player_id == challenge.challenger_id else "incoming",
        "rules": challenge.rules,
        "seats": [
            {"seat": i, "name": names.get(who, who), "bot": who not in names}
            for i, who in enumerate(challenge.seats)
        ],
        "your_seat": challenge.seat_of(player.player_id),
        "created": iso(challenge.created),
        "expires": iso(challenge.expires),
        "answered": iso(challenge.answered) if challenge.answered is not None else None,
        "game_id": challenge.game_id,
    }


@blp.route("/challenges", methods=["POST"])
@blp.doc(operationId="createChallenge", security=BEARER_DOC)
@blp.arguments(ChallengeSchema)
@blp.response(201, ChallengeAnswerSchema, description="The challenge, open")
@documented(blp, *BODY, 401, 404)
@spends_storage(blp, storage_costs.CHALLENGE)
@rate_limited(blp, "challenge")
@rate_limited(blp, "account")
def create_challenge(body: dict[str, Any]):
    """Challenge a registered player, by name, to a private game of ``rules`` (as a game's
    create takes them): the two of you in seats dealt at random, bots in the others. It waits
    for the other's answer and expires unanswered after HEARTS_CHALLENGE_TTL seconds; so many
    of yours wait at once (HEARTS_CHALLENGES_OPEN; beyond: 429 too-many-challenges)."""
    player = players().authenticate(token())
    challenge = challenges().create(player, body["to"], body["rules"])
    headers = {"Location": f"/api/v1/challenges/{challenge.id}", **NO_STORE}
    return json_response(challenge_body(challenge, player), 201, headers=headers)


@blp.route("/challenges", methods=["GET"])
@blp.doc(operationId="listChallenges", security=BEARER_DOC)
@blp.response(200, ChallengeListSchema)
@documented(blp, 401)
@rate_limited(blp, "account")
def list_challenges():
    """Your challenges, incoming and outgoing, newest first (an ended one for an hour)."""
    player = players().authenticate(token())
    found = [challenge_body(c, player) for c in challenges().of_player(player)]
    return json_response({"challenges": found}, headers=NO_STORE)


@blp.route("/challenges/<challenge_id>", methods=["GET"])
@blp.doc(operationId="getChallenge", security=BEARER_DOC)
@blp.response(200, ChallengeAnswerSchema)
@documented(blp, 401, 403, 404, 409, 422)
@rate_limited(blp, "account")
def get_challenge(challenge_id: str):
    """A challenge to or from you as it is now: once ``accepted``, its game and your seat."""
    player = players().authenticate(token())
    challenge = challenges().get(player, challenge_id)
    return json_response(challenge_body(challenge, player), headers=NO_STORE)


@blp.route("/challenges/<challenge_id>/accept", methods=["POST"])
@blp.doc(operationId="acceptChallenge", security=BEARER_DOC)
@blp.arguments(EmptySchema)
@blp.response(200, AcceptedChallengeSchema, description="The game, and your seat's token")
@documented(blp, *BODY, 401, 403, 404, 409, 412)
@spends_storage(blp, storage_costs.CREATE_WITH_BOT)  # its game is created, seated
@rate_limited(blp, "account")
@blp.doc(responses={200: {"headers": NO_STORE_DOC}})
def accept_challenge(body: dict[str, Any], challenge_id: str):
    """Accept a challenge to you: its private game is created with both of you seated, and
    the answer carries your seat's token (shown once). The challenger takes its own with
    ``POST /games/{game_id}/seats/{seat}/resume``. Someone else's answer is 403
    challenge-not-yours; too late, 409 challenge-expired; twice, 409 challenge-answered."""
    player = players().authenticate(token())
    challenge = challenges().accept(player, challenge_id)
    seat = challenge.seat_of(player.player_id)
    assert challenge.game_id is not None and seat is not None  # accepted: both are set
    outcome = players().resume(challenge.game_id, seat, token())
    answer = {
        "challenge": challenge_body(challenge, player),
        "seat": seat,
        "token": outcome.token,
        "version": outcome.version,
        "view": view_dict(outcome.table, outcome.version, seat),
    }
    return json_response(answer, version=outcome.version, headers=NO_STORE)


@blp.route("/challenges/<challenge_id>/decline", methods=["POST"])
@blp.doc(operationId="declineChallenge", security=BEARER_DOC)
@blp.arguments(EmptySchema)
@blp.response(200, ChallengeAnswerSchema)
@documented(blp, *BODY, 401, 403, 404, 409)
@rate_limited(blp, "account")
def decline_challenge(body: dict[str, Any], challenge_id: str):
    """Decline a challenge to you (only the challenged player may)."""
    player = players().authenticate(token())
    challenge = challenges().decline(player, challenge_id)
    return json_response(challenge_body(challenge, player), headers=NO_STORE)


@blp.route("/challenges/<challenge_id>/cancel", methods=["POST"])
@blp.doc(operationId="cancelChallenge", security=BEARER_DOC)
@blp.arguments(EmptySchema)
@blp.response(200, ChallengeAnswerSchema)
@documented(blp, *BODY, 401, 403, 404, 409)
@rate_limited(blp, "account")
def cancel_challenge(body: dict[str, Any], challenge_id: str):
    """Withdraw a challenge you sent, not answered yet (only its challenger may)."""
    player = players().authenticate(token())
    challenge = challenges().cancel(player, challenge_id)
    return json_response(challenge_body(challenge, player), headers=NO_STORE)
