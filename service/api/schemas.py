"""Request and response bodies (marshmallow): requests are validated with them, and the OpenAPI
document at /api/v1/openapi.json is generated from them. Unknown request fields are refused
(422), so a misspelt field never passes silently; responses may grow new fields.
"""

from __future__ import annotations

import functools
from typing import Any, Literal, get_args, get_origin

from marshmallow import INCLUDE, Schema, ValidationError, fields, validate

from bots import bot_names
from domain.cards import Card
from domain.events import EVENT_TYPES
from domain.names import MAX_NAME_LENGTH
from domain.rules import (
    OPTIONS,
    PRESETS,
    TIME_CONTROLS,
    OptionKind,
    OptionSpec,
    PassDirection,
    RuleOptions,
)
from domain.views import (
    VIEWS,
    ClockView,
    Contribution,
    NextDeal,
    Play,
    SeatClock,
    SeatSummary,
    ShotView,
    TrickView,
    ViewPhase,
)
from domain.wire import WireField, is_structure, item_of, json_fields, optional_of
from projections.ratings import PROVISIONAL_GAMES, PROVISIONAL_OPPONENTS
from projections.stats import FIGURES
from service.api.event_ids import NOTICE_ID, NoticeIdParameter
from service.app.deal_plan import DEAL_PLAN, SEED_COMMITTED
from service.app.matchmaking import SEEK_CLOCK

# Seats are numbered from 0; no table has more than the largest player count allows.
SEAT_RANGE = validate.Range(0, OPTIONS["players"].maximum - 1)
# Every list a request may hold has a documented bound (issue 22): seats, deals, cards.
MAX_SEATS = OPTIONS["players"].maximum
MAX_HAND = 52 // OPTIONS["players"].minimum  # the largest hand: 17 cards with 3 players
MAX_DEALS = 100  # explicit deals given at creation; later hands are dealt from the seed
PHASES = list(get_args(ViewPhase))
MAX_NAME = MAX_NAME_LENGTH  # domain/names.py: a nickname's bound, after normalization


class SeatSpec(fields.Field):
    """A seat at creation: ``null`` (a person will join) or ``{"bot": "<level or strategy>"}``."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str | None:
        if value is None:
            return None
        bot = value.get("bot") if isinstance(value, dict) and set(value) == {"bot"} else None
        if isinstance(bot, str) and bot:
            return bot
        raise ValidationError('a seat is null (open) or {"bot": "<strategy>"}')

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return None if value is None else {"bot": value}


# A card as the API writes it (rank 2-9, T, J, Q, K, A; suit C, D, H, S); requests may also write
# 10 for T, a suit symbol, or lower case.
CARD_PATTERN = "^(10|[2-9TJQKA])[CDHS♣♦♥♠]$"


def card(**kwargs: Any) -> fields.String:
    """A card field: ``2C``, ``TD``, ``QS``, ``AH`` (``10H`` and ``Q♠`` work too)."""
    metadata = {
        "pattern": CARD_PATTERN,
        "maxLength": 3,
        "example": "QS",
        **kwargs.pop("metadata", {}),
    }
    return fields.String(metadata=metadata, **kwargs)


# -- rule options, generated from the declaration the domain validates with (domain.rules) ------


def _option_schema(name: str, spec: OptionSpec, *, request: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"description": spec.description}
    if spec.kind is OptionKind.BOOLEAN:
        out["type"] = "boolean"
    elif spec.kind is OptionKind.INTEGER:
        # A game's view shows its recorded rules, which may hold what new games may not.
        most = spec.maximum if request or spec.recorded_maximum is None else spec.recorded_maximum
        out.update(type="integer", minimum=spec.minimum, maximum=most)
    elif spec.kind is OptionKind.CHOICE:
        out.update(type="string", enum=list(spec.choices))
    elif spec.kind is OptionKind.CARDS:
        cards = {"type": "string", "pattern": CARD_PATTERN}
        out.update(type="array", items=cards, uniqueItems=True, maxItems=spec.max_items)
    elif spec.kind is OptionKind.CYCLE:
        directions = {
            "type": "array",
            "items": {"type": "string", "enum": [d.value for d in PassDirection]},
            "minItems": 1,
            "maxItems": spec.max_items,
        }
        if request:
            out["oneOf"] = [{"type": "string", "enum": list(spec.choices)}, directions]
        else:
            out.update(directions)
    if spec.nullable or (spec.recorded_null and not request):
        out["nullable"] = True
        if "enum" in out:
            out["enum"].append(None)
    return out


def _preset_doc() -> str:
    standard = RuleOptions().to_dict()
    lines = []
    for name, preset in PRESETS.items():
        changed = {k: v for k, v in preset.to_dict().items() if standard[k] != v}
        lines.append(f"{name}: {changed or 'the standard game'}")
    return "Start from this preset, then apply the options given. " + "; ".join(lines)


def rule_options_schema(*, request: bool) -> dict[str, Any]:
    """The JSON schema of rule options: as sent at creation (a preset and any overrides), or as
    a game's view shows them (every option, resolved)."""
    properties = {
        name: _option_schema(name, spec, request=request) for name, spec in OPTIONS.items()
    }
    if request:
        properties = {
            "preset": {"type": "string", "enum": list(PRESETS), "description": _preset_doc()},
            "time_control": {
                "type": "string",
                "enum": list(TIME_CONTROLS),
                "description": "A named turn clock, then any clock option given: "
                + "; ".join(
                    f"{name}: {per} s a decision + {reserve} s reserve"
                    for name, (per, reserve) in TIME_CONTROLS.items()
                ),
            },
            **properties,
        }
        return {"properties": properties, "additionalProperties": False}
    return {"properties": properties, "additionalProperties": False, "required": list(OPTIONS)}


