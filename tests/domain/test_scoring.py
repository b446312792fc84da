"""Scoring: points, the moon (every way of scoring it), the sun, Omnibus, the end of the game."""

from __future__ import annotations

from dataclasses import replace

import pytest

from domain import Card, MoonScoring, Phase, RuleOptions, awaiting
from domain.cards import QUEEN_OF_SPADES, Suit
from domain.decider import fold
from domain.errors import GameOver, InvalidCommand, InvalidRules, NotTheShooter, WrongPhase
from domain.events import CardPlayed, GameEnded, HandScored, MoonScoringChosen, TrickTaken
from domain.views import public_view

from .given import Story, choose, given, opts, play_card, seated
from .test_play import D1

ADD = MoonScoring.ADD_TO_OTHERS
SUBTRACT = MoonScoring.SUBTRACT_FROM_SHOOTER
UNLESS = MoonScoring.ADD_UNLESS_SHOOTER_LOSES

# Every seat None: seat 0 holds every club, leads 2C and takes every trick (the moon and the sun).
ALL_CLUBS = ()
LAST_TRICK = ((0, Card("AC")), (1, Card("AD")), (2, Card("AS")), (3, Card("AH")))

# Seat 1 takes trick 1 (AC) with JD in it; seat 0 takes every other trick: the moon without JD.
JD_ELSEWHERE = (
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AD",
    "AC 2D 3D 4D 5D 6D 7D 8D 9D TD QD KD AH",
    "JD 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    "2S 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH",
)


def rules_of(**options: object) -> RuleOptions:
    return opts(pass_cycle="hold_always", **options)


def scores_so_far(story: Story, *totals: int) -> Story:
    """Earlier hands, as one scored hand with these totals (a fact the test is given)."""
    n = len(totals)
    return story.then_(HandScored(0, (0,) * n, None, None, None, (0,) * n, (), totals))


def before_last_card(rules: RuleOptions, hands=ALL_CLUBS, totals=None) -> Story:
    story = seated(rules)
    if totals is not None:
        story = scores_so_far(story, *totals)
    return story.deal(*hands).play_out(leave=1)


def moon_hand_scored(method, changes, totals, resets=()) -> HandScored:
    return HandScored(1, (26, 0, 0, 0), 0, "moon", method, changes, resets, totals)


def test_each_heart_is_one_point_and_the_queen_thirteen() -> None:
    rules = RuleOptions()
    assert rules.card_points(QUEEN_OF_SPADES) == 13
    assert [rules.card_points(Card(r + "H")) for r in "23456789TJQKA"] == [1] * 13
    assert rules.card_points(Card("JD")) == rules.card_points(Card("AS")) == 0
    story = seated(rules_of()).deal(*D1).play("2C 5C 9C KC", "2D 3D 8D QD", "TC QS 3C")
    plays = ((2, Card("TC")), (3, Card("QS")), (0, Card("3C")), (1, Card("6C")))
    given(story).when(play_card(1, "6C")).then(
        CardPlayed(1, Card("6C")), TrickTaken(3, 2, plays, 13, ())
    )


def test_the_hand_is_scored_from_the_cards_each_seat_took() -> None:
    story = seated(rules_of()).deal(*D1).play_out()
    scored = story.events[-1]
    hand = story.hand
    expected = tuple(
        sum(1 for c in taken if c.suit is Suit.HEARTS) + 13 * (QUEEN_OF_SPADES in taken)
        for taken in hand.taken
    )
    assert scored == HandScored(1, expected, None, None, None, expected, (), expected)
    assert expected == (13, 0, 5, 8)
    assert story.state.phase is Phase.DEALING and story.state.scores == expected


def test_the_moon_adds_26_to_every_other_player_by_default() -> None:
    story = before_last_card(rules_of())
    given(story).when(play_card(3, "AH")).then(
        CardPlayed(3, Card("AH")),
        TrickTaken(13, 0, LAST_TRICK, 1, ()),
        moon_hand_scored(ADD, (0, 26, 26, 26), (0, 26, 26, 26)),
    )


