"""The deal: who deals each hand, and which cards each seat gets (from a seed, or as given)."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import DECK, Card, InvalidCard, parse_cards, sort_cards
from .errors import InvalidDeal
from .rules import RuleOptions
from .shuffle import shuffled
from .tablerules import table_rules

Hands = tuple[tuple[Card, ...], ...]


def dealer_of(hand_number: int, players: int) -> int:
    """Seat 0 deals the first hand; the deal passes clockwise."""
    return (hand_number - 1) % players


def cards_in_play(rules: RuleOptions) -> tuple[Card, ...]:
    out = set(rules.cards_out_of_play)
    return tuple(c for c in DECK if c not in out)


def deal_from_seed(rules: RuleOptions, dealer: int, seed: str) -> tuple[Hands, tuple[Card, ...]]:
    """Shuffle by the seed, then deal one at a time clockwise from the dealer's left."""
    r = table_rules(rules)
    deck = shuffled(r.in_play_cards, seed)
    n, dealt = r.players, r.players * r.hand_size
    # Card k goes to seat (dealer + 1 + k) % n, so seat s gets every n-th card from the first
    # k with that remainder: a slice, not a loop per card (every deal runs this).
    hands = tuple(sort_cards(deck[(s - dealer - 1) % n : dealt : n]) for s in range(n))
    return hands, tuple(deck[dealt:])


def check_explicit_deal(
    rules: RuleOptions, hands: Sequence[Sequence[Card]], kitty: Sequence[Card] | None
) -> tuple[Hands, tuple[Card, ...]]:
    """An explicit deal if it uses every card in play exactly once; else InvalidDeal."""
    if isinstance(hands, str) or not isinstance(hands, Sequence):
        raise InvalidDeal("a deal is a list of hands")
    hands = [_cards(hand) for hand in hands]
    kitty = None if kitty is None else _cards(kitty)
    if len(hands) != rules.players:
        raise InvalidDeal(f"a deal has {rules.players} hands, not {len(hands)}")
    for seat, hand in enumerate(hands):
        if len(hand) != rules.hand_size:
            raise InvalidDeal(f"seat {seat} must be dealt {rules.hand_size} cards, not {len(hand)}")
    in_play = set(cards_in_play(rules))
    dealt = [c for hand in hands for c in hand]
    if len(set(dealt)) != len(dealt):
        raise InvalidDeal("a card is dealt twice")
    stray = [c for c in dealt if c not in in_play]
    if stray:
        raise InvalidDeal(f"{stray[0]} is out of play in these rules")
    rest = sort_cards(in_play - set(dealt))
    if kitty is not None and set(kitty) != set(rest):
        raise InvalidDeal("the kitty must be exactly the cards not dealt to a seat")
    return tuple(sort_cards(h) for h in hands), rest


def _cards(texts: object) -> tuple[Card, ...]:
    """Cards of an explicit deal (Cards or their text); InvalidDeal if any names no card."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidDeal("a hand (and the kitty) is a list of cards")
    try:
        return parse_cards(texts)
    except InvalidCard as bad:
        raise InvalidDeal(str(bad)) from None
