"""Cards as bits, the domain's representation (domain/cards.py): helpers for the bots' play.

Card ``c`` (its ``Card.index``, 0..51) is bit ``1 << c`` of a hand mask.

Suits are 13 bits each in deck order (clubs, diamonds, spades, hearts) and ranks rise with the
bit, so "the highest spade I hold" is one ``bit_length`` away. The bots' inner loops run on
these plain ints; ``Card`` objects appear only at the edges.
"""

from __future__ import annotations

from collections.abc import Iterator

from domain.cards import ALL_CARDS, DECK, SUIT_MASKS, Card, cards_of, mask_of  # noqa: F401  (the bots read them from here too)

CLUBS, DIAMONDS, SPADES, HEARTS = 0, 1, 2, 3
SUIT_MASK = SUIT_MASKS

TWO_C = 0
QS = 2 * 13 + 10
KS = 2 * 13 + 11
AS = 2 * 13 + 12
JD = 13 + 9
QS_BIT, KS_BIT, AS_BIT = 1 << QS, 1 << KS, 1 << AS


def suit(card: int) -> int:
    return card // 13


def rank(card: int) -> int:
    """0 for a two .. 12 for an ace."""
    return card % 13


def highest(mask: int) -> int:
    return mask.bit_length() - 1


def lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def above(card: int) -> int:
    """Every bit above ``card`` (mask with a suit mask for the higher cards of its suit)."""
    return ALL_CARDS & ~((2 << card) - 1)


def below(card: int) -> int:
    return (1 << card) - 1


def bits(mask: int) -> Iterator[int]:
    """The cards of a mask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def card_of(index: int) -> Card:
    return DECK[index]
