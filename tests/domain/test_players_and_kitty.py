"""3 to 6 players (the cards taken out, hand sizes, no 'across' for odd counts) and the kitty."""

from __future__ import annotations

import pytest

from domain import DECK, Card, PassDirection, PlayCard, RuleOptions
from domain.dealing import cards_in_play, deal_from_seed
from domain.errors import InvalidRules
from domain.events import CardPlayed, HandScored, TrickTaken
from domain.shuffle import shuffled

from .given import HOLD, cards, given, opts, play_card, seated


@pytest.mark.parametrize(
    ("players", "removed", "hand_size", "cycle"),
    [
        (3, "2C", 17, "left right hold"),
        (4, "", 13, "left right across hold"),
        (5, "2C 2D", 10, "left right hold"),
        (6, "2C 2D 3C 3D", 8, "left right across hold"),
    ],
)
def test_player_counts_remove_the_lowest_cards_so_the_deal_comes_out_even(
    players: int, removed: str, hand_size: int, cycle: str
) -> None:
    rules = opts(players=players)
    assert rules.cards_out_of_play == cards(removed)
    assert rules.hand_size == hand_size
    assert " ".join(d.value for d in rules.pass_cycle) == cycle
    story = seated(rules).deal_seeded("players")
    assert [len(h) for h in story.hand.hands] == [hand_size] * players
    assert story.hand.kitty == ()
    dealt = {c for h in story.hand.hands for c in h}
    assert dealt == set(DECK) - set(cards(removed))


def test_with_diamonds_the_penalty_suit_spades_are_taken_out_instead() -> None:
    rules = opts(players=5, penalty_suit="diamonds")
    assert rules.cards_out_of_play == cards("2C 2S")


@pytest.mark.parametrize("players", [3, 5])
def test_nobody_sits_across_with_an_odd_number_of_players(players: int) -> None:
    with pytest.raises(InvalidRules, match="nobody sits across"):
        opts(players=players, pass_cycle="standard")
    with pytest.raises(InvalidRules, match="nobody sits across"):
        RuleOptions(players=players).validated()


@pytest.mark.parametrize("players", [3, 5, 6])
def test_the_lowest_club_left_in_play_leads(players: int) -> None:
    rules = opts(players=players, pass_cycle="hold_always")
    lowest = min((c for c in cards_in_play(rules) if c.suit.value == "C"), key=lambda c: c.rank)
    story = seated(rules).deal_seeded("lowest club")
    assert lowest in story.holding(story.hand.turn)  # type: ignore[arg-type]
    assert story.legal() == (lowest,)


def test_three_players_pass_left_then_right_then_hold() -> None:
    rules = opts(players=3)
    assert [rules.pass_direction(n) for n in (1, 2, 3, 4)] == [
        PassDirection.LEFT,
        PassDirection.RIGHT,
        PassDirection.HOLD,
        PassDirection.LEFT,
    ]


def test_a_trick_has_one_card_per_player() -> None:
    rules = opts(players=3, pass_cycle="hold_always")
    story = seated(rules).deal_seeded("three").play_out(leave=3 * 17 - 2)
    assert len(story.hand.trick) == 2
    seat = story.hand.turn
    assert seat is not None
    events = given(story).when(PlayCard(seat, story.legal()[0])).events()
    assert isinstance(events[-1], TrickTaken) and len(events[-1].plays) == 3


def test_the_seeded_deal_goes_one_card_at_a_time_clockwise_from_the_dealers_left() -> None:
    rules = opts(players=5)
    deck = shuffled(cards_in_play(rules), "clockwise")
    hands, kitty = deal_from_seed(rules, 3, "clockwise")
    assert hands[4] == tuple(sorted(deck[0::5], key=lambda c: c.index))  # seat 4 is 3's left
    assert hands[0] == tuple(sorted(deck[1::5], key=lambda c: c.index))
    assert hands[3] == tuple(sorted(deck[4::5], key=lambda c: c.index))
    assert kitty == ()


# -- the kitty -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "hand_size", "kitty_size"), [(3, 17, 1), (4, 12, 4), (5, 10, 2), (6, 8, 4)]
)
def test_a_kitty_instead_of_removed_cards(players: int, hand_size: int, kitty_size: int) -> None:
    rules = opts(players=players, kitty=True)
    assert rules.cards_out_of_play == ()
    assert (rules.hand_size, rules.kitty_size) == (hand_size, kitty_size)
    story = seated(rules).deal_seeded("kitty")
    assert [len(h) for h in story.hand.hands] == [hand_size] * players
    assert len(story.hand.kitty) == kitty_size
    assert {c for h in story.hand.hands for c in h} | set(story.hand.kitty) == set(DECK)


KITTY_DEAL = (
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC",
    "AC 6D 7D 8D 9D TD JD QD KD AD 2S 3S",
    "4S 5S 6S 7S 8S 9S TS JS QS KS AS 2H",
    "5D 3H 4H 6H 7H 8H 9H TH JH QH KH AH",
)


def test_the_kitty_goes_with_the_first_penalty_card_taken() -> None:
    rules = opts(kitty=True, pass_cycle="hold_always")
    story = seated(rules).deal(*KITTY_DEAL, kitty="2D 3D 4D 5H").play("2C AC 4S")
    first = ((0, Card("2C")), (1, Card("AC")), (2, Card("4S")), (3, Card("5D")))
    story = (
        given(story)
        .when(play_card(3, "5D"))
        .then(
            CardPlayed(3, Card("5D")),
            TrickTaken(1, 1, first, 0, ()),  # no penalty card: no kitty
        )
    )
    story = story.play("6D 2H 3H")
    second = ((1, Card("6D")), (2, Card("2H")), (3, Card("3H")), (0, Card("3C")))
    story = (
        given(story)
        .when(play_card(0, "3C"))
        .then(CardPlayed(0, Card("3C")), TrickTaken(2, 1, second, 3, cards("2D 3D 4D 5H")))
    )
    assert set(cards("2D 3D 4D 5H")) <= set(story.hand.taken[1])
    story = story.play("7D 5S 4H 4C")
    third = ((1, Card("7D")), (2, Card("5S")), (3, Card("4H")), (0, Card("4C")))
    assert story.events[-1] == TrickTaken(3, 1, third, 1, ())  # the kitty goes only once


def test_the_kittys_points_count_for_whoever_takes_it() -> None:
    rules = opts(kitty=True, pass_cycle="hold_always")
    story = seated(rules).deal(*KITTY_DEAL, kitty="2D 3D 4D 5H").play_out()
    scored = story.events[-1]
    assert isinstance(scored, HandScored)
    assert scored.points_taken[1] >= 3 and sum(scored.points_taken) == 26


def test_the_default_rules_have_no_kitty() -> None:
    assert HOLD.kitty is False and HOLD.kitty_size == 0
