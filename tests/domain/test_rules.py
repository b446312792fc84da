"""Rule options: defaults, presets, overrides, the JSON form, and combinations refused."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from domain import INITIAL_STATE as INITIAL
from domain import Card, CreateGame, MoonScoring, PassDirection, RuleOptions, Suit, decide
from domain.errors import InvalidRules
from domain.events import GameCreated, event_to_dict
from domain.rules import PRESETS, ExactLimitReset, FirstLead, HeartsLead, TieBreak

from .given import cards, opts


def test_the_defaults_are_the_standard_game() -> None:
    r = RuleOptions()
    assert (r.players, r.hand_size, r.cards_passed, r.score_limit) == (4, 13, 3, 100)
    assert r.pass_cycle == (
        PassDirection.LEFT,
        PassDirection.RIGHT,
        PassDirection.ACROSS,
        PassDirection.HOLD,
    )
    assert r.pass_cycle_repeats and not r.optional_passing and not r.kitty
    assert r.first_lead is FirstLead.LOWEST_CLUB and r.hearts_lead is HeartsLead.WHEN_BROKEN
    assert not (r.queen_breaks_hearts or r.hearts_and_queen_may_lead_hearts)
    assert not (r.no_points_on_first_trick or r.must_play_queen_when_safe or r.shoot_the_sun)
    assert r.bonus_card is None and r.penalty_suit is Suit.HEARTS
    assert r.moon_scoring is MoonScoring.ADD_TO_OTHERS
    assert r.exact_limit_reset is ExactLimitReset.NONE and r.tie_break is TieBreak.SHARED
    assert r.moon_points == 26 and r.cards_out_of_play == ()
    assert PRESETS["standard"] == r == opts() == RuleOptions.from_dict(None)


def test_the_computer_preset_forbids_points_on_the_first_trick_and_only_hearts_break() -> None:
    assert PRESETS["computer"] == replace(RuleOptions(), no_points_on_first_trick=True)
    assert not PRESETS["computer"].queen_breaks_hearts


def test_the_omnibus_preset() -> None:
    assert PRESETS["omnibus"] == replace(
        RuleOptions(), bonus_card=Card("JD"), moon_scoring=MoonScoring.SHOOTERS_CHOICE
    )


def test_the_original_preset() -> None:
    assert PRESETS["original"] == replace(
        RuleOptions(), first_lead=FirstLead.LEFT_OF_DEALER, hearts_lead=HeartsLead.ANY_TIME
    )


def test_a_preset_is_overridden_option_by_option() -> None:
    r = opts(preset="omnibus", bonus_card="10D", score_limit=50, players=6)
    assert (r.bonus_card, r.score_limit, r.players) == (Card("TD"), 50, 6)
    assert r.moon_scoring is MoonScoring.SHOOTERS_CHOICE  # kept from the preset


def test_changing_the_player_count_picks_that_counts_standard_cycle() -> None:
    assert opts(players=5).pass_cycle == (
        PassDirection.LEFT,
        PassDirection.RIGHT,
        PassDirection.HOLD,
    )
    assert opts(players=5, pass_cycle=["left", "hold"]).pass_cycle == (
        PassDirection.LEFT,
        PassDirection.HOLD,
    )


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_round_trips_through_its_json_form(preset: str) -> None:
    r = PRESETS[preset]
    assert RuleOptions.from_dict(r.to_dict()) == r


def test_a_custom_option_set_round_trips_through_its_json_form() -> None:
    r = opts(
        players=5,
        removed_cards=["3C", "4C"],
        cards_passed=4,
        pass_cycle=["scatter", "mix", "left"],
        pass_cycle_repeats=False,
        first_lead="left_of_dealer",
        queen_breaks_hearts=True,
        hearts_and_queen_may_lead_hearts=True,
        no_points_on_first_trick=True,
        must_play_queen_when_safe=True,
        bonus_card="JD",
        shoot_the_sun=True,
        moon_scoring="add_unless_shooter_loses",
        score_limit=75,
        exact_limit_reset="zero",
        tie_break="play_on",
    )
    assert r.to_dict()["removed_cards"] == ["3C", "4C"]
    assert r.to_dict()["penalty_suit"] == "hearts"
    assert RuleOptions.from_dict(r.to_dict()) == r


def test_the_created_event_records_the_rules() -> None:
    r = opts(preset="computer", score_limit=50)
    events = decide(CreateGame("g", r), INITIAL)
    assert events == [GameCreated("g", r, (None,) * 4)]
    assert event_to_dict(events[0])["rules"] == r.to_dict()


def test_diamonds_as_the_penalty_suit() -> None:
    r = opts(penalty_suit="diamonds")
    assert r.is_penalty_card(Card("2D")) and r.is_penalty_card(Card("QS"))
    assert not r.is_penalty_card(Card("2H"))
    assert r.moon_points == 26


def test_removed_cards_may_be_chosen() -> None:
    r = opts(players=3, removed_cards=["2D"])
    assert r.cards_out_of_play == cards("2D") and r.hand_size == 17


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"preset": "modern"}, "unknown preset 'modern'"),
        ({"preset": ["standard"]}, "unknown preset"),
        ({"jokers": True}, "unknown rule option"),
        ({"players": 2}, "players must be 3 to 6"),
        ({"players": 7}, "players must be 3 to 6"),
        ({"players": "4"}, "invalid value for players"),
        ({"players": True}, "invalid value for players"),
        ({"cards_passed": 5}, "cards_passed must be 0 to 4"),
        ({"cards_passed": -1}, "cards_passed must be 0 to 4"),
        ({"score_limit": 0}, "score_limit must be 1 to 500"),
        ({"score_limit": 501}, "score_limit must be 1 to 500"),
        ({"hand_limit": 0}, "hand_limit must be 1 to 100"),
        ({"hand_limit": 101}, "hand_limit must be 1 to 100"),
        ({"hand_limit": None}, "invalid value for hand_limit"),
        ({"score_limit": 99.5}, "invalid value for score_limit"),
        ({"penalty_suit": "spades"}, "invalid value for penalty_suit: 'spades' .hearts or"),
        ({"penalty_suit": "clubs"}, "invalid value for penalty_suit"),
        (
            {"moon_scoring": "double"},
            "add_to_others, subtract_from_shooter, add_unless_shooter_loses or",
        ),
        ({"first_lead": "dealer"}, "invalid value for first_lead"),
        ({"hearts_lead": "never"}, "invalid value for hearts_lead"),
        ({"exact_limit_reset": "third"}, "invalid value for exact_limit_reset"),
        ({"tie_break": "coin"}, "invalid value for tie_break"),
        ({"kitty": "yes"}, "invalid value for kitty: 'yes' .true or false"),
        ({"bonus_card": "QD"}, "invalid value for bonus_card: 'QD' .JD, TD or null"),
        ({"pass_cycle": "sideways"}, "invalid value for pass_cycle"),
        ({"pass_cycle": []}, "invalid value for pass_cycle"),
        ({"pass_cycle": ["left", "up"]}, "invalid value for pass_cycle"),
        ({"removed_cards": ["2X"]}, "invalid value for removed_cards"),
        ({"players": 3, "pass_cycle": "standard"}, "nobody sits across with 3 players"),
        ({"players": 5, "pass_cycle": ["across"]}, "nobody sits across with 5 players"),
        ({"players": 3, "kitty": True, "removed_cards": ["2C"]}, "a kitty or removed cards"),
        ({"players": 5, "removed_cards": ["2C", "2C"]}, "lists a card twice"),
        ({"players": 3, "removed_cards": ["2C", "3C"]}, "remove exactly 1 card"),
        ({"players": 4, "removed_cards": ["2C", "3C", "4C", "5C"]}, "remove exactly 0 card"),
        ({"players": 3, "removed_cards": ["2H"]}, "a penalty card may not be removed"),
        ({"players": 3, "removed_cards": ["QS"]}, "a penalty card may not be removed"),
        ({"players": 5, "penalty_suit": "diamonds", "removed_cards": ["2C", "2D"]}, "penalty"),
        ({"bonus_card": "JD", "penalty_suit": "diamonds"}, "cannot be in the penalty suit"),
        ({"players": 5, "bonus_card": "JD", "removed_cards": ["2C", "JD"]}, "cannot be removed"),
        ({"optional_passing": True, "pass_cycle": "scatter"}, "scatter has none"),
        (
            {"preset": "original", "hearts_and_queen_may_lead_hearts": True},
            "only matters when hearts must be broken first",
        ),
    ],
)
def test_option_sets_that_make_no_sense_are_refused_with_a_reason(
    options: dict[str, Any], reason: str
) -> None:
    with pytest.raises(InvalidRules, match=reason):
        RuleOptions.from_dict(options)


@pytest.mark.parametrize("data", ["standard", ["players", 4], 4])
def test_options_must_be_an_object(data: Any) -> None:
    with pytest.raises(InvalidRules, match="an object"):
        RuleOptions.from_dict(data)


def test_a_bonus_card_other_than_jd_or_td_is_refused() -> None:
    with pytest.raises(InvalidRules, match="JD or TD"):
        RuleOptions(bonus_card=Card("QS")).validated()


def test_creating_a_game_validates_its_rules() -> None:
    with pytest.raises(InvalidRules, match="nobody sits across"):
        decide(CreateGame("g", RuleOptions(players=3)), INITIAL)
    assert InvalidRules.code == "invalid-rules" and InvalidRules.kind == "invalid"


def test_invalid_rules_are_a_rule_violation_with_a_stable_code() -> None:
    with pytest.raises(InvalidRules) as caught:
        opts(players=9)
    assert caught.value.code == "invalid-rules"
    assert str(caught.value) == "players must be 3 to 6"


def test_queen_breaks_hearts_with_hearts_led_any_time_is_accepted_and_changes_nothing() -> None:
    r = opts(preset="original", queen_breaks_hearts=True)
    assert r.queen_breaks_hearts and r.hearts_lead is HeartsLead.ANY_TIME


def test_every_option_is_declared_once_in_field_order() -> None:
    # OPTIONS is what from_dict parses with and what the OpenAPI document is generated from.
    from dataclasses import fields

    from domain.rules import OPTIONS

    assert list(OPTIONS) == [f.name for f in fields(RuleOptions)]