def test_the_moon_may_subtract_26_from_the_shooter() -> None:
    story = before_last_card(rules_of(moon_scoring="subtract_from_shooter"), totals=(10, 0, 0, 0))
    given(story).when(play_card(3, "AH")).then(
        CardPlayed(3, Card("AH")),
        TrickTaken(13, 0, LAST_TRICK, 1, ()),
        moon_hand_scored(SUBTRACT, (-26, 0, 0, 0), (-16, 0, 0, 0)),
    )


@pytest.mark.parametrize(
    ("before", "changes", "after"),
    [
        # Adding ends no game: the others get 26.
        ((10, 0, 0, 0), (0, 26, 26, 26), (10, 26, 26, 26)),
        # Adding ends the game with the shooter the only winner: still added.
        ((0, 80, 80, 80), (0, 26, 26, 26), (0, 106, 106, 106)),
        # Adding would end the game with seat 1 winning: the shooter loses 26 instead.
        ((90, 0, 80, 80), (-26, 0, 0, 0), (64, 0, 80, 80)),
        # Adding would make seat 1 a winner too (a shared win): the shooter loses 26 instead.
        ((26, 0, 80, 80), (-26, 0, 0, 0), (0, 0, 80, 80)),
    ],
)
def test_add_unless_the_shooter_loses(before, changes, after) -> None:
    story = before_last_card(rules_of(moon_scoring="add_unless_shooter_loses"), totals=before)
    events = given(story).when(play_card(3, "AH")).events()
    assert events[2] == moon_hand_scored(UNLESS, changes, after)
    assert (len(events) == 4) is (max(after) >= 100)


def test_add_unless_the_shooter_loses_adds_when_a_tie_plays_on() -> None:
    rules = rules_of(moon_scoring="add_unless_shooter_loses", tie_break="play_on")
    story = before_last_card(rules, totals=(26, 0, 80, 80))
    events = given(story).when(play_card(3, "AH")).events()
    assert events[2:] == [moon_hand_scored(UNLESS, (0, 26, 26, 26), (26, 26, 106, 106))]


def test_the_shooters_choice_waits_for_the_shooter() -> None:
    story = before_last_card(rules_of(moon_scoring="shooters_choice"))
    story = (
        given(story)
        .when(play_card(3, "AH"))
        .then(CardPlayed(3, Card("AH")), TrickTaken(13, 0, LAST_TRICK, 1, ()))
    )
    assert story.state.phase is Phase.MOON_CHOICE and story.state.moon_shooter == 0
    assert awaiting(story.state) == (0,)
    given(story).when(choose(1, "add_to_others")).raises(NotTheShooter, "only seat 0")
    given(story).when(choose(0, "add_unless_shooter_loses")).raises(InvalidCommand)
    given(story).when(choose(0, "shooters_choice")).raises(InvalidCommand)
    given(story).when(play_card(3, "AH")).raises(WrongPhase)
    given(story).when(choose(0, "subtract_from_shooter")).then(
        MoonScoringChosen(0, SUBTRACT), moon_hand_scored(SUBTRACT, (-26, 0, 0, 0), (-26, 0, 0, 0))
    )
    after = (
        given(story)
        .when(choose(0, "add_to_others"))
        .then(MoonScoringChosen(0, ADD), moon_hand_scored(ADD, (0, 26, 26, 26), (0, 26, 26, 26)))
    )
    assert after.state.phase is Phase.DEALING and after.state.moon_shooter is None


@pytest.mark.parametrize(
    ("sun", "shot"),
    [(False, {"kind": "moon", "points": 26}), (True, {"kind": "sun", "points": 52})],
)
def test_the_view_says_what_the_shooter_chooses_about(sun, shot) -> None:
    # Issue 34: the web table offered "Add 26 to the others" whatever the rules; the view now
    # carries the shot's kind and its points (the rules' moon_points or sun_points).
    rules = rules_of(moon_scoring="shooters_choice", shoot_the_sun=sun)
    story = (
        given(before_last_card(rules))
        .when(play_card(3, "AH"))
        .then(CardPlayed(3, Card("AH")), TrickTaken(13, 0, LAST_TRICK, 1, ()))
    )
    assert public_view(story.state).to_dict()["shot"] == shot
    assert shot["points"] == (rules.sun_points if sun else rules.moon_points)
    after = given(story).when(choose(0, "add_to_others")).events()
    assert public_view(fold(after, story.state)).to_dict()["shot"] is None


