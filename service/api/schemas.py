"""Request and response bodies (marshmallow): requests are validated with them, and the OpenAPI
document at /api/v1/openapi.json is generated from them. Unknown request fields are refused
(422), so a misspelt field never passes silently; responses may grow new fields.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

PHASES = ["waiting", "dealing", "passing", "playing", "moon_choice", "finished"]
MAX_NAME = 64


class SeatSpec(fields.Field):
    """A seat at creation: ``null`` (a person will join) or ``{"bot": "<strategy>"}``."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str | None:
        if value is None:
            return None
        bot = value.get("bot") if isinstance(value, dict) and set(value) == {"bot"} else None
        if isinstance(bot, str) and bot:
            return bot
        raise ValidationError('a seat is null (open) or {"bot": "<strategy>"}')

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return None if value is None else {"bot": value}


CardText = fields.String(metadata={"description": "A card: 2C, TD, QS, AH (10H and Q♠ work)"})


# -- requests ---------------------------------------------------------------------------------


class CreateGameSchema(Schema):
    rules = fields.Dict(
        keys=fields.String(),
        load_default=None,
        allow_none=True,
        metadata={
            "description": 'Rule options: {"preset": "standard"|"computer"|"omnibus"|"original", '
            "...any option}; see docs/rules.md",
        },
    )
    seats = fields.List(
        SeatSpec(allow_none=True),
        load_default=None,
        allow_none=True,
        metadata={"description": 'One entry per seat: null (open) or {"bot": "random"}'},
    )
    seed = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(1, 256),
        metadata={"description": "Deal every hand from this seed (reproducible games)"},
    )
    deals = fields.List(
        fields.List(fields.List(fields.String())),
        load_default=None,
        allow_none=True,
        metadata={"description": "deals[k][s]: seat s's cards in hand k+1; then from the seed"},
    )


class JoinSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(1, MAX_NAME))
    seat = fields.Integer(load_default=None, allow_none=True, strict=True)


class PassSchema(Schema):
    cards = fields.List(fields.String(), required=True, validate=validate.Length(max=13))
    seat = fields.Integer(
        strict=True, metadata={"description": "Optional: must be the token's seat"}
    )


class PlaySchema(Schema):
    card = fields.String(required=True, metadata={"description": "The card to play"})
    seat = fields.Integer(
        strict=True, metadata={"description": "Optional: must be the token's seat"}
    )


class MoonSchema(Schema):
    choice = fields.String(
        required=True, validate=validate.OneOf(["add_to_others", "subtract_from_shooter"])
    )
    seat = fields.Integer(strict=True)


class SeatBotSchema(Schema):
    bot = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "A bot strategy to play this seat, or null to take it back"},
    )


class GamesQuerySchema(Schema):
    status = fields.String(validate=validate.OneOf(PHASES))
    player = fields.String(validate=validate.Length(1, MAX_NAME))
    limit = fields.Integer(load_default=20, validate=validate.Range(1, 100))
    cursor = fields.String(validate=validate.Length(1, 512))


# -- responses (documentation; the handlers build them, tests check them against these) ---------


class SeatSummarySchema(Schema):
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    bot = fields.String(allow_none=True)


class CreatedSchema(Schema):
    id = fields.String()
    version = fields.Integer()
    seats = fields.List(fields.Nested(SeatSummarySchema))


class PlayCardSchema(Schema):
    seat = fields.Integer()
    card = fields.String()


class TrickSchema(Schema):
    number = fields.Integer()
    leader = fields.Integer()
    cards = fields.List(fields.Nested(PlayCardSchema))
    winner = fields.Integer(allow_none=True)
    points = fields.Integer(allow_none=True)


class PublicViewSchema(Schema):
    id = fields.String()
    version = fields.Integer()
    phase = fields.String(validate=validate.OneOf(PHASES))
    rules = fields.Dict()
    hand_number = fields.Integer()
    dealer = fields.Integer(allow_none=True)
    pass_direction = fields.String(allow_none=True)
    turn = fields.Integer(allow_none=True, metadata={"description": "The seat to play, or null"})
    awaiting = fields.List(fields.Integer())
    current_trick = fields.List(fields.Nested(PlayCardSchema))
    tricks = fields.List(fields.Nested(TrickSchema))
    hearts_broken = fields.Boolean()
    scores = fields.List(fields.Integer())
    seats = fields.List(fields.Dict())
    seed_commitment = fields.String(allow_none=True)
    moon_shooter = fields.Integer(allow_none=True)
    winners = fields.List(fields.Integer())


class SeatViewSchema(PublicViewSchema):
    seat = fields.Integer()
    hand = fields.List(fields.String())
    legal_cards = fields.List(fields.String())
    passed_cards = fields.List(fields.String(), allow_none=True)
    received_cards = fields.List(fields.String())
    cards_to_pass = fields.Integer()


class JoinedSchema(Schema):
    seat = fields.Integer()
    token = fields.String(metadata={"description": "Bearer token for this seat; shown once"})
    version = fields.Integer()
    view = fields.Nested(SeatViewSchema)


class EventSchema(Schema):
    seq = fields.Integer()
    type = fields.String()
    schema_version = fields.Integer()
    time = fields.String()
    command_id = fields.String()
    payload = fields.Dict()
    redacted = fields.Boolean(metadata={"description": "Whether hidden cards were left out"})


class CommandResultSchema(Schema):
    version = fields.Integer()
    view = fields.Nested(SeatViewSchema)
    events = fields.List(fields.Nested(EventSchema))


class GameListSchema(Schema):
    games = fields.List(fields.Nested(PublicViewSchema))
    next_cursor = fields.String(allow_none=True)


class ProblemSchema(Schema):
    type = fields.String()
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    code = fields.String()
    instance = fields.String()
    errors = fields.Dict()
