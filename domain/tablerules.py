"""The rule options compiled to ints and card masks, once per options: what hot paths read.

``decide``, ``evolve``, ``legal_plays`` and the bots' play-outs ask "is this a penalty card?",
"how many points is this trick?" many times a hand; here each answer is a mask or a table
lookup (cards as bits: see domain/cards.py).

The trick rules live here once, over these compiled rules and cards as indexes (suit * 13 +
rank, so a higher index of a suit is a higher card): who wins a trick (``leading_play``,
``resolve_trick``), who takes the kitty (``takes_kitty``), which card breaks hearts
(``breaks_hearts``). The decider, the bots' play-out model and their inference all call them, so
an option that changes how tricks resolve is one edit (issue 35).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import DECK, QUEEN_OF_SPADES, SUIT_MASKS, Card, mask_of
from .rules import FirstLead, HeartsLead, RuleOptions

QS_BIT = QUEEN_OF_SPADES.bit
HIGH_SPADES = DECK[2 * 13 + 11].bit | DECK[2 * 13 + 12].bit  # the king and ace of spades


@dataclass(frozen=True, slots=True)
class TableRules:
    """The rule options the play of a hand depends on, as ints and masks."""

    players: int
    hand_size: int
    in_play: int  # every card dealt to a seat or the kitty
    in_play_cards: tuple[Card, ...]  # the same cards in deck order: what a deal shuffles
    penalty_suit: int
    penalty_suit_mask: int
    penalty_mask: int  # the penalty suit and the queen of spades
    breaks_hearts: int  # the cards whose play breaks hearts (see ``breaks_hearts``)
    points: tuple[int, ...]  # per card index: RuleOptions.card_points
    penalty_points: tuple[int, ...]  # per card index: its points if a penalty card, else 0
    bonus: int  # the bonus card's index, or -1
    bonus_bit: int  # the bonus card's bit, or 0
    moon_points: int  # RuleOptions.moon_points: a hand's points
    sun_points: int  # RuleOptions.sun_points
    kitty: bool
    lowest_club_leads: bool
    hearts_when_broken: bool
    queen_breaks_hearts: bool
    hearts_and_queen_may_lead_hearts: bool
    no_points_on_first_trick: bool
    must_play_queen_when_safe: bool
    shoot_the_sun: bool


# Keyed by the options' id (hashing 21 fields would cost more than the lookup saves); the entry
# keeps the options alive, so an id is never reused while its entry is here.
_COMPILED: dict[int, tuple[RuleOptions, TableRules]] = {}
# The last options asked for and their compilation, one tuple (read and replaced whole, so a
# thread never sees one without the other): a game's moves ask for the same options in a row.
_LAST: tuple[RuleOptions | None, TableRules | None] = (None, None)


def table_rules(rules: RuleOptions) -> TableRules:
    last = _LAST
    if last[0] is rules:
        return last[1]  # type: ignore[return-value]
    return _lookup(rules)


def _lookup(rules: RuleOptions) -> TableRules:
    global _LAST
    entry = _COMPILED.get(id(rules))
    if entry is not None and entry[0] is rules:
        compiled = entry[1]
    else:
        compiled = _compile(rules)
        if len(_COMPILED) >= 256:
            _COMPILED.clear()  # bounded: clients choose the options
        _COMPILED[id(rules)] = (rules, compiled)
    _LAST = (rules, compiled)
    return compiled


def _compile(rules: RuleOptions) -> TableRules:
    from .dealing import cards_in_play  # dealing imports the rules this module compiles

    penalty_suit = rules.penalty_suit.order
    in_play = cards_in_play(rules)
    return TableRules(
        players=rules.players,
        hand_size=rules.hand_size,
        in_play=mask_of(in_play),
        in_play_cards=in_play,
        penalty_suit=penalty_suit,
        penalty_suit_mask=SUIT_MASKS[penalty_suit],
        penalty_mask=SUIT_MASKS[penalty_suit] | QS_BIT,
        breaks_hearts=SUIT_MASKS[penalty_suit] | (QS_BIT if rules.queen_breaks_hearts else 0),
        points=tuple(rules.card_points(c) for c in DECK),
        penalty_points=tuple(
            rules.card_points(c) if c.bit & (SUIT_MASKS[penalty_suit] | QS_BIT) else 0 for c in DECK
        ),
        bonus=rules.bonus_card.index if rules.bonus_card is not None else -1,
        bonus_bit=rules.bonus_card.bit if rules.bonus_card is not None else 0,
        moon_points=rules.moon_points,
        sun_points=rules.sun_points,
        kitty=rules.kitty,
        lowest_club_leads=rules.first_lead is FirstLead.LOWEST_CLUB,
        hearts_when_broken=rules.hearts_lead is HeartsLead.WHEN_BROKEN,
        queen_breaks_hearts=rules.queen_breaks_hearts,
        hearts_and_queen_may_lead_hearts=rules.hearts_and_queen_may_lead_hearts,
        no_points_on_first_trick=rules.no_points_on_first_trick,
        must_play_queen_when_safe=rules.must_play_queen_when_safe,
        shoot_the_sun=rules.shoot_the_sun,
    )


# -- the trick rules ------------------------------------------------------------------------------


# A card's bit by its index: a lookup costs less than a shift where a trick is resolved.
CARD_BITS = tuple(1 << index for index in range(52))


def leading_play(plays: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """(seat, card) of the play that wins ``plays`` so far (not empty): the highest card of the
    suit led."""
    winner, best = plays[0]
    above_suit = best - best % 13 + 13  # the lowest index above the suit led
    for seat, card in plays:
        if best < card < above_suit:  # higher, and of the suit led (best is)
            winner, best = seat, card
    return winner, best


def resolve_trick(r: TableRules, plays: Sequence[tuple[int, int]]) -> tuple[int, int, int, int]:
    """A full trick: (winner, its cards' points, its penalty cards' points, its cards as a
    mask). The kitty is not counted here: see ``takes_kitty``. The winner is ``leading_play``'s,
    found in the same pass as the points, each a table lookup (every play-out resolves
    thousands of tricks: bench.selfplay's play-out model is this function's measure)."""
    points = r.points
    penalty_points = r.penalty_points
    bits = CARD_BITS
    if len(plays) == 4:  # the common table, unrolled: the same rule as the loop below
        (s0, c0), (s1, c1), (s2, c2), (s3, c3) = plays
        winner, best = s0, c0
        above_suit = c0 - c0 % 13 + 13
        if best < c1 < above_suit:
            winner, best = s1, c1
        if best < c2 < above_suit:
            winner, best = s2, c2
        if best < c3 < above_suit:
            winner = s3
        return (
            winner,
            points[c0] + points[c1] + points[c2] + points[c3],
            penalty_points[c0] + penalty_points[c1] + penalty_points[c2] + penalty_points[c3],
            bits[c0] | bits[c1] | bits[c2] | bits[c3],
        )
    winner, best = plays[0]
    above_suit = best - best % 13 + 13
    total = penalty = cards = 0
    for seat, card in plays:
        if best < card < above_suit:
            winner, best = seat, card
        total += points[card]
        penalty += penalty_points[card]
        cards |= bits[card]
    return winner, total, penalty, cards


def takes_kitty(r: TableRules, kitty_taken: bool, trick_cards: int, last_trick: bool) -> bool:
    """Whether this trick's winner takes the kitty: the first trick that holds a penalty card
    does, else the last trick (the kitty always ends up with someone)."""
    return r.kitty and not kitty_taken and (bool(trick_cards & r.penalty_mask) or last_trick)


def breaks_hearts(r: TableRules, card: int) -> bool:
    """Whether playing ``card`` breaks hearts: a card of the penalty suit, or the queen of
    spades under ``queen_breaks_hearts``."""
    return bool(r.breaks_hearts >> card & 1)
