"""Leading and following: the first lead, following suit, winning tricks, breaking hearts."""

from __future__ import annotations

import pytest

from domain import Card
from domain.errors import HeartsNotBroken, MustFollowSuit, MustLeadLowestClub, NotYourTurn
from domain.events import CardPlayed, TrickTaken

from .given import HOLD, card_set, cards, given, opts, play_card, seated

# Every suit in play at once. Trick 1: 2C 5C 9C KC, seat 3 wins and must lead again.
D1 = (
    "2C 3C 4C AC 3D 4D 5D 6D 7D 2S 3S 2H 3H",
    "5C 6C 7C 8C 8D 9D TD JD 4S 5S 6S 4H 5H",
    "9C TC JC QC QD KD AD 7S 8S 9S 6H 7H AH",
    "KC 2D TS JS QS KS AS 8H 9H TH JH QH KH",
)
TRICK_1 = "2C 5C 9C KC"
TRICK_2 = "2D 3D 8D QD"  # seat 3 leads its only non-heart; seat 2 wins with QD


def d1(**options: object):
    return seated(opts(pass_cycle="hold_always", **options)).deal(*D1)


def test_the_holder_of_2c_leads_the_first_trick() -> None:
    story = seated(HOLD).deal(None, None, "2C " + "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H", None)
    assert story.hand.turn == 2
    given(story).when(play_card(0, "3C")).raises(NotYourTurn, "seat 2's turn")


def test_the_2c_holder_must_lead_2c() -> None:
    story = d1()
    given(story).when(play_card(0, "3C")).raises(MustLeadLowestClub, "the first lead must be 2C")
    given(story).when(play_card(0, "AC")).raises(MustLeadLowestClub)
    assert story.legal(0) == cards("2C")
    given(story).when(play_card(0, "2C")).then(CardPlayed(0, Card("2C")))


def test_with_3_players_2c_is_out_and_the_3c_holder_leads_it() -> None:
    rules = opts(players=3, pass_cycle="hold_always")
    assert rules.cards_out_of_play == cards("2C")
    story = seated(rules).deal(None, "3C 4C " + "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD 2S AS")
    assert story.hand.turn == 1
    given(story).when(play_card(1, "4C")).raises(MustLeadLowestClub, "must be 3C")
    given(story).when(play_card(1, "3C")).then(CardPlayed(1, Card("3C")))


def test_with_a_kitty_holding_2c_the_lowest_club_held_leads() -> None:
    rules = opts(kitty=True, pass_cycle="hold_always")
    story = seated(rules).deal(kitty="2C 2D 3D 4D")  # seat 0 gets 3C .. AC
    assert "2C" in story.hand.kitty
    assert story.hand.turn == 0
    given(story).when(play_card(0, "4C")).raises(MustLeadLowestClub, "must be 3C")


def test_players_must_follow_suit() -> None:
    story = d1().play("2C")
    when = given(story).when(play_card(1, "8D"))
    when.raises(MustFollowSuit, "must follow suit: you hold a club")
    assert story.legal(1) == cards("5C 6C 7C 8C")


def test_must_follow_suit_names_the_suit_led() -> None:
    story = d1().play(TRICK_1, "2D")
    given(story).when(play_card(0, "2S")).raises(
        MustFollowSuit, "must follow suit: you hold a diamond"
    )


def test_a_player_void_in_the_suit_led_may_play_any_card() -> None:
    story = d1().play(TRICK_1, TRICK_2)  # seat 2 leads; seat 3 is void in clubs
    story = story.play("TC")
    assert story.legal(3) == cards("TS JS QS KS AS 8H 9H TH JH QH KH")
    given(story).when(play_card(3, "AS")).then(CardPlayed(3, Card("AS")))


def test_the_highest_card_of_the_suit_led_wins_and_leads_next() -> None:
    story = d1().play("2C 5C 9C")
    plays = ((0, Card("2C")), (1, Card("5C")), (2, Card("9C")), (3, Card("KC")))
    after = (
        given(story)
        .when(play_card(3, "KC"))
        .then(CardPlayed(3, Card("KC")), TrickTaken(1, 3, plays, 0, ()))
    )
    assert after.hand.turn == 3