def test_no_choice_is_asked_without_a_moon() -> None:
    story = seated(rules_of(moon_scoring="shooters_choice")).deal(*D1).play_out()
    assert story.state.phase is Phase.DEALING
    given(story).when(choose(0, "add_to_others")).raises(WrongPhase)


def test_shooting_the_sun_takes_every_trick_and_scores_52() -> None:
    story = before_last_card(rules_of(shoot_the_sun=True))
    events = given(story).when(play_card(3, "AH")).events()
    assert events[2] == HandScored(
        1, (26, 0, 0, 0), 0, "sun", ADD, (0, 52, 52, 52), (), (0, 52, 52, 52)
    )


def test_the_sun_is_scored_like_the_moon() -> None:
    story = before_last_card(rules_of(shoot_the_sun=True, moon_scoring="subtract_from_shooter"))
    events = given(story).when(play_card(3, "AH")).events()
    assert events[2].score_changes == (-52, 0, 0, 0)  # type: ignore[union-attr]


def test_every_point_without_every_trick_is_the_moon_not_the_sun() -> None:
    story = seated(rules_of(shoot_the_sun=True)).deal(*JD_ELSEWHERE).play_out()
    assert story.hand.tricks[0].winner == 1
    scored = story.events[-1]
    assert isinstance(scored, HandScored)
    assert (scored.shot, scored.shooter, scored.score_changes) == ("moon", 0, (0, 26, 26, 26))


def test_without_the_sun_option_every_trick_is_just_the_moon() -> None:
    story = seated(rules_of()).deal().play_out()
    assert story.events[-1].shot == "moon"  # type: ignore[union-attr]


# -- Omnibus --------------------------------------------------------------------------------------


def omnibus(**options: object) -> RuleOptions:
    return opts(preset="omnibus", pass_cycle="hold_always", **options)


def test_omnibus_jack_of_diamonds_counts_minus_10() -> None:
    rules = omnibus()
    assert rules.bonus_card == Card("JD") and rules.card_points(Card("JD")) == -10
    story = seated(rules).deal(*D1).play_out()
    scored = story.events[-1]
    assert isinstance(scored, HandScored) and scored.shot is None
    expected = tuple(
        sum(1 for c in taken if c.suit is Suit.HEARTS)
        + 13 * (QUEEN_OF_SPADES in taken)
        - 10 * (Card("JD") in taken)
        for taken in story.hand.taken
    )
    assert scored.points_taken == expected and sum(expected) == 16


def test_omnibus_ten_of_diamonds_variant() -> None:
    rules = omnibus(bonus_card="TD", moon_scoring="add_to_others")
    assert rules.card_points(Card("TD")) == -10 and rules.card_points(Card("JD")) == 0
    story = before_last_card(rules)
    events = given(story).when(play_card(3, "AH")).events()
    assert events[2] == HandScored(
        1, (16, 0, 0, 0), 0, "moon", ADD, (-10, 26, 26, 26), (), (-10, 26, 26, 26)
    )


def test_omnibus_moon_needs_every_heart_and_the_queen_not_the_jack() -> None:
    story = seated(omnibus(moon_scoring="add_to_others")).deal(*JD_ELSEWHERE).play_out()
    assert Card("JD") in story.hand.taken[1]
    assert story.events[-1] == HandScored(
        1, (26, -10, 0, 0), 0, "moon", ADD, (0, 16, 26, 26), (), (0, 16, 26, 26)
    )


def test_omnibus_moon_subtracting_still_gives_the_jack_taker_minus_10() -> None:
    rules = omnibus(moon_scoring="subtract_from_shooter")
    story = seated(rules).deal(*JD_ELSEWHERE).play_out()
    assert story.events[-1].score_changes == (-26, -10, 0, 0)  # type: ignore[union-attr]


