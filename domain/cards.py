"""Cards, suits and ranks.

A card is written rank then suit: ``2C`` ... ``TC`` ``JC`` ``QC`` ``KC`` ``AC``. Input also accepts
``10C``, lower case, and suit symbols (``Q♠``). Every card is an interned ``Card``: a ``str``
subclass, so it is its own JSON form, hashes fast, and compares equal to its text.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from operator import attrgetter
from typing import ClassVar


class Suit(Enum):
    """The four suits, in the order a sorted hand shows them."""

    CLUBS = "C"
    DIAMONDS = "D"
    SPADES = "S"
    HEARTS = "H"

    @property
    def symbol(self) -> str:
        return _SUIT_SYMBOLS[self]

    @property
    def order(self) -> int:
        return _SUIT_ORDER[self]


# Members are singletons: hash them by identity in C, not by name in Python (Enum's default),
# since suits key the per-suit card sets that every legal-play check reads.
Suit.__hash__ = object.__hash__  # type: ignore[method-assign]

_SUIT_SYMBOLS = {Suit.CLUBS: "♣", Suit.DIAMONDS: "♦", Suit.SPADES: "♠", Suit.HEARTS: "♥"}
_SUIT_ORDER = {suit: i for i, suit in enumerate(Suit)}
_SYMBOL_TO_LETTER = {"♣": "C", "♧": "C", "♦": "D", "♢": "D", "♠": "S", "♤": "S", "♥": "H", "♡": "H"}

RANK_LETTERS = "23456789TJQKA"
RANKS = range(2, 15)  # 2 .. 14, where 11 = jack, 12 = queen, 13 = king, 14 = ace


class InvalidCard(ValueError):
    """Text that names no card."""

    def __init__(self, text: object) -> None:
        super().__init__(f"not a card: {text!r} (write cards like 2C, 10H, QS or Q♠)")
        self.text = text


class Card(str):
    """One playing card; ``Card("q♠") is Card("QS")``."""

    suit: Suit
    rank: int
    index: int  # 0..51 in deck order: clubs 2..A, diamonds, spades, hearts
    bit: int  # 1 << index: the card in a mask of cards (see mask_of)
    suit_index: int  # 0..3: clubs, diamonds, spades, hearts (index // 13)

    _interned: ClassVar[dict[str, Card]] = {}

    def __new__(cls, text: str) -> Card:
        try:
            return cls._interned[text]
        except (KeyError, TypeError):
            pass
        canonical = _canonical_text(text)
        try:
            # Only canonical spellings are cached: user input must not grow the cache.
            return cls._interned[canonical]
        except KeyError:
            raise InvalidCard(text) from None

    @classmethod
    def _make(cls, rank: int, suit: Suit) -> Card:
        card = str.__new__(cls, RANK_LETTERS[rank - 2] + suit.value)
        card.suit = suit
        card.rank = rank
        card.index = suit.order * 13 + rank - 2
        card.bit = 1 << card.index
        card.suit_index = suit.order
        return card

    @property
    def pretty(self) -> str:
        """The card with its suit symbol, e.g. ``Q♠``."""
        return self[0].replace("T", "10") + self.suit.symbol

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    # Cards are immutable singletons: copying one gives the same card back.
    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __reduce__(self) -> tuple[type[Card], tuple[str]]:
        return (Card, (str(self),))


def _canonical_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidCard(text)
    t = text.strip().upper()
    if t and t[-1] in _SYMBOL_TO_LETTER:
        t = t[:-1] + _SYMBOL_TO_LETTER[t[-1]]
    if t.startswith("10"):
        t = "T" + t[2:]
    return t


DECK: tuple[Card, ...] = tuple(Card._make(rank, suit) for suit in Suit for rank in RANKS)
for _card in DECK:
    Card._interned[str(_card)] = _card

QUEEN_OF_SPADES = Card("QS")
ACE_OF_SPADES = Card("AS")
KING_OF_SPADES = Card("KS")
JACK_OF_DIAMONDS = Card("JD")
TEN_OF_DIAMONDS = Card("TD")


def parse_cards(texts: Iterable[object]) -> tuple[Card, ...]:
    """Parse each text into a card; raises InvalidCard on the first that names none."""
    return tuple(Card(t) for t in texts)  # type: ignore[arg-type]


def sort_cards(cards: Iterable[Card]) -> tuple[Card, ...]:
    """Cards in the order a player sorts a hand: by suit (C, D, S, H), then rank."""
    return tuple(sorted(cards, key=_deck_index))


_deck_index = attrgetter("index")  # a key in C: every deal sorts each hand


# -- cards as bits -------------------------------------------------------------------------------
# Inside the domain a set of cards is an int: card ``c`` is bit ``c.index``, the suits 13 bits
# each in deck order, ranks rising with the bit. Events and views carry Cards; masks never leave.

SUIT_MASKS: tuple[int, ...] = tuple(0x1FFF << (13 * s) for s in range(4))
ALL_CARDS = (1 << 52) - 1


def mask_of(cards: Iterable[Card]) -> int:
    """The mask of some cards (Cards, not their text)."""
    m = 0
    for c in cards:
        m |= c.bit
    return m


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a mask, in deck order (the order a sorted hand shows)."""
    out = []
    deck = DECK
    while mask:
        low = mask & -mask
        out.append(deck[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


def cards_of_suit(cards: Iterable[Card], suit: Suit) -> list[Card]:
    return [c for c in cards if c.suit is suit]