# -- requests ---------------------------------------------------------------------------------


class CreateGameSchema(Schema):
    rules = fields.Dict(
        keys=fields.String(),
        load_default=None,
        allow_none=True,
        metadata={
            "description": "Rule options: a preset and any options to change (docs/rules.md); "
            "a combination that makes no sense is refused (422 invalid-rules)",
            **rule_options_schema(request=True),
        },
    )
    seats = fields.List(
        SeatSpec(
            allow_none=True,
            metadata={
                "type": "object",
                "properties": {"bot": {"type": "string", "enum": bot_names()}},
                "required": ["bot"],
                "additionalProperties": False,
            },
        ),
        load_default=None,
        allow_none=True,
        validate=validate.Length(max=MAX_SEATS),
        metadata={
            "description": 'One entry per seat: null (open) or {"bot": "strong"}: a level '
            "(beginner, casual, strong, master: docs/bots.md) or a strategy's name"
        },
    )
    seed = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(1, 256),
        metadata={
            "description": "Deal every hand from this seed (reproducible games). It must be "
            "unguessable: 22+ random base64url characters (128 bits), 32 hex digits or a UUIDv4, "
            "else 422 seed-guessable"
        },
    )
    deals = fields.List(
        fields.List(
            fields.List(card(), validate=validate.Length(max=MAX_HAND)),
            validate=validate.Length(max=MAX_SEATS),
        ),
        load_default=None,
        allow_none=True,
        validate=validate.Length(max=MAX_DEALS),
        metadata={"description": "deals[k][s]: seat s's cards in hand k+1; then from the seed"},
    )
    private = fields.Boolean(
        load_default=False,
        metadata={
            "description": "A private table: in no listing (GET /games), its seats taken only "
            "with the join code the 201 answer gives once (join_code, and invitation: the web "
            "table's link that carries it)"
        },
    )


class JoinSchema(Schema):
    name = fields.String(
        load_default=None,
        validate=validate.Length(1, MAX_NAME),
        metadata={
            "description": "Your name at the table (RFC 8266 nickname whose characters are in "
            "the Unicode identifier profile, UTS #39, or spaces between words): letters of any "
            "script, digits, ' - . _ and the like; no control, invisible, blank, symbol or emoji "
            "character (422 invalid-name). Stored normalized (NFKC, spaces trimmed and "
            "collapsed); unique at the table ignoring case and width (409 name-taken), and no "
            "look-alike of a name at the table (a UTS #39 confusable: 409 name-confusable). A "
            "guest (no key) must give one, neither a registered player's (409 "
            "player-name-taken) nor a look-alike of one (409 name-confusable); with a player's key "
            "(Authorization: Bearer hp_...) the seat takes the registered name: leave it out "
            "or give that name"
        },
    )
    seat = fields.Integer(load_default=None, allow_none=True, strict=True)
    join_code = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(1, 64),
        metadata={
            "description": "A private table's join code (from its invitation link); without "
            "it, or with another, a private table answers 403 join-code-invalid"
        },
    )


class PassSchema(Schema):
    cards = fields.List(card(), required=True, validate=validate.Length(max=13))
    seat = fields.Integer(
        strict=True,
        validate=SEAT_RANGE,
        metadata={"description": "Optional: must be the token's seat"},
    )


class PlaySchema(Schema):
    card = card(required=True, metadata={"description": "The card to play"})
    seat = fields.Integer(
        strict=True,
        validate=SEAT_RANGE,
        metadata={"description": "Optional: must be the token's seat"},
    )


class ContributionSchema(Schema):
    seed = fields.String(
        required=True,
        validate=validate.Regexp(r"^[A-Za-z0-9_-]{1,64}$"),
        metadata={
            "description": "Your contribution to the next hand's shuffle: 1-64 letters, digits, "
            "'-' or '_' (make up 32 random hex digits). docs/verify.md"
        },
    )
    hand_number = fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(1, 100_000),
        metadata={"description": "The hand it is for (default: the next one); another: 409"},
    )


class MoonSchema(Schema):
    choice = fields.String(
        required=True,
        validate=validate.OneOf(["add_to_others", "subtract_from_shooter"]),
        metadata={"title": "MoonScoringChoice"},  # not MoonChoice: the hand record's schema
    )
    seat = fields.Integer(
        strict=True,
        validate=SEAT_RANGE,
        metadata={"description": "Optional: must be the token's seat"},
    )


class SeatBotSchema(Schema):
    bot = fields.String(
        required=True,
        allow_none=True,
        validate=validate.Length(1, 64),
        metadata={
            "description": "A bot to play this seat (a level, e.g. strong, or a strategy's "
            "name), or null to take it back"
        },
    )


