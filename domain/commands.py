"""Commands: what a player (or the service on the table's behalf) asks to do."""

from __future__ import annotations

from dataclasses import dataclass

from .cards import Card
from .names import NameRules
from .rules import MoonScoring, RuleOptions


@dataclass(frozen=True, slots=True)
class CreateGame:
    game_id: str
    rules: RuleOptions = RuleOptions()
    # One entry per seat: None for a seat a person will join, or a bot's strategy name.
    seats: tuple[str | None, ...] | None = None
    # How joins check names: every new game takes the default; an audit re-deciding a game
    # created before names were checked passes the rules that game recorded.
    names: NameRules = NameRules.IDENTIFIER


@dataclass(frozen=True, slots=True)
class JoinGame:
    name: str
    seat: int | None = None  # None: the first open seat
    credential: str | None = None
    # The registered player taking the seat (the service resolved their key to this id), or
    # None for a guest. The name is then the player's registered name.
    player_id: str | None = None


@dataclass(frozen=True, slots=True)
class ResumeSeat:
    """A registered player takes a fresh credential for their seat (another device); the old
    one stops working. ``player_id`` is the one the service resolved the player's key to."""

    seat: int
    player_id: str
    credential: str


@dataclass(frozen=True, slots=True)
class SetSeatBot:
    """Hand a seat to a bot (``bot`` names its strategy), or take it back (None)."""

    seat: int
    bot: str | None


@dataclass(frozen=True, slots=True)
class Deal:
    """Deal the next hand from ``seed``, or exactly ``hands`` (and ``kitty``) when given.

    The seed always comes in with the command (the domain has no randomness); with an explicit
    deal it still drives any shuffle the hand needs (the mix pass). So does the salt of the
    seed's commitment (:func:`domain.shuffle.seed_commitment`).
    """

    seed: str
    hands: tuple[tuple[Card, ...], ...] | None = None
    kitty: tuple[Card, ...] | None = None
    # The commitment's salt (lowercase hex, 128 bits or more), random from the service: with it
    # the published commitment hides even a guessable seed. None: the unsalted format 1.
    salt: str | None = None


@dataclass(frozen=True, slots=True)
class PassCards:
    """Pass cards face down. Scatter: in the order they go, to seat+1, seat+2, ...

    Empty cards decline to pass, where passing is optional.
    """

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class PlayCard:
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class ChooseMoonScoring:
    """The shooter's choice: the moon's points (``RuleOptions.moon_points``, 26 in the standard
    game) off their own score, or on everyone else's."""

    seat: int
    choice: MoonScoring


@dataclass(frozen=True, slots=True)
class ExpireGame:
    """Close a game whose seats were not all taken in time (the service decides when; the
    domain records it). ``at``: the time it expired, ISO-8601 UTC (time is an input)."""

    at: str


@dataclass(frozen=True, slots=True)
class TimeOut:
    """The seat to act ran out of time at ``at`` (ISO-8601 UTC): the service's timekeeper asks
    it when the deadline the log gives has passed. Decided with the game's clock
    (``domain.clock.decide_timeout``), never by ``decide`` alone."""

    seat: int
    at: str


@dataclass(frozen=True, slots=True)
class AbandonGame:
    """The seat to act in a game without a turn clock has been silent too long: it left, and
    the game ends (issue 32: nobody is held hostage). The service decides when (its setting,
    ``HEARTS_ABANDON_AFTER``); the domain records it. ``at``: ISO-8601 UTC (time is an input)."""

    seat: int
    at: str


@dataclass(frozen=True, slots=True)
class ReturnToSeat:
    """The seat's player is back: the bot that played for it while it was away stops."""

    seat: int


@dataclass(frozen=True, slots=True)
class ContributeSeed:
    """A seated player adds ``contribution`` to the shuffle of the next hand (``hand_number``,
    checked so a contribution meant for one hand never lands in another)."""

    seat: int
    hand_number: int
    contribution: str


Command = (
    CreateGame
    | JoinGame
    | ResumeSeat
    | SetSeatBot
    | Deal
    | PassCards
    | PlayCard
    | ChooseMoonScoring
    | ExpireGame
    | TimeOut
    | AbandonGame
    | ReturnToSeat
    | ContributeSeed
)
