"""The trick rules (domain/tablerules.py), the one place the decider, the play-out model and the
inference resolve a trick (issue 35)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from domain.cards import DECK, QUEEN_OF_SPADES
from domain.rules import RuleOptions
from domain.tablerules import breaks_hearts, leading_play, resolve_trick, table_rules, takes_kitty
from tests.rule_strategies import rule_options

STANDARD = table_rules(RuleOptions())


def test_the_highest_card_of_the_suit_led_wins_and_the_trick_scores_its_cards() -> None:
    # Given 5C led, then KD (off suit), 9C, QS (off suit): 9C wins, with the queen's 13.
    plays = [(0, 3), (1, 24), (2, 7), (3, QUEEN_OF_SPADES.index)]
    assert leading_play(plays) == (2, 7)
    winner, points, penalty, cards = resolve_trick(STANDARD, plays)
    assert (winner, points, penalty) == (2, 13, 13)
    assert cards == sum(1 << c for _, c in plays)


@given(st.lists(st.sampled_from(range(52)), min_size=4, max_size=4, unique=True))
def test_resolve_trick_agrees_with_leading_play(cards: list[int]) -> None:
    plays = list(enumerate(cards))
    winner, points, _, mask = resolve_trick(STANDARD, plays)
    assert winner == leading_play(plays)[0]
    assert points == sum(STANDARD.points[c] for c in cards)
    assert mask.bit_count() == 4


def test_the_kitty_goes_with_the_first_penalty_or_the_last_trick() -> None:
    kitty = table_rules(RuleOptions(players=3, kitty=True))
    heart = 1 << 39
    assert takes_kitty(kitty, False, heart, False)
    assert not takes_kitty(kitty, True, heart, True)  # taken already
    assert not takes_kitty(kitty, False, 1, False)  # a club trick mid-hand
    assert takes_kitty(kitty, False, 1, True)  # the last trick
    assert not takes_kitty(STANDARD, False, heart, True)  # no kitty in the rules


def test_hearts_break_on_a_heart_and_the_queen_only_when_the_rules_say() -> None:
    queen = QUEEN_OF_SPADES.index
    assert breaks_hearts(STANDARD, 39) and not breaks_hearts(STANDARD, 0)
    assert breaks_hearts(STANDARD, queen) is RuleOptions().queen_breaks_hearts
    other = table_rules(RuleOptions(queen_breaks_hearts=not RuleOptions().queen_breaks_hearts))
    assert breaks_hearts(other, queen) is not RuleOptions().queen_breaks_hearts


@given(
    rule_options(),
    st.lists(st.sampled_from(range(52)), min_size=3, max_size=6, unique=True),
)
def test_a_tricks_points_are_its_cards_points_under_every_option(
    rules: RuleOptions, cards: list[int]
) -> None:
    # Given any options and any cards played in a trick, when it is resolved, then it scores
    # each card's points, its penalty the points of its penalty cards, and the winner is the
    # highest card of the suit led.
    r = table_rules(rules)
    plays = list(enumerate(cards))
    winner, points, penalty, mask = resolve_trick(r, plays)
    led = cards[0] // 13
    assert winner == cards.index(max(c for c in cards if c // 13 == led))
    assert points == sum(rules.card_points(DECK[c]) for c in cards)
    assert penalty == sum(rules.card_points(DECK[c]) for c in cards if r.penalty_mask >> c & 1)
    assert mask == sum(1 << c for c in cards)