class GamesQuerySchema(Schema):
    status = fields.String(validate=validate.OneOf(PHASES))
    player = fields.String(
        validate=validate.Length(1, MAX_NAME),
        metadata={
            "description": "Only games with a seat of this name, compared as names are; an "
            "imported game is never listed under a name (its names are the export's, which "
            "anyone can edit)"
        },
    )
    arranged = fields.Boolean(
        metadata={"description": "Only arranged games (true) or only the others (false)"}
    )
    imported = fields.Boolean(
        metadata={
            "description": "Only games imported from an export (true) or only the games "
            "played here (false)"
        }
    )
    active = fields.Boolean(
        metadata={
            "description": "true: leave out games in play that no one has moved in for "
            "HEARTS_LOBBY_IDLE seconds (their players left), as the web lobby does"
        }
    )
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
    private = fields.Boolean(metadata={"description": "Whether the table is private"})
    join_code = fields.String(
        metadata={
            "description": "A private table's join code, shown only in this answer (a retry "
            "with the same Idempotency-Key gets it again): give it to the players you invite"
        }
    )
    invitation = fields.String(
        metadata={
            "description": "A private table's invitation: the web table's link (relative to "
            "the server) that carries the game id and its join code, e.g. "
            "/#/invite/g0123.../Xy..."
        }
    )


# -- the views, generated from their declaration (domain/views.py; domain/wire.py reads it) -----

# The component each view structure is documented as in the OpenAPI document.
_VIEW_COMPONENTS: dict[type, str] = {
    Play: "PlayCard",
    TrickView: "Trick",
    SeatSummary: "SeatPublic",
    SeatClock: "SeatClock",
    ClockView: "Clock",
    Contribution: "ContributionView",
    NextDeal: "NextDeal",
    ShotView: "Shot",
}


def _view_field(tp: Any, doc: str | None = None, *, allow_none: bool = False) -> fields.Field:
    """The marshmallow field of a view field of type ``tp`` (domain/wire.py says what each type
    is in JSON; this says how the document shows it)."""
    kwargs: dict[str, Any] = {"metadata": {"description": doc} if doc else {}}
    if allow_none:
        kwargs["allow_none"] = True
    inner = optional_of(tp)
    if inner is not None:
        return _view_field(inner, doc, allow_none=True)
    inner = item_of(tp)
    if inner is not None:
        return fields.List(_view_field(inner), **kwargs)
    if tp is Card:
        return card(**kwargs)
    if tp is RuleOptions:
        return fields.Dict(metadata={**rule_options_schema(request=False), **kwargs["metadata"]})
    if get_origin(tp) is Literal:
        return fields.String(validate=validate.OneOf(list(get_args(tp))), **kwargs)
    if is_structure(tp):
        return fields.Nested(_view_schema(tp), **kwargs)
    simple = {int: fields.Integer, float: fields.Float, str: fields.String, bool: fields.Boolean}
    if tp in simple:
        return simple[tp](**kwargs)
    if tp is dict or get_origin(tp) is dict:
        return fields.Dict(**kwargs)
    raise TypeError(f"{tp}: no schema for this view field's type (domain/wire.py)")


def _schema(component: str, declared: tuple[WireField, ...]) -> type[Schema]:
    made = {f.name: _view_field(f.type, f.doc) for f in declared}
    return Schema.from_dict(made, name=f"{component}Schema")


@functools.cache
def _view_schema(structure: type) -> type[Schema]:
    return _schema(_VIEW_COMPONENTS[structure], json_fields(structure))


PlayCardSchema = _view_schema(Play)
TrickSchema = _view_schema(TrickView)
SeatPublicSchema = _view_schema(SeatSummary)
SeatClockSchema = _view_schema(SeatClock)
ClockSchema = _view_schema(ClockView)
ContributionViewSchema = _view_schema(Contribution)
NextDealSchema = _view_schema(NextDeal)
ShotSchema = _view_schema(ShotView)
PublicViewSchema = _schema("PublicView", json_fields(*VIEWS["PublicView"]))
SeatViewSchema = _schema("SeatView", json_fields(*VIEWS["SeatView"]))


class JoinedSchema(Schema):
    seat = fields.Integer()
    token = fields.String(metadata={"description": "Bearer token for this seat; shown once"})
    version = fields.Integer()
    view = fields.Nested(SeatViewSchema)


class EventSchema(Schema):
    seq = fields.Integer()
    type = fields.String(
        validate=validate.OneOf([*EVENT_TYPES, DEAL_PLAN, SEED_COMMITTED]),
        metadata={
            "description": "The domain event's class (domain/events.py), or a service record "
            "(DealPlan, SeedCommitted). GameAbandoned: the seat's player, silent too long in "
            "a game without a turn clock, left; GameEnded follows"
        },
    )
    schema_version = fields.Integer()
    time = fields.String()
    command_id = fields.String()
    payload = fields.Dict()
    redacted = fields.Boolean(metadata={"description": "Whether hidden cards were left out"})
    revealed_hand = fields.Nested(
        "HandSchema",
        allow_none=True,
        metadata={
            "description": "On a HandScored event: the finished hand's record, as GET "
            "/games/{game_id}/hands/{number} gives it (without id and version)"
        },
    )


