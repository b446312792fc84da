"""Events: what happened at the table. Frozen, small, named as a Hearts player would name them.

Each event class has a ``schema_version``; an old payload is upcast to the current version by the
service before it reaches ``event_from_dict``. ``event_to_dict``/``event_from_dict`` give the
JSON form (cards as text, tuples as lists, options as their dict form).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from enum import Enum
from typing import Any, ClassVar, Union

from .cards import Card
from .names import NameRules
from .rules import MoonScoring, PassDirection, RuleOptions

Play = tuple[int, Card]  # (seat, card) in play order


@dataclass(frozen=True, slots=True)
class GameCreated:
    # v2 adds ``names``; a v1 payload is upcast to ``as_written`` (service/store/upcasting.py).
    schema_version: ClassVar[int] = 2
    game_id: str
    rules: RuleOptions
    seats: tuple[str | None, ...]  # per seat: None for an open seat, else the bot's strategy
    # How joins check and compare names (domain/names.py). Every stored payload spells it out
    # (event_to_dict writes every field; v1 is upcast): the default is a new game's rule.
    names: NameRules = NameRules.IDENTIFIER


@dataclass(frozen=True, slots=True)
class PlayerJoined:
    # v2: player_id (v1 joins were all guests: service/store/upcasting.py gives them None).
    schema_version: ClassVar[int] = 2
    seat: int
    name: str
    # An opaque credential (the service stores a token's hash); never shown in any view.
    credential: str | None = None
    # The registered player who took the seat (public: views show it); None for a guest.
    player_id: str | None = None


@dataclass(frozen=True, slots=True)
class SeatResumed:
    """A registered player took a fresh credential for their seat; the old one stops working."""

    schema_version: ClassVar[int] = 1
    seat: int
    credential: str


@dataclass(frozen=True, slots=True)
class SeatControlChanged:
    """A seat handed to a bot (``bot`` is its strategy) or taken back by its player (None)."""

    schema_version: ClassVar[int] = 1
    seat: int
    bot: str | None


@dataclass(frozen=True, slots=True)
class HandDealt:
    # v2 added ``salt`` (the commitment's salt); a v1 event is upcast with ``salt: None``, the
    # unsalted commitment format 1 it was committed with. v3 added ``contributions``.
    schema_version: ClassVar[int] = 3
    hand_number: int
    dealer: int
    pass_direction: PassDirection
    hands: tuple[tuple[Card, ...], ...]
    kitty: tuple[Card, ...]
    seed: str  # secret until the hand is over; its commitment is public at once
    seed_commitment: str
    explicit: bool  # dealt as given (duplicate play, puzzles), not from the seed
    salt: str | None = None  # secret with the seed; None: an unsalted (format 1) commitment
    # v3: the players' contributions to the shuffle, (seat, text) in seat order: the cards come
    # from domain.shuffle.mixed_seed(seed, contributions). v2 events are upcast with none.
    contributions: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class CardsPassed:
    """One seat's pass, face down. Empty cards: the seat declined (optional passing)."""

    schema_version: ClassVar[int] = 1
    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class PassesExchanged:
    """Every seat has passed: each picks up what it receives (the mix redeals the pile)."""

    schema_version: ClassVar[int] = 1
    received: tuple[tuple[Card, ...], ...]
    kitty: tuple[Card, ...]  # the kitty after the pass (a mix can change it)


@dataclass(frozen=True, slots=True)
class CardPlayed:
    schema_version: ClassVar[int] = 1
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class TrickTaken:
    schema_version: ClassVar[int] = 1
    trick_number: int  # 1-based within the hand
    winner: int
    plays: tuple[Play, ...]
    points: int  # the trick's points, kitty included
    kitty: tuple[Card, ...] = ()  # the kitty, taken with the hand's first penalty card


@dataclass(frozen=True, slots=True)
class MoonScoringChosen:
    schema_version: ClassVar[int] = 1
    seat: int
    choice: MoonScoring


@dataclass(frozen=True, slots=True)
class HandScored:
    schema_version: ClassVar[int] = 1
    hand_number: int
    points_taken: tuple[int, ...]  # per seat, as taken (bonus card included)
    shooter: int | None  # who shot the moon (or the sun)
    shot: str | None  # "moon", "sun" or None
    moon_scoring: MoonScoring | None  # how the shot was scored
    score_changes: tuple[int, ...]
    exact_limit_resets: tuple[int, ...]  # seats whose total hit the limit exactly and was reset
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameEnded:
    schema_version: ClassVar[int] = 1
    winners: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameExpired:
    """The game never started: its open seats were still open at ``at`` (ISO-8601 UTC), when
    the service's waiting time ran out. Nothing can happen in it any more."""

    schema_version: ClassVar[int] = 1
    at: str


@dataclass(frozen=True, slots=True)
class SeatTimedOut:
    """The seat's time for a decision (and its reserve) ran out at ``at`` (ISO-8601 UTC): the
    game's timeout bot makes this one move for it, in the events that follow (domain/clock.py)."""

    schema_version: ClassVar[int] = 1
    seat: int
    at: str


@dataclass(frozen=True, slots=True)
class GameAbandoned:
    """The seat's player, awaited in a game without a turn clock, was silent until ``at``
    (ISO-8601 UTC): it left the game, which ends (``GameEnded`` follows). Never rated: a game
    without a clock is unrated (projections/ratings.py)."""

    schema_version: ClassVar[int] = 1
    seat: int
    at: str


