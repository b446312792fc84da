"""Inside the domain a hand is a card mask; what readers outside it see stays cards."""

from __future__ import annotations

from domain.cards import DECK, cards_of, mask_of
from domain.legal import legal_cards, legal_plays

from .given import seated


def test_a_mask_holds_the_cards_it_was_made_of_in_deck_order() -> None:
    assert cards_of(mask_of(reversed(DECK))) == DECK
    assert [c.bit for c in DECK] == [1 << i for i in range(52)]
    assert cards_of(0) == ()


def test_the_hand_reads_the_dealt_cards_back_per_seat() -> None:
    story = seated().deal("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", None, None, None)
    hand = story.state.hand
    assert hand is not None
    dealt = hand.dealt
    assert hand.hands == tuple(frozenset(h) for h in dealt)
    assert hand.held == tuple(mask_of(h) for h in dealt)
    assert all(cards_of(hand.held_by(s)) == dealt[s] for s in range(4))


def test_legal_cards_are_the_legal_plays_in_deck_order() -> None:
    story = seated().deal("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", None, None, None)
    hand = story.state.hand
    assert hand is not None
    for seat in range(4):
        cards = legal_cards(story.state.rules, hand, seat)
        assert frozenset(cards) == legal_plays(story.state.rules, hand, seat)
        assert list(cards) == sorted(cards, key=lambda c: c.index)