class CommandResultSchema(Schema):
    version = fields.Integer()
    view = fields.Nested(SeatViewSchema)
    events = fields.List(fields.Nested(EventSchema))


class DamagedGameSchema(Schema):
    id = fields.String()
    detail = fields.String(metadata={"description": "What is wrong with its stored log"})


class GameListSchema(Schema):
    games = fields.List(fields.Nested(PublicViewSchema))
    next_cursor = fields.String(allow_none=True)
    damaged = fields.List(
        fields.Nested(DamagedGameSchema),
        metadata={
            "description": "Present only if some game of the page could not be read (a damaged "
            "archived object: GET /games/{id} answers 409 corrupt-game); the others are listed"
        },
    )


class ProblemSchema(Schema):
    """An RFC 9457 problem, served as application/problem+json."""

    type = fields.String(
        metadata={"description": "/problems/<code>: GET it for the problem type's description"}
    )
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    code = fields.String(metadata={"description": "The type's last segment, stable"})
    instance = fields.String(metadata={"description": "The request path"})
    errors = fields.Dict(
        metadata={"description": "validation-error: the messages of each field that failed"}
    )

    class Meta:
        unknown = INCLUDE  # some problem types add members (e.g. an audit's discrepancies)


# The schema every operation's documented problem responses name (problems.documented, the 429s
# of rate_limits): one instance, never copied. flask-smorest deep-copies an operation's whole doc
# at each of its decorators, so ten problem statuses meant 55 copies of a ProblemSchema and
# importing the API took 1.5 s of CPU, paid by every process that serves or tests it. Nothing
# writes to a schema instance once built: sharing one documents exactly what copies did.
PROBLEM_DOC = ProblemSchema()
PROBLEM_DOC.__deepcopy__ = lambda memo: PROBLEM_DOC  # type: ignore[method-assign]


# -- read models ---------------------------------------------------------------------------------


class AsOfSchema(Schema):
    generation = fields.String(allow_none=True)
    positions = fields.List(
        fields.String(allow_none=True), metadata={"description": "By partition"}
    )
    lag = fields.Integer()


class ScoreboardAsOfSchema(Schema):
    generation = fields.String()
    partition = fields.Integer()
    position = fields.String(allow_none=True)
    seq = fields.Integer()


class HandRecordSchema(Schema):
    hand_number = fields.Integer()
    dealer = fields.Integer()
    pass_direction = fields.String()
    tricks_won = fields.List(fields.Integer())
    penalty_cards_taken = fields.List(fields.Integer())
    queen_of_spades = fields.Integer(allow_none=True)
    scored = fields.Boolean()
    points_taken = fields.List(fields.Integer(), allow_none=True)
    shot = fields.String(allow_none=True, validate=validate.OneOf(["moon", "sun"]))
    shooter = fields.Integer(allow_none=True)
    moon_scoring = fields.String(allow_none=True)
    score_changes = fields.List(fields.Integer(), allow_none=True)
    exact_limit_resets = fields.List(fields.Integer())
    totals = fields.List(fields.Integer(), allow_none=True)


class StandingSchema(Schema):
    rank = fields.Integer()
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    total = fields.Integer()
    winner = fields.Boolean()


class ScoreboardSeatSchema(SeatSummarySchema):
    player_id = fields.String(
        allow_none=True,
        metadata={"description": "The registered player who joined the seat with its key"},
    )
    left = fields.Boolean(
        metadata={
            "description": "The person who joined the seat handed it to a bot during the game (or "
            "was away after timeouts in a row): for the ratings they left it (ranked last)"
        }
    )


class ScoreboardSchema(Schema):
    game_id = fields.String()
    arranged = fields.Boolean(
        metadata={"description": "The creator chose the deals: left out of player statistics"}
    )
    imported = fields.Boolean(
        metadata={"description": "Imported from an export: left out of player statistics"}
    )
    abandoned_by = fields.Integer(
        allow_none=True,
        metadata={
            "description": "The seat whose player left, ending the game (never rated: no clock)"
        },
    )
    seq = fields.Integer()
    position = fields.String()
    status = fields.String()
    rules = fields.Dict(metadata=rule_options_schema(request=False))
    penalty_suit = fields.String()
    seats = fields.List(fields.Nested(ScoreboardSeatSchema))
    hands = fields.List(fields.Nested(HandRecordSchema))
    totals = fields.List(fields.Integer())
    winners = fields.List(fields.Integer())
    standings = fields.List(fields.Nested(StandingSchema))
    created_at = fields.String(allow_none=True)
    started_at = fields.String(allow_none=True)
    finished_at = fields.String(allow_none=True)
    as_of = fields.Nested(ScoreboardAsOfSchema)


def _figure_fields() -> dict[str, fields.Field]:
    # Counters are whole numbers; rates and averages are null until a game counts.
    return {
        name: fields.Integer() if figure.counter else fields.Float(allow_none=True)
        for name, figure in FIGURES.items()
    }


