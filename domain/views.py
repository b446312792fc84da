"""What one seat may see, and what anyone may see: never another seat's hidden cards.

What is hidden from whom is not decided here: the views ask :func:`domain.secrecy.may_see`, the
one authority (the same that redacts logged events), for each secret the hand in play holds.
The public view shows no secret at all: counts and played cards only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from .cards import Card, cards_of
from .legal import legal_cards
from .rules import RuleOptions
from .scoring import find_shot
from .secrecy import HAND, PASSED, RECEIVED, Secret, may_see, moment_of
from .state import CompletedTrick, GameState, Phase
from .wire import to_json, wire

# The views are typed once, here: their JSON form (``to_dict``), the API's view schemas
# (service/api/schemas.py) and the client's typed bodies (checked by tests/client/test_models.py)
# are read from these declarations (domain/wire.py). A new field is one line here and the line
# that fills it.

ViewPhase = Literal[
    "waiting", "dealing", "passing", "playing", "moon_choice", "finished", "expired"
]


class Play(NamedTuple):
    """A card played to a trick, and by whom (a pair, as the state holds it)."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class TrickView:
    number: int
    leader: int
    plays: tuple[Play, ...] = wire("cards")
    winner: int | None = None
    points: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True, slots=True)
class SeatSummary:
    seat: int
    name: str | None
    bot: str | None
    player_id: str | None = wire(doc="The registered player who joined the seat (with their key)")
    guest: bool = wire(doc="A person joined the seat without a player's key")
    hand_size: int
    points_this_hand: int
    has_passed: bool


@dataclass(frozen=True, slots=True)
class ShotView:
    kind: Literal["moon", "sun"]
    points: int = wire(
        doc="The shot's points: the rules' moon points (26 in a standard deck), or twice that "
        "for the sun"
    )


@dataclass(frozen=True, slots=True)
class PublicView:
    game_id: str = wire("id")
    phase: ViewPhase
    rules: RuleOptions
    hand_number: int
    dealer: int | None
    pass_direction: str | None
    # the seat to play, or None (while passing every seat that has not)
    turn: int | None = wire(doc="The seat to play, or null")
    awaiting: tuple[int, ...]  # every seat that must act now
    current_trick: tuple[Play, ...]
    tricks: tuple[TrickView, ...]  # this hand's completed tricks
    hearts_broken: bool
    scores: tuple[int, ...]
    seats: tuple[SeatSummary, ...]
    seed_commitment: str | None
    moon_shooter: int | None
    # While the shooter chooses how its shot scores: "moon" or "sun" and the points at stake
    # (the rules' moon_points or sun_points), so no reader works them out again.
    shot: ShotView | None = wire(
        doc="While the shooter chooses how its shot scores (phase moon_choice): a moon or a "
        "sun, and the points to add to the others or take off its own score"
    )
    winners: tuple[int, ...]
    # the seat that left, ending the game (GameAbandoned)
    abandoned_by: int | None = wire(
        default=None,
        doc="The seat whose player left the game (silent too long in a game without a turn "
        "clock: HEARTS_ABANDON_AFTER), which ended it; null otherwise",
    )

    def to_dict(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True, slots=True)
class SeatView:
    public: PublicView = wire(flatten=True)
    seat: int
    hand: tuple[Card, ...]
    # what this seat may pass or play now; empty if not its turn
    legal_cards: tuple[Card, ...] = wire(doc="What you may pass or play now")
    passed_cards: tuple[Card, ...] | None
    received_cards: tuple[Card, ...]  # once every seat has passed
    cards_to_pass: int

    def to_dict(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True, slots=True)
class SeatClock:
    seat: int
    reserve_seconds: float = wire(doc="Seconds of reserve left")
    deadline: str | None = wire(
        doc="When this seat's time to decide runs out (ISO-8601 UTC); null when it has nothing "
        "to decide or a bot plays it"
    )
    timeouts: int = wire(doc="Timeouts in this game")
    timeouts_in_a_row: int
    away: bool = wire(doc="A bot plays the seat until its player comes back")


@dataclass(frozen=True, slots=True)
class ClockView:
    seconds_per_decision: int
    seats: tuple[SeatClock, ...]


@dataclass(frozen=True, slots=True)
class Contribution:
    seat: int
    seed: str


@dataclass(frozen=True, slots=True)
class NextDeal:
    hand_number: int
    seed_commitment: str = wire(
        doc="The server's seed for that hand, committed: SHA-256 of salt:seed"
    )
    contributions: tuple[Contribution, ...]


