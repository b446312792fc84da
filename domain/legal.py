"""Which cards a seat may play now: the rules of leading and following, in one place.

``decide``, the views and the bots all ask here. The rules narrow the hand step by step; a card
that a step removes is illegal for that step's reason, which is how ``play_violation`` names the
rule a play breaks.
"""

from __future__ import annotations

from collections.abc import Callable

from .cards import ACE_OF_SPADES, DECK, KING_OF_SPADES, QUEEN_OF_SPADES, Card, Suit
from .errors import (
    HeartsNotBroken,
    MustFollowSuit,
    MustLeadLowestClub,
    MustPlayQueen,
    NoPointsOnFirstTrick,
    RuleViolation,
)
from .rules import FirstLead, HeartsLead, RuleOptions
from .state import HandState

Step = tuple[frozenset[Card], Callable[[], RuleViolation]]

# Every card of each suit: the steps narrow a hand to a suit, or remove one, by set operations.
SUIT_CARDS: dict[Suit, frozenset[Card]] = {
    suit: frozenset(c for c in DECK if c.suit is suit) for suit in Suit
}
_CLUBS = SUIT_CARDS[Suit.CLUBS]


def legal_plays(rules: RuleOptions, hand: HandState, seat: int) -> frozenset[Card]:
    """Every card ``seat`` may play to the current trick (whether or not it is its turn)."""
    allowed = hand.hands[seat]
    for narrowed, _ in _steps(rules, hand, seat):
        allowed = narrowed
    return allowed


def play_violation(
    rules: RuleOptions, hand: HandState, seat: int, card: Card
) -> RuleViolation | None:
    """The rule that playing ``card`` would break, or None if it is legal. Card must be held."""
    for narrowed, violation in _steps(rules, hand, seat):
        if card not in narrowed:
            return violation()
    return None


def lowest_club(cards: frozenset[Card]) -> Card | None:
    clubs = cards & _CLUBS
    return min(clubs, key=_rank) if clubs else None


def _rank(card: Card) -> int:
    return card.rank


def _steps(rules: RuleOptions, hand: HandState, seat: int) -> list[Step]:
    held = hand.hands[seat]
    if hand.trick:
        return _follow_steps(rules, hand, held)
    return _lead_steps(rules, hand, held)


def _lead_steps(rules: RuleOptions, hand: HandState, held: frozenset[Card]) -> list[Step]:
    steps: list[Step] = []
    if hand.first_trick and rules.first_lead is FirstLead.LOWEST_CLUB:
        club = lowest_club(held)
        if club is not None:
            return [
                (frozenset((club,)), lambda: MustLeadLowestClub(f"the first lead must be {club}"))
            ]
    allowed = held
    if rules.hearts_lead is HeartsLead.WHEN_BROKEN and not hand.hearts_broken:
        allowed = _unbroken_leads(rules, allowed)
        suit = rules.penalty_suit.name.lower()
        steps.append(
            (allowed, lambda: HeartsNotBroken(f"{suit} are not broken: lead another suit"))
        )
    if hand.first_trick and rules.no_points_on_first_trick:
        allowed = _without_points(rules, allowed)
        steps.append((allowed, _no_points_violation))
    return steps


def _unbroken_leads(rules: RuleOptions, held: frozenset[Card]) -> frozenset[Card]:
    """Before hearts are broken: no heart lead, unless nothing else (or only QS) is held."""
    others = held - SUIT_CARDS[rules.penalty_suit]
    if not others:
        return held
    if rules.hearts_and_queen_may_lead_hearts and others == {QUEEN_OF_SPADES}:
        return held
    return others


def _follow_steps(rules: RuleOptions, hand: HandState, held: frozenset[Card]) -> list[Step]:
    steps: list[Step] = []
    led = hand.trick[0][1].suit
    same = held & SUIT_CARDS[led]
    allowed = held
    if same:
        allowed = same
        steps.append((allowed, lambda: MustFollowSuit(f"must follow suit: you hold a {_one(led)}")))
    if hand.first_trick and rules.no_points_on_first_trick:
        allowed = _without_points(rules, allowed)
        steps.append((allowed, _no_points_violation))
    if (
        rules.must_play_queen_when_safe
        and QUEEN_OF_SPADES in allowed
        and _queen_is_safe(hand, same)
    ):
        steps.append(
            (
                frozenset((QUEEN_OF_SPADES,)),
                lambda: MustPlayQueen("you must play the queen of spades now that it is safe"),
            )
        )
    return steps


def _one(suit: Suit) -> str:
    return suit.name.lower()[:-1]  # "club", "diamond", ...


def _without_points(rules: RuleOptions, cards: frozenset[Card]) -> frozenset[Card]:
    """No penalty cards on the first trick, unless nothing else may be played."""
    clean = frozenset(c for c in cards if not rules.is_penalty_card(c))
    return clean or cards


def _no_points_violation() -> RuleViolation:
    return NoPointsOnFirstTrick("no penalty cards on the first trick while you hold another card")


def _queen_is_safe(hand: HandState, same: frozenset[Card]) -> bool:
    """Safe: discarding (void in the suit led), or following spades under the ace or king."""
    if not same:
        return True
    if hand.trick[0][1].suit is not Suit.SPADES:
        return False
    return any(card is ACE_OF_SPADES or card is KING_OF_SPADES for _, card in hand.trick)