_PROVISIONAL = (
    f"Fewer than {PROVISIONAL_GAMES} weighted rated games (weighted_games), or fewer than "
    f"{PROVISIONAL_OPPONENTS} distinct opponents in them: the rating is young, and off the "
    "leaderboard's rating ranks"
)
_WEIGHTED = (
    "The rated games' weights summed: a game against new accounts, or against one beaten again "
    "and again, weighs less than 1 (docs/projections.md, 'What is rated')"
)
_FLAGGED = (
    "The player's opponents fed it points (docs/projections.md, 'Fair play'): its games stop "
    "counting, and it is off the rating ranks, until an operator clears it"
)


def _identity_fields() -> dict[str, fields.Field]:
    return {
        "name": fields.String(),
        "player_id": fields.String(
            allow_none=True, metadata={"description": "A registered player's id (kind player)"}
        ),
        "kind": fields.String(
            validate=validate.OneOf(["player", "guest", "bot"]),
            metadata={
                "description": "player: the seats a registered player joined with its key; "
                "guest: seats joined under a typed name without a key; bot: a strategy's seats"
            },
        ),
        **_figure_fields(),
        "mu": fields.Float(allow_none=True, metadata={"description": "OpenSkill mean"}),
        "sigma": fields.Float(allow_none=True, metadata={"description": "OpenSkill deviation"}),
        "rated_games": fields.Integer(),
        "rated_opponents": fields.Integer(
            metadata={"description": "Distinct opponents who played a rated game out with them"}
        ),
        "weighted_games": fields.Float(metadata={"description": _WEIGHTED}),
        "provisional": fields.Boolean(metadata={"description": _PROVISIONAL}),
        "flagged": fields.Boolean(metadata={"description": _FLAGGED}),
    }


PlayerFiguresSchema = Schema.from_dict(_identity_fields(), name="PlayerFigures")
LeaderboardRowSchema = Schema.from_dict(
    {"rank": fields.Integer(), **_identity_fields()}, name="LeaderboardRow"
)


class RatingPointSchema(Schema):
    game_id = fields.String()
    finished_at = fields.String()
    rating = fields.Float(metadata={"description": "mu - 3 sigma after the game"})
    mu = fields.Float()
    sigma = fields.Float()
    rank = fields.Integer(
        metadata={"description": "The player's place (1: lowest total; who left: last)"}
    )
    players = fields.Integer()
    left = fields.Boolean(
        metadata={"description": "The player handed the seat to a bot: counted as leaving"}
    )
    weight = fields.Float(
        metadata={"description": "The share of the model's move the game made (0 to 1)"}
    )


class PlayerRatingsSchema(Schema):
    player_id = fields.String()
    name = fields.String()
    rating = fields.Float(
        allow_none=True, metadata={"description": "mu - 3 sigma; null before a rated game"}
    )
    mu = fields.Float(allow_none=True)
    sigma = fields.Float(allow_none=True)
    rated_games = fields.Integer()
    rated_opponents = fields.Integer(
        metadata={"description": "Distinct opponents who played a rated game out with them"}
    )
    weighted_games = fields.Float(metadata={"description": _WEIGHTED})
    provisional = fields.Boolean(metadata={"description": _PROVISIONAL})
    flagged = fields.Boolean(metadata={"description": _FLAGGED})
    history = fields.List(fields.Nested(RatingPointSchema))
    as_of = fields.Nested(AsOfSchema)


class GroupRowSchema(Schema):
    name = fields.String()
    player_id = fields.String(allow_none=True, metadata={"description": "null for a guest"})
    games = fields.Integer(metadata={"description": "Finished games among the group only"})
    wins = fields.Integer()
    average_points = fields.Float(allow_none=True, metadata={"description": "Final totals"})
    rating = fields.Float(
        allow_none=True, metadata={"description": "mu - 3 sigma over every rated game"}
    )
    provisional = fields.Boolean(metadata={"description": _PROVISIONAL})


class GroupStandingsSchema(Schema):
    players = fields.List(fields.Nested(GroupRowSchema))
    games = fields.Integer(metadata={"description": "The games among the group counted"})
    as_of = fields.Nested(AsOfSchema)


class LeaderboardSchema(Schema):
    sort = fields.String(validate=validate.OneOf(list(FIGURES)))
    order = fields.String(validate=validate.OneOf(["asc", "desc"]))
    players = fields.List(fields.Nested(LeaderboardRowSchema))
    total = fields.Integer()
    next_cursor = fields.String(allow_none=True)
    as_of = fields.Nested(AsOfSchema)


class RecentSeatSchema(Schema):
    seat = fields.Integer()
    total = fields.Integer()
    rank = fields.Integer()
    winner = fields.Boolean()


class RecentGameSchema(Schema):
    game_id = fields.String()
    status = fields.String()
    hands = fields.Integer()
    started_at = fields.String(allow_none=True)
    finished_at = fields.String(allow_none=True)
    seats = fields.List(fields.Nested(RecentSeatSchema))


PlayerSchema = Schema.from_dict(
    {
        **_identity_fields(),
        "recent_games": fields.List(fields.Nested(RecentGameSchema)),
        "as_of": fields.Nested(AsOfSchema),
    },
    name="Player",
)


