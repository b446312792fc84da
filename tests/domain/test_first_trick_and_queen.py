"""No penalty cards on the first trick, and the queen of spades played as soon as it is safe."""

from __future__ import annotations

from domain import Card
from domain.errors import HeartsNotBroken, MustFollowSuit, MustPlayQueen, NoPointsOnFirstTrick
from domain.events import CardPlayed

from .given import card_set, cards, given, opts, play_card, seated

COMPUTER = opts(preset="computer", pass_cycle="hold_always")
QUEEN = opts(must_play_queen_when_safe=True, pass_cycle="hold_always")

# Seat 0 gets every club (so it leads 2C and wins trick 1); the others are void in clubs.
ONLY_PENALTY_CARDS = "QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"
JD_QS_AND_HEARTS = "JD QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH"


def test_the_computer_preset_forbids_penalty_cards_on_the_first_trick() -> None:
    assert COMPUTER.no_points_on_first_trick


def test_a_hand_void_in_clubs_holding_only_hearts_and_the_queen_may_play_any_of_them() -> None:
    story = seated(COMPUTER).deal(None, ONLY_PENALTY_CARDS).play("2C")
    assert set(story.legal(1)) == card_set(ONLY_PENALTY_CARDS)
    given(story).when(play_card(1, "QS")).then(CardPlayed(1, Card("QS")))
    given(story).when(play_card(1, "7H")).then(CardPlayed(1, Card("7H")))


def test_a_hand_holding_jd_queen_and_hearts_must_play_jd_on_the_first_trick() -> None:
    story = seated(COMPUTER).deal(None, JD_QS_AND_HEARTS).play("2C")
    assert story.legal(1) == cards("JD")
    given(story).when(play_card(1, "QS")).raises(
        NoPointsOnFirstTrick, "no penalty cards on the first trick"
    )
    given(story).when(play_card(1, "2H")).raises(NoPointsOnFirstTrick)
    given(story).when(play_card(1, "JD")).then(CardPlayed(1, Card("JD")))


def test_without_the_option_any_card_may_be_discarded_on_the_first_trick() -> None:
    story = seated(opts(pass_cycle="hold_always")).deal(None, JD_QS_AND_HEARTS).play("2C")
    assert set(story.legal(1)) == card_set(JD_QS_AND_HEARTS)
    given(story).when(play_card(1, "QS")).then(CardPlayed(1, Card("QS")))


def test_penalty_cards_may_be_played_from_the_second_trick() -> None:
    story = seated(COMPUTER).deal(None, JD_QS_AND_HEARTS)
    story = story.play("2C JD").play_out(leave=48)  # every seat is void in clubs: seat 0 wins
    assert story.hand.turn == 0
    story = story.play("3C")
    assert set(story.legal(1)) == card_set("QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH")
    given(story).when(play_card(1, "QS")).then(CardPlayed(1, Card("QS")))


def test_following_suit_comes_before_the_no_points_rule() -> None:
    rules = opts(preset="computer", first_lead="left_of_dealer", pass_cycle="hold_always")
    hands = (
        None,
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS 2H",
        "QS 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD",
    )
    story = seated(rules).deal(*hands).play("2S")
    assert story.legal(2) == cards("QS")  # the queen is its only spade
    given(story).when(play_card(2, "2D")).raises(MustFollowSuit)


def test_with_the_option_the_first_lead_may_not_be_a_penalty_card() -> None:
    rules = opts(preset="computer", first_lead="left_of_dealer", pass_cycle="hold_always")
    story = seated(rules).deal(None, "QS 2D 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH")
    assert story.legal() == cards("2D")
    given(story).when(play_card(1, "QS")).raises(NoPointsOnFirstTrick)
    given(story).when(play_card(1, "2H")).raises(HeartsNotBroken)


def test_a_first_leader_with_only_hearts_and_the_queen_leads_the_queen() -> None:
    rules = opts(preset="computer", first_lead="left_of_dealer", pass_cycle="hold_always")
    story = seated(rules).deal(None, ONLY_PENALTY_CARDS)
    assert story.legal() == cards("QS")


def test_with_diamonds_the_penalty_suit_hearts_are_clean_on_the_first_trick() -> None:
    rules = opts(preset="computer", penalty_suit="diamonds", pass_cycle="hold_always")
    hand = "QS 2D 3D 4D 5D 6D 7D 8D 2H 3H 4H 5H 6H"
    story = seated(rules).deal(None, hand).play("2C")
    assert story.legal(1) == cards("2H 3H 4H 5H 6H")
    given(story).when(play_card(1, "2D")).raises(NoPointsOnFirstTrick)


# -- must play the queen when it is safe ---------------------------------------------------------


def test_a_player_void_in_the_suit_led_must_play_the_queen() -> None:
    story = seated(QUEEN).deal(None, "QS 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD").play("2C")
    assert story.legal(1) == cards("QS")
    given(story).when(play_card(1, "2D")).raises(
        MustPlayQueen, "must play the queen of spades now that it is safe"
    )
    given(story).when(play_card(1, "QS")).then(CardPlayed(1, Card("QS")))


# Trick 1: 2C AC KC 7S, seat 1 wins and leads a spade; seat 2 holds QS and three low spades.
SPADES = (
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC 2H 7H",
    "AC AS KS 2S 3S 2D 3D 4D 5D 6D 7D 8D 9D",
    "KC QS 4S 5S 6S TD JD QD KD AD 3H 4H 5H",
)


def test_a_spade_trick_with_the_ace_already_in_it_forces_the_queen() -> None:
    story = seated(QUEEN).deal(*SPADES).play("2C AC KC 7S", "AS")
    assert story.legal(2) == cards("QS")
    given(story).when(play_card(2, "4S")).raises(MustPlayQueen)


def test_a_spade_trick_with_the_king_already_in_it_forces_the_queen() -> None:
    story = seated(QUEEN).deal(*SPADES).play("2C AC KC 7S", "KS")
    assert story.legal(2) == cards("QS")


def test_a_spade_trick_below_the_king_does_not_force_the_queen() -> None:
    story = seated(QUEEN).deal(*SPADES).play("2C AC KC 7S", "2S")
    assert story.legal(2) == cards("4S 5S 6S QS")
    given(story).when(play_card(2, "4S")).then(CardPlayed(2, Card("4S")))


def test_a_player_following_another_suit_need_not_play_the_queen() -> None:
    story = seated(QUEEN).deal(*SPADES).play("2C AC")
    assert story.legal(2) == cards("KC")


def test_without_the_option_the_queen_is_never_forced() -> None:
    story = seated(opts(pass_cycle="hold_always")).deal(*SPADES).play("2C AC KC 7S", "AS")
    assert story.legal(2) == cards("4S 5S 6S QS")


def test_no_points_on_the_first_trick_outranks_playing_the_queen() -> None:
    rules = opts(preset="computer", must_play_queen_when_safe=True, pass_cycle="hold_always")
    story = seated(rules).deal(None, "QS 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD").play("2C")
    assert Card("QS") not in story.legal(1)
    given(story).when(play_card(1, "QS")).raises(NoPointsOnFirstTrick)