@dataclass(frozen=True, slots=True)
class SeedContributed:
    """A seated player's contribution to the shuffle of hand ``hand_number`` (the next hand),
    given after the server committed to its own seed for that hand. Public."""

    schema_version: ClassVar[int] = 1
    hand_number: int
    seat: int
    contribution: str


Event = (
    GameCreated
    | PlayerJoined
    | SeatResumed
    | SeatControlChanged
    | HandDealt
    | CardsPassed
    | PassesExchanged
    | CardPlayed
    | TrickTaken
    | MoonScoringChosen
    | HandScored
    | GameEnded
    | GameExpired
    | SeatTimedOut
    | GameAbandoned
    | SeedContributed
)

EVENT_TYPES: dict[str, type] = {cls.__name__: cls for cls in typing.get_args(Event)}


def event_type(event: Event) -> str:
    return type(event).__name__


# -- the JSON form --------------------------------------------------------------------------------


def event_to_dict(event: Event) -> dict[str, Any]:
    """The payload of an event: plain JSON values."""
    return {f.name: _to_json(getattr(event, f.name)) for f in fields(event)}


def event_from_dict(type_name: str, payload: dict[str, Any]) -> Event:
    """The event of that type from its (current-version) payload; ValueError if malformed."""
    try:
        decode = _DECODERS[type_name]
    except KeyError:
        raise ValueError(f"unknown event type {type_name!r}") from None
    return decode(payload)


def event_decoder(type_name: str) -> Callable[[dict[str, Any]], Event]:
    """``event_from_dict`` for one type, looked up once (KeyError if no event has that name):
    for a reader that decodes many events, e.g. every load of a game."""
    return _DECODERS[type_name]


def _to_json(value: Any) -> Any:
    if isinstance(value, RuleOptions):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    return value


# Decoding reads each field's type hint once per event class (when this module loads), not per
# event: every load of a game decodes each of its events.
Convert = Callable[[Any], Any]


def card_from_json(value: Any, _interned: dict[str, Card] = Card._interned) -> Card:
    """The card a payload holds (InvalidCard, a ValueError, if none)."""
    # A stored card is in its canonical spelling, so this is one dict lookup; anything else goes
    # through Card(), which reads other spellings and raises InvalidCard (a ValueError).
    try:
        return _interned[value]
    except (KeyError, TypeError):
        return Card(value)


def _converter(tp: Any) -> Convert | None:
    """What turns a field's JSON value into its value; None where the JSON value is the value."""
    if tp is Card:
        return card_from_json
    if tp is RuleOptions:
        return _rules_from_json
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(tp) if a is not type(None)]
        convert = _converter(inner)
        if convert is None:
            return None
        return lambda value: None if value is None else convert(value)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _converter(args[0])
            if item is None:
                return tuple
            return lambda value: tuple([item(v) for v in value])
        items = [_converter(a) or _same for a in args]
        if len(items) == 2:  # a play (seat, card): four in every trick taken
            first, second = items

            def pair(value: Any) -> tuple[Any, Any]:
                a, b = value  # ValueError unless exactly two items
                return (first(a), second(b))

            return pair
        return lambda value: tuple([c(v) for c, v in zip(items, value, strict=True)])
    return None


def _rules_from_json(value: Any) -> RuleOptions:
    # Options already read are taken as they are: a reader that keeps the options it read from
    # the same JSON text passes them in (service/app/typed_envelopes.py); JSON never holds one.
    # Read with a recorded log's bounds: a game created before a bound was tightened.
    return value if type(value) is RuleOptions else RuleOptions.from_dict(value, recorded=True)


def _same(value: Any) -> Any:
    return value


def _decoder(cls: type) -> Callable[[dict[str, Any]], Any]:
    """The decoder of one event class: straight-line code, written once per class when this
    module loads (as ``dataclasses`` writes ``__init__``), e.g. for ``CardPlayed``::

        def decode(payload):
            try:
                return cls(payload['seat'], c1(payload['card']))
            except KeyError as missing:
                raise ValueError(f"CardPlayed payload lacks {missing}") from None

    A loop over the fields per event cost about half as much again; every load of a game
    decodes each of its events (bench/README.md, "cold load")."""
    hints = typing.get_type_hints(cls)
    namespace: dict[str, Any] = {"cls": cls}
    arguments = []
    for i, f in enumerate(fields(cls)):
        convert = _converter(hints[f.name])
        value = f"payload[{f.name!r}]"
        if convert is not None:
            namespace[f"c{i}"] = convert
            value = f"c{i}({value})"
        if f.default is not MISSING:
            # A field with a default may be left out, as a dataclass's constructor allows: the
            # typed decoder of a load (service/app/typed_envelopes.py) reads payloads so too.
            namespace[f"d{i}"] = f.default
            value = f"({value} if {f.name!r} in payload else d{i})"
        arguments.append(value)
    source = (
        "def decode(payload):\n"
        "    try:\n"
        f"        return cls({', '.join(arguments)})\n"
        "    except KeyError as missing:\n"
        f"        raise ValueError(f'{cls.__name__} payload lacks {{missing}}') from None\n"
    )
    exec(source, namespace)  # our own field names and converters: nothing from outside
    decode = namespace["decode"]
    decode.__qualname__ = f"decode_{cls.__name__}"
    return decode


_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    name: _decoder(cls) for name, cls in EVENT_TYPES.items()
}