# -- replay, audit, export, resume -----------------------------------------------------------------


class EventsPageSchema(Schema):
    id = fields.String()
    version = fields.Integer()
    phase = fields.String(validate=validate.OneOf(PHASES))
    events = fields.List(fields.Nested(EventSchema))
    next_after = fields.Integer(metadata={"description": "Ask again with after=next_after"})
    more = fields.Boolean(metadata={"description": "Whether more events follow this page"})


class HandSeatSchema(Schema):
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    bot = fields.String(allow_none=True)


class HandPassSchema(Schema):
    seat = fields.Integer()
    has_passed = fields.Boolean()
    passed = fields.List(card(), allow_none=True, metadata={"description": "null: hidden"})
    received = fields.List(card(), allow_none=True, metadata={"description": "null: hidden"})


class HandTrickSchema(TrickSchema):
    kitty = fields.List(card(), allow_none=True)
    seq = fields.Integer(metadata={"description": "The TrickTaken event"})


class HandTimeoutSchema(Schema):
    seat = fields.Integer()
    seq = fields.Integer(metadata={"description": "The SeatTimedOut event; the move follows it"})
    decision = fields.String(validate=validate.OneOf(["pass", "play", "moon"]))
    trick = fields.Integer(allow_none=True, metadata={"description": "For a play: the trick"})


class MoonChoiceSchema(Schema):
    seat = fields.Integer()
    choice = fields.String()


class HandSchema(Schema):
    """A hand's record: complete once finished; while in play, what the caller may see."""

    id = fields.String()
    version = fields.Integer()
    hand_number = fields.Integer()
    finished = fields.Boolean()
    first_seq = fields.Integer()
    last_seq = fields.Integer()
    rules = fields.Dict(metadata=rule_options_schema(request=False))
    seats = fields.List(fields.Nested(HandSeatSchema))
    dealer = fields.Integer()
    pass_direction = fields.String()
    cards_to_pass = fields.Integer()
    seed_commitment = fields.String()
    seed = fields.String(allow_none=True, metadata={"description": "Revealed once finished"})
    seed_salt = fields.String(
        allow_none=True,
        metadata={
            "description": "The commitment's salt, revealed with the seed: seed_commitment = "
            'hex(SHA-256(utf8(seed_salt + ":" + seed))); null for hands committed before '
            "salts (format 1: hex(SHA-256(utf8(seed))))"
        },
    )
    explicit = fields.Boolean(metadata={"description": "Dealt as given, not from the seed"})
    dealt = fields.List(fields.List(card(), allow_none=True))
    kitty_dealt = fields.List(card(), allow_none=True)
    passes = fields.List(fields.Nested(HandPassSchema))
    kitty_after_pass = fields.List(card(), allow_none=True)
    tricks = fields.List(fields.Nested(HandTrickSchema))
    current_trick = fields.List(fields.Nested(PlayCardSchema))
    scores_before = fields.List(fields.Integer())
    moon_choice = fields.Nested(MoonChoiceSchema, allow_none=True)
    points_taken = fields.List(fields.Integer(), allow_none=True)
    shooter = fields.Integer(allow_none=True)
    shot = fields.String(allow_none=True, validate=validate.OneOf(["moon", "sun"]))
    moon_scoring = fields.String(allow_none=True)
    score_changes = fields.List(fields.Integer(), allow_none=True)
    exact_limit_resets = fields.List(fields.Integer(), allow_none=True)
    totals = fields.List(fields.Integer(), allow_none=True)
    game_over = fields.Boolean()
    winners = fields.List(fields.Integer(), allow_none=True)
    timeouts = fields.List(
        fields.Nested(HandTimeoutSchema),
        metadata={"description": "The decisions the turn clock handed to the timeout bot"},
    )
    abandoned_by = fields.Integer(
        allow_none=True,
        metadata={"description": "The seat whose player left during this hand, ending the game"},
    )
    contributions = fields.List(
        fields.Nested(ContributionViewSchema),
        metadata={"description": "The players' seeds mixed into the hand's shuffle"},
    )


class AuditCheckSchema(Schema):
    name = fields.String()
    ok = fields.Boolean()
    checked = fields.Integer()
    unit = fields.String()


class AuditHandSchema(Schema):
    hand_number = fields.Integer()
    seq = fields.Integer()
    finished = fields.Boolean()
    explicit = fields.Boolean()
    commitment_ok = fields.Boolean()
    deal_ok = fields.Boolean(allow_none=True, metadata={"description": "null: an explicit deal"})


class DiscrepancySchema(Schema):
    seq = fields.Integer()
    check = fields.String()
    reason = fields.String()
    related = fields.List(fields.Integer())


class AuditSchema(Schema):
    game_id = fields.String()
    ok = fields.Boolean(metadata={"description": "false on any discrepancy"})
    events = fields.Integer()
    last_seq = fields.Integer()
    checks = fields.List(fields.Nested(AuditCheckSchema))
    hands = fields.List(fields.Nested(AuditHandSchema))
    discrepancies = fields.List(fields.Nested(DiscrepancySchema))
    truncated = fields.Boolean()


