"""The rule options compiled to ints and card masks, once per options: what hot paths read.

``decide``, ``evolve``, ``legal_plays`` and the bots' play-outs ask "is this a penalty card?",
"how many points is this trick?" many times a hand; here each answer is a mask or a table
lookup (cards as bits: see domain/cards.py).
"""

from __future__ import annotations

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
    points: tuple[int, ...]  # per card index: RuleOptions.card_points
    bonus: int  # the bonus card's index, or -1
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
        points=tuple(rules.card_points(c) for c in DECK),
        bonus=rules.bonus_card.index if rules.bonus_card is not None else -1,
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