@dataclass(frozen=True, slots=True)
class Served:
    """What the service adds to a view, from what it keeps beside the game's state: the JSON
    view is ``PublicView`` or ``SeatView`` and then these fields (``VIEWS``)."""

    version: int
    arranged: bool = wire(
        doc="The game's creator chose its deals (a seed or explicit deals in POST /games): "
        "whoever knows them can know every hand. Arranged games stay out of the leaderboard "
        "and player statistics unless the operator counts them."
    )
    imported: bool = wire(
        doc="Imported from an export (POST /games/import), not played here: left out of the "
        "leaderboard and player statistics, so a game is never counted twice (an export "
        "imported again answers with the same game)."
    )
    clock: ClockView | None = wire(
        doc="The turn clock (rule option seconds_per_decision; docs/rules.md): each seat's "
        "deadline and reserve; null for a game without one"
    )
    next_deal: NextDeal | None = wire(
        doc="The next hand's deal: the server's committed seed and the players' contributions "
        "so far (POST /games/{id}/contribution); null when the creator chose the deals"
    )
    imported_from: str | None = wire(
        default=None,
        doc="For an imported game, the id of the game it was exported from (the original, if "
        "that was played here: the lobby lists both); null otherwise",
    )

    def to_dict(self) -> dict[str, Any]:
        return to_json(self)


# The JSON views by the names the API document gives them: each the structures whose fields it
# holds, in order.
VIEWS: dict[str, tuple[type, ...]] = {
    "PublicView": (PublicView, Served),
    "SeatView": (SeatView, Served),
}


def awaiting(state: GameState) -> tuple[int, ...]:
    """The seats that must act before the game can go on."""
    hand = state.hand
    if state.phase is Phase.PASSING and hand is not None:
        return tuple(s for s, p in enumerate(hand.passed) if p is None)
    if state.phase is Phase.PLAYING and hand is not None and hand.turn is not None:
        return (hand.turn,)
    if state.phase is Phase.MOON_CHOICE and state.moon_shooter is not None:
        return (state.moon_shooter,)
    return ()


def public_view(state: GameState) -> PublicView:
    hand = state.hand
    rules = state.rules
    seats = []
    for i, info in enumerate(state.seats):
        taken = hand.taken[i] if hand is not None and hand.taken else ()
        seats.append(
            SeatSummary(
                seat=i,
                name=info.name,
                bot=info.bot,
                player_id=info.player_id,
                guest=info.guest,
                hand_size=hand.held_by(i).bit_count() if hand is not None else 0,
                points_this_hand=sum(rules.card_points(c) for c in taken),
                has_passed=hand is not None and hand.passed[i] is not None,
            )
        )
    hand_live = hand is not None and state.phase in (
        Phase.PASSING,
        Phase.PLAYING,
        Phase.MOON_CHOICE,
    )
    return PublicView(
        game_id=state.game_id,
        phase=state.phase.value,
        rules=rules,
        hand_number=state.hand_number,
        dealer=hand.dealer if hand is not None else None,
        pass_direction=hand.pass_direction.value if hand is not None else None,
        turn=hand.turn if hand is not None and state.phase is Phase.PLAYING else None,
        awaiting=awaiting(state),
        current_trick=_plays(hand.trick) if hand is not None else (),
        tricks=tuple(_trick_view(t) for t in hand.tricks) if hand is not None else (),
        hearts_broken=hand.hearts_broken if hand_live and hand is not None else False,
        scores=state.scores,
        seats=tuple(seats),
        seed_commitment=hand.seed_commitment if hand is not None else None,
        moon_shooter=state.moon_shooter,
        shot=_shot(state),
        winners=state.winners,
        abandoned_by=state.abandoned_by,
    )


def _shot(state: GameState) -> ShotView | None:
    hand = state.hand
    if state.phase is not Phase.MOON_CHOICE or hand is None:
        return None
    shot = find_shot(state.rules, hand.taken, hand.tricks_won)
    return None if shot is None else ShotView(shot.kind, shot.points)


def seat_view(state: GameState, seat: int) -> SeatView:
    hand = state.hand
    own: tuple[Card, ...] = ()
    legal: tuple[Card, ...] = ()
    passed = None
    received: tuple[Card, ...] = ()
    to_pass = 0
    if hand is not None:
        moment = moment_of(state)

        def shown(secret: Secret) -> bool:  # this seat's own part of ``secret``
            return may_see(secret, seat, seat, state.hand_number, moment)

        if shown(HAND):
            own = cards_of(hand.held_by(seat))
        if shown(PASSED):
            passed = hand.passed[seat]
        if shown(RECEIVED) and hand.received is not None:
            received = hand.received[seat]
        if state.phase is Phase.PASSING and hand.passed[seat] is None:
            legal = own
            to_pass = state.rules.cards_to_pass(hand.pass_direction)
        elif state.phase is Phase.PLAYING and hand.turn == seat and own:
            legal = legal_cards(state.rules, hand, seat)
    return SeatView(public_view(state), seat, own, legal, passed, received, to_pass)


@functools.lru_cache(maxsize=4096)  # a completed trick never changes: every view shares it
def _trick_view(trick: CompletedTrick) -> TrickView:
    return TrickView(trick.number, trick.leader, _plays(trick.plays), trick.winner, trick.points)


def _plays(plays: tuple[tuple[int, Card], ...]) -> tuple[Play, ...]:
    return tuple(map(_play, plays))


_play = Play._make