class StoredEventSchema(Schema):
    type = fields.String()
    schema_version = fields.Integer()
    game_id = fields.String()
    seq = fields.Integer()
    time = fields.String()
    command_id = fields.String()
    payload = fields.Dict()
    prev_hash = fields.String()
    hash = fields.String()


class ExportSchema(Schema):
    """A finished game as one self-contained document (``POST /games/import`` takes it back)."""

    format = fields.String()
    format_version = fields.Integer()
    game_id = fields.String()
    exported_at = fields.String()
    version = fields.Integer()
    last_hash = fields.String(allow_none=True)
    phase = fields.String(validate=validate.OneOf(PHASES))
    hand_number = fields.Integer()
    rules = fields.Dict(metadata=rule_options_schema(request=False))
    seats = fields.List(fields.Nested(HandSeatSchema))
    scores = fields.List(fields.Integer())
    winners = fields.List(fields.Integer())
    events = fields.List(fields.Nested(StoredEventSchema))


class ImportedSchema(Schema):
    id = fields.String()
    version = fields.Integer()
    source_game_id = fields.String()
    imported = fields.Boolean(
        metadata={
            "description": "Always true: the game is an imported copy. Its seats are guests "
            "whatever their names (a registered player's name included): it is never listed "
            "under a player's name, in a player's games, statistics or ratings"
        }
    )


class NextActionSchema(Schema):
    """What the seat must do now (``action``), or whom it waits for."""

    action = fields.String(
        validate=validate.OneOf(["none", "wait", "pass", "play", "choose_moon_scoring"])
    )
    reason = fields.String()
    winners = fields.List(fields.Integer())
    cards = fields.Integer(metadata={"description": "pass: how many"})
    direction = fields.String(allow_none=True)
    legal_cards = fields.List(card())
    optional = fields.Boolean()
    choices = fields.List(fields.String())
    post = fields.String(metadata={"description": "The path to POST the action to"})

    class Meta:
        # 'for' is a Python keyword: the seats waited for.
        include = {"for": fields.List(fields.Integer())}


class ResumeSchema(Schema):
    id = fields.String()
    version = fields.Integer()
    seat = fields.Integer()
    view = fields.Nested(SeatViewSchema)
    next_action = fields.Nested(NextActionSchema)
    events_url = fields.String()


# -- registered players (service/api/players.py) --------------------------------------------------


class EmptySchema(Schema):
    """``{}``: a POST that needs nothing more than its path and key (every POST sends JSON)."""


class RegisterSchema(Schema):
    name = fields.String(
        required=True,
        validate=validate.Length(1, MAX_NAME),
        metadata={
            "description": "The name to hold across the service (as at a join: an RFC 8266 "
            "nickname in the Unicode identifier profile): unique ignoring case, width and "
            "spacing (409 player-name-taken), and no look-alike of a registered player's name "
            "(a UTS #39 confusable, e.g. a Cyrillic 'а' for a Latin 'a': 409 name-confusable)"
        },
    )


class AccountSchema(Schema):
    id = fields.String(metadata={"description": "The player's id (on the seats they join)"})
    name = fields.String()
    created = fields.String(metadata={"description": "When the player registered (UTC)"})


class AccountKeySchema(AccountSchema):
    key = fields.String(
        metadata={
            "description": "The player's API key (Authorization: Bearer hp_...): shown only "
            "this once, stored hashed"
        }
    )


class MyGamesQuerySchema(Schema):
    limit = fields.Integer(load_default=50, validate=validate.Range(1, 200))


class MyGameSchema(Schema):
    id = fields.String()
    seat = fields.Integer(metadata={"description": "The player's seat in the game"})
    phase = fields.String(validate=validate.OneOf(PHASES))
    version = fields.Integer()
    scores = fields.List(fields.Integer())
    winners = fields.List(fields.Integer())
    awaiting = fields.List(
        fields.Integer(), metadata={"description": "The seats that must act now"}
    )


class MyGamesSchema(Schema):
    games = fields.List(
        fields.Nested(MyGameSchema), metadata={"description": "Latest joined first"}
    )


# -- matchmaking and the player's own stream (issue 20) -----------------------------------------


class RatingRangeSchema(Schema):
    min = fields.Float(required=True, validate=validate.Range(-1000, 1000))
    max = fields.Float(required=True, validate=validate.Range(-1000, 1000))


class SeekSchema(Schema):
    players = fields.Integer(
        load_default=4,
        validate=validate.Range(OPTIONS["players"].minimum, OPTIONS["players"].maximum),
    )
    preset = fields.String(load_default="standard", validate=validate.OneOf(list(PRESETS)))
    time_control = fields.String(
        load_default=SEEK_CLOCK,
        validate=validate.OneOf(list(TIME_CONTROLS)),
        metadata={
            "description": "The table's clock: matched games are rated, and a rated game always "
            "has one, so 'off' is refused (422 invalid-seek)"
        },
    )
    fill_with_bots_after = fields.Float(
        load_default=None,
        allow_none=True,
        validate=validate.Range(1, 3600),
        metadata={
            "description": "Seconds after which the table is filled with bots (with whoever "
            "else waits and fits); null: wait for people only"
        },
    )
    rating_range = fields.Nested(
        RatingRangeSchema,
        load_default=None,
        allow_none=True,
        metadata={
            "description": "The opponents' conservative ratings (mu - 3 sigma; unrated: 0) you "
            "accept; they must accept yours too. null: anyone"
        },
    )