def test_omnibus_moon_by_the_jack_taker_gets_both() -> None:
    story = before_last_card(omnibus())
    story = story.play("AH")
    assert story.state.phase is Phase.MOON_CHOICE
    given(story).when(choose(0, "add_to_others")).then(
        MoonScoringChosen(0, ADD),
        HandScored(1, (16, 0, 0, 0), 0, "moon", ADD, (-10, 26, 26, 26), (), (-10, 26, 26, 26)),
    )
    given(story).when(choose(0, "subtract_from_shooter")).then(
        MoonScoringChosen(0, SUBTRACT),
        HandScored(1, (16, 0, 0, 0), 0, "moon", SUBTRACT, (-36, 0, 0, 0), (), (-36, 0, 0, 0)),
    )


# -- diamonds as the penalty suit -----------------------------------------------------------------


def test_with_diamonds_the_penalty_suit_diamonds_score_and_hearts_do_not() -> None:
    rules = rules_of(penalty_suit="diamonds")
    assert rules.card_points(Card("2D")) == 1 and rules.card_points(Card("2H")) == 0
    story = seated(rules).deal(*D1).play_out()
    expected = tuple(
        sum(1 for c in taken if c.suit is Suit.DIAMONDS) + 13 * (QUEEN_OF_SPADES in taken)
        for taken in story.hand.taken
    )
    assert story.events[-1].points_taken == expected  # type: ignore[union-attr]
    assert sum(expected) == 26


def test_with_diamonds_the_penalty_suit_the_moon_is_every_diamond_and_the_queen() -> None:
    story = seated(rules_of(penalty_suit="diamonds")).deal(*JD_ELSEWHERE).play_out()
    scored = story.events[-1]
    assert isinstance(scored, HandScored)
    assert scored.shot is None  # seat 1 took JD, a penalty card now
    story = before_last_card(rules_of(penalty_suit="diamonds"))
    assert given(story).when(play_card(3, "AH")).events()[2].shot == "moon"  # type: ignore


# -- the end of the game --------------------------------------------------------------------------


def test_the_game_goes_on_while_everyone_is_under_the_limit() -> None:
    story = before_last_card(rules_of(), totals=(0, 73, 0, 0))
    events = given(story).when(play_card(3, "AH")).events()
    assert events[2].totals == (0, 99, 26, 26) and len(events) == 3  # type: ignore[union-attr]
    assert story.play("AH").state.phase is Phase.DEALING


def test_the_game_ends_at_the_end_of_the_hand_in_which_someone_reaches_the_limit() -> None:
    story = before_last_card(rules_of(), totals=(0, 74, 0, 0))
    assert story.state.phase is Phase.PLAYING  # points taken so far do not end it mid-hand
    after = (
        given(story)
        .when(play_card(3, "AH"))
        .then(
            CardPlayed(3, Card("AH")),
            TrickTaken(13, 0, LAST_TRICK, 1, ()),
            moon_hand_scored(ADD, (0, 26, 26, 26), (0, 100, 26, 26)),
            GameEnded((0,), (0, 100, 26, 26)),
        )
    )
    assert after.state.phase is Phase.FINISHED and after.state.winners == (0,)


def test_the_score_limit_is_an_option() -> None:
    story = before_last_card(rules_of(score_limit=50), totals=(0, 24, 0, 0))
    events = given(story).when(play_card(3, "AH")).events()
    assert events[-1] == GameEnded((0,), (0, 50, 26, 26))


@pytest.mark.parametrize(("reset", "to"), [("half", 50), ("zero", 0)])
def test_a_score_of_exactly_the_limit_is_reset(reset: str, to: int) -> None:
    story = before_last_card(rules_of(exact_limit_reset=reset), totals=(0, 74, 50, 20))
    events = given(story).when(play_card(3, "AH")).events()
    assert events[2:] == [moon_hand_scored(ADD, (0, 26, 26, 26), (0, to, 76, 46), resets=(1,))]


def test_the_reset_is_only_for_exactly_the_limit() -> None:
    story = before_last_card(rules_of(exact_limit_reset="half"), totals=(0, 75, 0, 0))
    events = given(story).when(play_card(3, "AH")).events()
    assert events[-1] == GameEnded((0,), (0, 101, 26, 26))


