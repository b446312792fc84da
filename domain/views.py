"""What one seat may see, and what anyone may see: never another seat's hidden cards.

What is hidden from whom is not decided here: the views ask :func:`domain.secrecy.may_see`, the
one authority (the same that redacts logged events), for each secret the hand in play holds.
The public view shows no secret at all: counts and played cards only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import Card, cards_of
from .legal import legal_cards
from .scoring import find_shot
from .secrecy import HAND, PASSED, RECEIVED, Secret, may_see, moment_of
from .state import CompletedTrick, GameState, Phase


@dataclass(frozen=True, slots=True)
class TrickView:
    number: int
    leader: int
    plays: tuple[tuple[int, Card], ...]
    winner: int | None = None
    points: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "leader": self.leader,
            "cards": [{"seat": s, "card": str(c)} for s, c in self.plays],
            "winner": self.winner,
            "points": self.points,
        }


@dataclass(frozen=True, slots=True)
class SeatSummary:
    seat: int
    name: str | None
    bot: str | None
    player_id: str | None  # the registered player who joined the seat
    guest: bool  # a person joined it without a player's key
    hand_size: int
    points_this_hand: int
    has_passed: bool


@dataclass(frozen=True, slots=True)
class PublicView:
    game_id: str
    phase: str
    rules: dict[str, Any]
    hand_number: int
    dealer: int | None
    pass_direction: str | None
    turn: int | None  # the seat to play, or None (while passing every seat that has not)
    awaiting: tuple[int, ...]  # every seat that must act now
    current_trick: tuple[tuple[int, Card], ...]
    tricks: tuple[TrickView, ...]  # this hand's completed tricks
    hearts_broken: bool
    scores: tuple[int, ...]
    seats: tuple[SeatSummary, ...]
    seed_commitment: str | None
    moon_shooter: int | None
    # While the shooter chooses how its shot scores: "moon" or "sun" and the points at stake
    # (the rules' moon_points or sun_points), so no reader works them out again.
    shot: dict[str, Any] | None
    winners: tuple[int, ...]
    abandoned_by: int | None = None  # the seat that left, ending the game (GameAbandoned)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.game_id,
            "phase": self.phase,
            "rules": self.rules,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "pass_direction": self.pass_direction,
            "turn": self.turn,
            "awaiting": list(self.awaiting),
            "current_trick": [{"seat": s, "card": str(c)} for s, c in self.current_trick],
            "tricks": [t.to_dict() for t in self.tricks],
            "hearts_broken": self.hearts_broken,
            "scores": list(self.scores),
            "seats": [
                {
                    "seat": s.seat,
                    "name": s.name,
                    "bot": s.bot,
                    "player_id": s.player_id,
                    "guest": s.guest,
                    "hand_size": s.hand_size,
                    "points_this_hand": s.points_this_hand,
                    "has_passed": s.has_passed,
                }
                for s in self.seats
            ],
            "seed_commitment": self.seed_commitment,
            "moon_shooter": self.moon_shooter,
            "shot": self.shot,
            "winners": list(self.winners),
            "abandoned_by": self.abandoned_by,
        }


@dataclass(frozen=True, slots=True)
class SeatView:
    public: PublicView
    seat: int
    hand: tuple[Card, ...]
    legal_cards: tuple[Card, ...]  # what this seat may pass or play now; empty if not its turn
    passed_cards: tuple[Card, ...] | None
    received_cards: tuple[Card, ...]  # once every seat has passed
    cards_to_pass: int
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = self.public.to_dict()
        out.update(
            seat=self.seat,
            hand=[str(c) for c in self.hand],
            legal_cards=[str(c) for c in self.legal_cards],
            passed_cards=None if self.passed_cards is None else [str(c) for c in self.passed_cards],
            received_cards=[str(c) for c in self.received_cards],
            cards_to_pass=self.cards_to_pass,
        )
        return out


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
        rules=rules.to_dict(),
        hand_number=state.hand_number,
        dealer=hand.dealer if hand is not None else None,
        pass_direction=hand.pass_direction.value if hand is not None else None,
        turn=hand.turn if hand is not None and state.phase is Phase.PLAYING else None,
        awaiting=awaiting(state),
        current_trick=hand.trick if hand is not None else (),
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


def _shot(state: GameState) -> dict[str, Any] | None:
    hand = state.hand
    if state.phase is not Phase.MOON_CHOICE or hand is None:
        return None
    shot = find_shot(state.rules, hand.taken, hand.tricks_won)
    return None if shot is None else {"kind": shot.kind, "points": shot.points}


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


def _trick_view(trick: CompletedTrick) -> TrickView:
    return TrickView(trick.number, trick.leader, trick.plays, trick.winner, trick.points)