class SeekAnswerSchema(Schema):
    id = fields.String()
    state = fields.String(validate=validate.OneOf(["waiting", "matched", "expired", "cancelled"]))
    players = fields.Integer()
    preset = fields.String()
    time_control = fields.String()
    rating = fields.Float(metadata={"description": "Your conservative rating when you sought"})
    rating_range = fields.Nested(RatingRangeSchema, allow_none=True)
    fill_with_bots_after = fields.Float(allow_none=True)
    posted = fields.String()
    expires = fields.String()
    game_id = fields.String(
        allow_none=True,
        metadata={
            "description": "Once matched: your game; take your seat's token with POST "
            "/games/{game_id}/seats/{seat}/resume (your key)"
        },
    )
    seat = fields.Integer(allow_none=True)


class SeeksSchema(Schema):
    seeks = fields.List(
        fields.Nested(SeekAnswerSchema),
        metadata={"description": "Your seeks still waiting, oldest first (one a kind of table)"},
    )


class ChallengeSchema(Schema):
    to = fields.String(
        required=True,
        validate=validate.Length(1, MAX_NAME),
        metadata={
            "description": "The registered player challenged, by name (404 "
            "player-not-found if nobody holds it)"
        },
    )
    rules = CreateGameSchema._declared_fields["rules"]


class ChallengeSeatSchema(Schema):
    seat = fields.Integer()
    name = fields.String(metadata={"description": "The player's name, or the bot's"})
    bot = fields.Boolean()


class ChallengeAnswerSchema(Schema):
    id = fields.String()
    state = fields.String(
        validate=validate.OneOf(["open", "accepted", "declined", "cancelled", "expired"])
    )
    challenger = fields.String()
    challenged = fields.String()
    direction = fields.String(
        validate=validate.OneOf(["incoming", "outgoing"]),
        metadata={"description": "incoming: you are challenged; outgoing: you challenged"},
    )
    rules = fields.Dict(metadata={"description": "The rule options asked for, as sent"})
    seats = fields.List(
        fields.Nested(ChallengeSeatSchema),
        metadata={"description": "Who sits where once accepted (dealt at random)"},
    )
    your_seat = fields.Integer()
    created = fields.String()
    expires = fields.String()
    answered = fields.String(allow_none=True)
    game_id = fields.String(
        allow_none=True,
        metadata={
            "description": "Once accepted: the private game; take your seat's token with POST "
            "/games/{game_id}/seats/{your_seat}/resume (your key)"
        },
    )


class ChallengeListSchema(Schema):
    challenges = fields.List(fields.Nested(ChallengeAnswerSchema))


class AcceptedChallengeSchema(Schema):
    challenge = fields.Nested(ChallengeAnswerSchema)
    seat = fields.Integer()
    token = fields.String(metadata={"description": "Bearer token for your seat; shown once"})
    version = fields.Integer()
    view = fields.Nested(SeatViewSchema)


class PlayerEventsQuery(Schema):
    after = NoticeIdParameter(
        load_default=None,
        allow_none=True,
        metadata={
            "description": "The id of the last notice you have (JSON; SSE: Last-Event-ID): "
            "'<n>-<m>', each part from 0 to 2^64-1, else 400 invalid-event-id",
            "pattern": NOTICE_ID.pattern,
        },
    )


class PlayerStreamHeaders(Schema):
    last_event_id = fields.String(
        data_key="Last-Event-ID",
        metadata={
            "description": "A live stream resumes after this notice (an EventSource sends it "
            "when it reconnects); it overrides ``after``. Not a notice id: 400 invalid-event-id",
            "pattern": NOTICE_ID.pattern,
        },
    )


class PlayerNoticeSchema(Schema):
    id = fields.String(allow_none=True, metadata={"description": "null: from the snapshot"})
    type = fields.String(
        validate=validate.OneOf(
            ["gameStart", "yourTurn", "gameFinish", "challenge", "challengeAnswered"]
        )
    )
    game_id = fields.String(
        allow_none=True, metadata={"description": "challengeAnswered: null unless accepted"}
    )
    seat = fields.Integer()
    version = fields.Integer()
    winners = fields.List(fields.Integer())
    totals = fields.List(fields.Integer())
    abandoned_by = fields.Integer(
        allow_none=True,
        metadata={"description": "gameFinish: the seat whose player left, ending the game"},
    )
    view = fields.Nested(SeatViewSchema, metadata={"description": "yourTurn: the seat's view"})
    challenge_id = fields.String(metadata={"description": "challenge, challengeAnswered"})
    challenger = fields.String(metadata={"description": "challenge: who sent it"})
    expires = fields.String(metadata={"description": "challenge: when it expires unanswered"})
    state = fields.String(
        metadata={"description": "challengeAnswered: accepted, declined or cancelled"}
    )


class PlayerEventsSchema(Schema):
    events = fields.List(fields.Nested(PlayerNoticeSchema))
    last_id = fields.String(metadata={"description": "Pass it as ``after`` next time"})