def test_the_limit_reset_follows_a_custom_limit() -> None:
    story = before_last_card(
        rules_of(exact_limit_reset="half", score_limit=50), totals=(0, 24, 0, 0)
    )
    events = given(story).when(play_card(3, "AH")).events()
    assert events[2].totals == (0, 25, 26, 26)  # type: ignore[union-attr]


def test_a_tie_for_the_lowest_score_is_shared_by_default() -> None:
    story = before_last_card(rules_of(), totals=(26, 0, 80, 80))
    events = given(story).when(play_card(3, "AH")).events()
    assert events[-1] == GameEnded((0, 1), (26, 26, 106, 106))


def test_with_play_on_a_tied_game_continues_until_one_player_is_lowest() -> None:
    story = before_last_card(rules_of(tie_break="play_on"), totals=(26, 0, 80, 80))
    story = given(story).when(play_card(3, "AH")).then_starts_with(CardPlayed(3, Card("AH")))
    assert not isinstance(story.events[-1], GameEnded)
    assert story.state.phase is Phase.DEALING and story.state.scores == (26, 26, 106, 106)
    story = story.deal().play_out()  # seat 0 shoots again: 26, 52, 132, 132
    assert story.events[-1] == GameEnded((0,), (26, 52, 132, 132))
    assert story.state.phase is Phase.FINISHED


def test_nothing_happens_after_the_game_ends() -> None:
    story = before_last_card(rules_of(), totals=(0, 74, 0, 0)).play("AH")
    assert story.state.phase is Phase.FINISHED
    given(story).when(play_card(3, "AH")).raises(GameOver)


# -- the hand limit (issue 33: the bound on a game's length) --------------------------------------


def test_the_game_ends_after_the_hand_limits_last_hand_whatever_the_scores() -> None:
    story = before_last_card(rules_of(hand_limit=1))
    after = (
        given(story)
        .when(play_card(3, "AH"))
        .then(
            CardPlayed(3, Card("AH")),
            TrickTaken(13, 0, LAST_TRICK, 1, ()),
            moon_hand_scored(ADD, (0, 26, 26, 26), (0, 26, 26, 26)),
            GameEnded((0,), (0, 26, 26, 26)),
        )
    )
    assert after.state.phase is Phase.FINISHED and after.state.hand_number == 1


def test_before_the_hand_limit_the_game_goes_on() -> None:
    story = before_last_card(rules_of(hand_limit=2)).play("AH")
    assert story.state.phase is Phase.DEALING and story.state.scores == (0, 26, 26, 26)
    story = story.deal().play_out()  # hand 2, the last: over at 0, 52, 52, 52
    assert story.state.hand_number == 2
    assert story.events[-1] == GameEnded((0,), (0, 52, 52, 52))


def test_a_tie_at_the_hand_limit_is_shared_even_with_play_on() -> None:
    story = before_last_card(rules_of(tie_break="play_on", hand_limit=1), totals=(26, 0, 80, 80))
    assert story.state.hand_number == 1
    events = given(story).when(play_card(3, "AH")).events()
    assert events[-1] == GameEnded((0, 1), (26, 26, 106, 106))


def test_a_recorded_game_from_before_the_bounds_reads_and_plays_as_it_did() -> None:
    # A GameCreated of before issue 33: score_limit up to 10,000 and no hand limit.
    with pytest.raises(InvalidRules, match="score_limit must be 1 to 500"):
        RuleOptions.from_dict({"score_limit": 10_000})
    with pytest.raises(InvalidRules, match="score_limit must be 1 to 10000"):
        RuleOptions.from_dict({"score_limit": 10_001}, recorded=True)  # nor were they then
    old = RuleOptions.from_dict({"score_limit": 10_000}, recorded=True)
    assert old.hand_limit is None and old.score_limit == 10_000
    assert RuleOptions.from_dict(old.to_dict(), recorded=True) == old
    story = before_last_card(replace(old, pass_cycle=rules_of().pass_cycle)).play("AH")
    assert story.state.phase is Phase.DEALING  # hand 1 of a game without a hand limit
    for _ in range(3):
        story = story.deal().play_out()
    assert story.state.phase is Phase.DEALING and story.state.hand_number == 4