def test_a_higher_card_of_another_suit_does_not_win() -> None:
    story = d1().play(TRICK_1, TRICK_2, "TC AS 3C")
    plays = ((2, Card("TC")), (3, Card("AS")), (0, Card("3C")), (1, Card("6C")))
    given(story).when(play_card(1, "6C")).then(
        CardPlayed(1, Card("6C")), TrickTaken(3, 2, plays, 0, ())
    )


def test_hearts_may_not_be_led_before_they_are_broken() -> None:
    story = d1().play(TRICK_1)
    given(story).when(play_card(3, "8H")).raises(
        HeartsNotBroken, "hearts are not broken: lead another suit"
    )
    assert story.legal(3) == cards("2D TS JS QS KS AS")


def test_a_hand_of_only_hearts_may_lead_a_heart_before_they_are_broken() -> None:
    story = seated(HOLD).deal("AC " + "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")
    story = story.play("2C")  # seat 1 (2C KC ...) leads, seat 0 wins with AC
    story = story.play_out(leave=13 * 4 - 4)
    assert story.hand.turn == 0 and not story.hand.hearts_broken
    assert story.legal(0) == cards("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")
    after = given(story).when(play_card(0, "9H")).then(CardPlayed(0, Card("9H")))
    assert after.hand.hearts_broken


def test_a_heart_discarded_on_a_non_heart_trick_breaks_hearts() -> None:
    story = d1().play(TRICK_1, TRICK_2)
    given(story).when(play_card(2, "6H")).raises(HeartsNotBroken)
    story = story.play("TC 8H 3C 6C")  # seat 3, void in clubs, paints the trick
    assert story.hand.hearts_broken and story.hand.turn == 2
    given(story).when(play_card(2, "6H")).then(CardPlayed(2, Card("6H")))


def test_the_queen_of_spades_does_not_break_hearts_by_default() -> None:
    story = d1().play(TRICK_1, TRICK_2, "TC QS 3C 6C")
    assert not story.hand.hearts_broken
    given(story).when(play_card(2, "6H")).raises(HeartsNotBroken)


def test_with_queen_breaks_hearts_a_discarded_queen_breaks_hearts() -> None:
    story = d1(queen_breaks_hearts=True).play(TRICK_1, TRICK_2, "TC QS 3C 6C")
    assert story.hand.hearts_broken
    given(story).when(play_card(2, "6H")).then(CardPlayed(2, Card("6H")))


@pytest.mark.parametrize("queen_breaks", [False, True])
def test_queen_played_while_following_spades_breaks_hearts_only_with_the_option(
    queen_breaks: bool,
) -> None:
    story = d1(queen_breaks_hearts=queen_breaks).play(TRICK_1, TRICK_2, "TC TS 3C 6C")
    story = story.play("7S QS 2S 4S")  # seat 3 follows spades with the queen and wins
    assert story.hand.turn == 3
    when = given(story).when(play_card(3, "8H"))
    if queen_breaks:
        when.then(CardPlayed(3, Card("8H")))
    else:
        when.raises(HeartsNotBroken)


# Seat 1 wins trick 1 with AC and is left with QS and eleven hearts; nobody has broken hearts.
QUEEN_AND_HEARTS = (
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC KH",
    "AC QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
)


def test_a_leader_holding_only_the_queen_and_hearts_must_lead_the_queen() -> None:
    story = seated(HOLD).deal(*QUEEN_AND_HEARTS).play("2C AC 2D 2S")
    assert story.hand.turn == 1 and not story.hand.hearts_broken
    assert story.legal() == cards("QS")
    given(story).when(play_card(1, "2H")).raises(HeartsNotBroken)


