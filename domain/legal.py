"""Which cards a seat may play now: the rules of leading and following, in one place.

``decide``, the views and the bots (their play-outs too) ask here. The rules narrow the hand step
by step, on card masks (domain/cards.py); ``legal_mask`` gives what is left, and a card that a
step removes is illegal for that step's reason, which is how ``play_violation`` names the rule a
play breaks.
"""

from __future__ import annotations

from .cards import ALL_CARDS, DECK, SUIT_MASKS, Card, cards_of
from .errors import (
    HeartsNotBroken,
    MustFollowSuit,
    MustLeadLowestClub,
    MustPlayQueen,
    NoPointsOnFirstTrick,
    RuleViolation,
)
from .rules import RuleOptions
from .state import HandState
from .tablerules import HIGH_SPADES, QS_BIT, TableRules, table_rules

_CLUBS = SUIT_MASKS[0]
_SPADES = 2
_SUIT_NAMES = ("club", "diamond", "spade", "heart")


def legal_mask(
    r: TableRules,
    held: int,
    led: int,
    first_trick: bool,
    hearts_broken: bool,
    trick_cards: int,
) -> int:
    """The cards of ``held`` that may be played: ``led`` is the suit led (-1: leading), and
    ``trick_cards`` the mask of the trick's cards (read only under must_play_queen_when_safe)."""
    if led >= 0:
        same = held & SUIT_MASKS[led]
        allowed = same or held
        if first_trick and r.no_points_on_first_trick:
            allowed = allowed & ~r.penalty_mask or allowed
        if (
            r.must_play_queen_when_safe
            and allowed & QS_BIT
            and (not same or (led == _SPADES and trick_cards & HIGH_SPADES))
        ):
            return QS_BIT
        return allowed
    if first_trick and r.lowest_club_leads:
        clubs = held & _CLUBS
        if clubs:
            return clubs & -clubs
    allowed = held
    if r.hearts_when_broken and not hearts_broken:
        others = held & ~r.penalty_suit_mask
        if others and not (r.hearts_and_queen_may_lead_hearts and others == QS_BIT):
            allowed = others
    if first_trick and r.no_points_on_first_trick:
        allowed = allowed & ~r.penalty_mask or allowed
    return allowed


def hand_legal_mask(rules: RuleOptions, hand: HandState, seat: int) -> int:
    """``legal_mask`` of ``seat`` in a hand of the game's state."""
    return table_legal_mask(table_rules(rules), hand, seat)


def table_legal_mask(r: TableRules, hand: HandState, seat: int) -> int:
    """``hand_legal_mask`` with the options already compiled (``decide`` has them at hand)."""
    trick = hand.trick
    held = hand.cards >> (52 * seat) & ALL_CARDS
    if not trick:
        return legal_mask(r, held, -1, not hand.tricks, hand.hearts_broken, 0)
    cards = 0
    if r.must_play_queen_when_safe:
        for _, card in trick:
            cards |= card.bit
    return legal_mask(r, held, trick[0][1].suit_index, not hand.tricks, hand.hearts_broken, cards)


def legal_plays(rules: RuleOptions, hand: HandState, seat: int) -> frozenset[Card]:
    """Every card ``seat`` may play to the current trick (whether or not it is its turn)."""
    return frozenset(cards_of(hand_legal_mask(rules, hand, seat)))


def legal_cards(rules: RuleOptions, hand: HandState, seat: int) -> tuple[Card, ...]:
    """``legal_plays`` in deck order (the order a sorted hand shows)."""
    return cards_of(table_legal_mask(table_rules(rules), hand, seat))  # a call fewer per play


def play_violation(
    rules: RuleOptions, hand: HandState, seat: int, card: Card
) -> RuleViolation | None:
    """The rule that playing ``card`` would break, or None if it is legal. Card must be held."""
    if hand_legal_mask(rules, hand, seat) & card.bit:
        return None
    r = table_rules(rules)
    held = hand.held_by(seat)
    bit = card.bit
    first_trick = not hand.tricks
    if hand.trick:
        # The steps of following, in order; the first that removes the card names the rule.
        led = hand.trick[0][1].suit_index
        allowed = held
        same = held & SUIT_MASKS[led]
        if same:
            allowed = same
            if not bit & allowed:
                return MustFollowSuit(f"must follow suit: you hold a {_SUIT_NAMES[led]}")
        if first_trick and r.no_points_on_first_trick:
            allowed = allowed & ~r.penalty_mask or allowed
            if not bit & allowed:
                return _no_points_violation()
        return MustPlayQueen("you must play the queen of spades now that it is safe")
    if first_trick and r.lowest_club_leads and held & _CLUBS:
        club = DECK[((held & _CLUBS) & -(held & _CLUBS)).bit_length() - 1]
        return MustLeadLowestClub(f"the first lead must be {club}")
    allowed = held
    if r.hearts_when_broken and not hand.hearts_broken:
        others = held & ~r.penalty_suit_mask
        if others and not (r.hearts_and_queen_may_lead_hearts and others == QS_BIT):
            allowed = others
        if not bit & allowed:
            suit = rules.penalty_suit.name.lower()
            return HeartsNotBroken(f"{suit} are not broken: lead another suit")
    return _no_points_violation()


def lowest_club(held: int) -> Card | None:
    """The lowest club of a mask of cards, if it holds one."""
    clubs = held & _CLUBS
    return DECK[(clubs & -clubs).bit_length() - 1] if clubs else None


def _no_points_violation() -> RuleViolation:
    return NoPointsOnFirstTrick("no penalty cards on the first trick while you hold another card")