def test_hearts_and_queen_may_lead_hearts_makes_the_queen_and_every_heart_legal() -> None:
    rules = opts(pass_cycle="hold_always", hearts_and_queen_may_lead_hearts=True)
    story = seated(rules).deal(*QUEEN_AND_HEARTS).play("2C AC 2D 2S")
    assert set(story.legal()) == card_set("QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH")
    after = given(story).when(play_card(1, "7H")).then(CardPlayed(1, Card("7H")))
    assert after.hand.hearts_broken


def test_hearts_and_queen_may_lead_hearts_needs_only_the_queen_besides_hearts() -> None:
    rules = opts(pass_cycle="hold_always", hearts_and_queen_may_lead_hearts=True)
    hands = ("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC KH", "AC QS JS 3H 4H 5H 6H 7H 8H 9H TH JH QH")
    story = seated(rules).deal(*hands).play("2C AC 2D 2S")
    assert story.legal() == cards("JS QS")


def test_hearts_may_be_led_any_time_with_that_option() -> None:
    story = d1(hearts_lead="any_time").play(TRICK_1)
    assert story.legal(3) == cards("2D TS JS QS KS AS 8H 9H TH JH QH KH")
    given(story).when(play_card(3, "8H")).then(CardPlayed(3, Card("8H")))


def test_left_of_dealer_leads_the_first_trick_with_any_card_but_a_heart() -> None:
    story = d1(first_lead="left_of_dealer")
    assert story.hand.dealer == 0 and story.hand.turn == 1
    assert story.legal() == cards("5C 6C 7C 8C 8D 9D TD JD 4S 5S 6S")
    given(story).when(play_card(1, "4H")).raises(HeartsNotBroken)
    given(story).when(play_card(1, "JD")).then(CardPlayed(1, Card("JD")))


def test_left_of_dealer_with_only_hearts_may_open_with_a_heart() -> None:
    rules = opts(first_lead="left_of_dealer", pass_cycle="hold_always")
    story = seated(rules).deal(None, "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H")
    given(story).when(play_card(1, "5H")).then(CardPlayed(1, Card("5H")))


def test_the_original_rules_open_with_any_card_even_a_heart() -> None:
    story = seated(opts(preset="original", pass_cycle="hold_always")).deal(*D1)
    assert story.hand.turn == 1
    given(story).when(play_card(1, "4H")).then(CardPlayed(1, Card("4H")))


def test_the_first_leader_moves_left_with_the_deal() -> None:
    story = seated(opts(first_lead="left_of_dealer", pass_cycle="hold_always"))
    story = story.deal(*D1).play_out()
    assert story.state.hand_number == 1
    story = story.deal(*D1)
    assert story.hand.dealer == 1 and story.hand.turn == 2


def test_plays_go_clockwise() -> None:
    story = d1().play("2C")
    given(story).when(play_card(2, "9C")).raises(NotYourTurn, "seat 1's turn, not seat 2's")
    assert story.play("5C").hand.turn == 2


def test_with_diamonds_the_penalty_suit_diamonds_wait_to_be_broken_and_hearts_do_not() -> None:
    story = d1(penalty_suit="diamonds").play(TRICK_1)
    assert story.legal(3) == cards("TS JS QS KS AS 8H 9H TH JH QH KH")
    given(story).when(play_card(3, "2D")).raises(HeartsNotBroken, "diamonds are not broken")
    given(story).when(play_card(3, "8H")).then(CardPlayed(3, Card("8H")))


def test_with_diamonds_the_penalty_suit_a_diamond_discard_breaks_them() -> None:
    story = d1(penalty_suit="diamonds").play(TRICK_1, "8H 2H 4H 6H", "9H 3H 5H 7H")
    assert story.hand.turn == 3 and not story.hand.hearts_broken  # hearts break nothing now
    story = story.play("TH 3D 8D AH")  # seat 0, void in hearts, discards a diamond
    assert story.hand.hearts_broken and story.hand.turn == 2
    given(story).when(play_card(2, "QD")).then(CardPlayed(2, Card("QD")))
