"""The pass: every direction, the cycle, scatter, mix, optional passing, the number of cards."""

from __future__ import annotations

import pytest

from domain import Card, PassDirection, Phase, RuleOptions, seat_view, sort_cards
from domain.errors import (
    AlreadyPassed,
    CardNotInHand,
    DuplicateCards,
    PassingNotOptional,
    WrongNumberOfCards,
    WrongPhase,
)
from domain.events import CardsPassed, PassesExchanged
from domain.shuffle import shuffled

from .given import cards, given, opts, pass_cards, play_card, seated

# Dealt with every seat None: seat 0 all clubs, 1 all diamonds, 2 all spades, 3 all hearts.
PASSES = ("2C 3C 4C", "2D 3D 4D", "2S 3S 4S", "2H 3H 4H")


def received(*texts: str) -> tuple[tuple[Card, ...], ...]:
    return tuple(sort_cards(cards(t)) for t in texts)


def passed_all_but_last(rules: RuleOptions, passes=PASSES):
    story = seated(rules).deal()
    return story.pass_all(*passes[:-1])


def test_the_first_hand_passes_left_and_nobody_receives_until_all_have_passed() -> None:
    story = passed_all_but_last(RuleOptions())
    assert story.hand.pass_direction is PassDirection.LEFT
    assert story.state.phase is Phase.PASSING
    assert seat_view(story.state, 1).received_cards == ()
    assert Card("2C") not in story.holding(0)  # a passed card leaves the hand at once
    after = (
        given(story)
        .when(pass_cards(3, "2H 3H 4H"))
        .then(
            CardsPassed(3, cards("2H 3H 4H")),
            PassesExchanged(received("2H 3H 4H", "2C 3C 4C", "2D 3D 4D", "2S 3S 4S"), ()),
        )
    )
    assert after.state.phase is Phase.PLAYING
    assert seat_view(after.state, 1).received_cards == cards("2C 3C 4C")
    assert after.hand.turn == 1  # 2C changed hands: its holder after the pass leads


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        ("left", ("2H 3H 4H", "2C 3C 4C", "2D 3D 4D", "2S 3S 4S")),
        ("right", ("2D 3D 4D", "2S 3S 4S", "2H 3H 4H", "2C 3C 4C")),
        ("across", ("2S 3S 4S", "2H 3H 4H", "2C 3C 4C", "2D 3D 4D")),
    ],
)
def test_each_direction_sends_the_cards_to_its_seat(direction: str, expected: tuple) -> None:
    story = passed_all_but_last(opts(pass_cycle=[direction]))
    given(story).when(pass_cards(3, PASSES[3])).then(
        CardsPassed(3, cards(PASSES[3])), PassesExchanged(received(*expected), ())
    )


def test_the_standard_cycle_is_left_right_across_hold_repeating() -> None:
    rules = RuleOptions()
    got = [rules.pass_direction(n).value for n in range(1, 10)]
    assert got == ["left", "right", "across", "hold"] * 2 + ["left"]


def test_a_hold_hand_goes_straight_to_play() -> None:
    story = seated(opts(pass_cycle=["hold"])).deal()
    assert story.hand.pass_direction is PassDirection.HOLD
    assert story.state.phase is Phase.PLAYING and story.hand.turn == 0
    given(story).when(pass_cards(0, "2C 3C 4C")).raises(WrongPhase, "game is playing")


def test_the_second_hand_passes_right_in_a_played_game() -> None:
    story = seated().deal().pass_all(*PASSES).play_out()
    assert story.state.phase is Phase.DEALING
    assert story.deal().hand.pass_direction is PassDirection.RIGHT


@pytest.mark.parametrize(
    ("cycle", "expected"),
    [
        ("no_hold", "left right across left right across"),
        ("scatter", "left right across scatter left right"),
        ("scatter_and_hold", "left right across scatter hold left"),
        ("mix", "left right across mix left right"),
        ("first_hand_only", "left hold hold hold hold hold"),
        ("hold_always", "hold hold hold hold hold hold"),
    ],
)
def test_named_pass_cycles(cycle: str, expected: str) -> None:
    rules = opts(pass_cycle=cycle)
    assert " ".join(rules.pass_direction(n).value for n in range(1, 7)) == expected


def test_scatter_sends_one_card_to_every_other_seat_in_the_order_given() -> None:
    rules = opts(pass_cycle=["scatter"])
    assert rules.cards_to_pass(PassDirection.SCATTER) == 3
    passes = ("4C 2C 3C", "2D 3D 4D", "2S 3S 4S", "2H 3H 4H")
    story = passed_all_but_last(rules, passes)
    # Seat s sends its k-th card to seat s + k: seat 0 sends 4C to 1, 2C to 2, 3C to 3.
    given(story).when(pass_cards(3, passes[3])).then(
        CardsPassed(3, cards(passes[3])),
        PassesExchanged(received("4D 3S 2H", "4C 4S 3H", "2C 2D 4H", "3C 3D 2S"), ()),
    )


def test_scatter_refuses_the_wrong_number_of_cards() -> None:
    story = seated(opts(pass_cycle=["scatter"], cards_passed=2)).deal()
    given(story).when(pass_cards(0, "2C 3C")).raises(WrongNumberOfCards, "pass exactly 3 cards")


def _mix_expected(pile: tuple[Card, ...], seed: str, wants: list[int], dealer: int = 0):
    """The mix as documented: pile shuffled by '<seed>/mix', dealt from the dealer's left."""
    deck = shuffled(pile, seed + "/mix")
    got: list[list[Card]] = [[] for _ in wants]
    seat, i = dealer, 0
    while sum(map(len, got)) < sum(wants):
        seat = (seat + 1) % len(wants)
        if len(got[seat]) < wants[seat]:
            got[seat].append(deck[i])
            i += 1
    return tuple(sort_cards(g) for g in got), tuple(deck[i:])


def test_mix_shuffles_the_discards_and_deals_them_back() -> None:
    story = passed_all_but_last(opts(pass_cycle=["mix"]))
    pile = sort_cards(cards(" ".join(PASSES)))
    expected, _ = _mix_expected(pile, "seed", [3, 3, 3, 3])
    after = (
        given(story)
        .when(pass_cards(3, PASSES[3]))
        .then(CardsPassed(3, cards(PASSES[3])), PassesExchanged(expected, ()))
    )
    assert sorted(c for r in after.hand.received for c in r) == sorted(pile)  # type: ignore
    assert all(len(h) == 13 for h in after.hand.hands)


def test_mix_with_a_kitty_shuffles_the_kitty_in_too() -> None:
    rules = opts(pass_cycle=["mix"], kitty=True)
    story = seated(rules).deal(kitty="AC AD AS AH")
    assert [len(h) for h in story.hand.hands] == [12] * 4
    story = story.pass_all(*PASSES[:3])
    pile = sort_cards(cards(" ".join(PASSES))) + cards("AC AD AS AH")
    expected, new_kitty = _mix_expected(pile, "seed", [3, 3, 3, 3])
    given(story).when(pass_cards(3, PASSES[3])).then(
        CardsPassed(3, cards(PASSES[3])), PassesExchanged(expected, new_kitty)
    )
    assert len(new_kitty) == 4 and set(new_kitty) | {c for r in expected for c in r} == set(pile)
    assert new_kitty != cards("AC AD AS AH")  # this seed mixes a discard into the kitty


def test_optional_passing_lets_a_seat_decline() -> None:
    rules = opts(optional_passing=True)
    story = seated(rules).deal()
    story = given(story).when(pass_cards(1, "")).then(CardsPassed(1, ()))
    given(story).when(pass_cards(1, "2D 3D 4D")).raises(AlreadyPassed)


def test_a_seat_that_declines_passes_on_what_it_receives_unseen() -> None:
    story = seated(opts(optional_passing=True)).deal().pass_all("2C 3C 4C", "", "2S 3S 4S")
    # Left: seat 0's cards go to seat 1, which declined, so they travel on to seat 2.
    given(story).when(pass_cards(3, "2H 3H 4H")).then(
        CardsPassed(3, cards("2H 3H 4H")),
        PassesExchanged(received("2H 3H 4H", "", "2C 3C 4C", "2S 3S 4S"), ()),
    )


def test_when_all_but_one_decline_the_passer_gets_its_own_cards_back() -> None:
    dealt = seated(opts(optional_passing=True)).deal()
    story = dealt.pass_all("2C 3C 4C", "", "")
    after = (
        given(story)
        .when(pass_cards(3, ""))
        .then(CardsPassed(3, ()), PassesExchanged(received("2C 3C 4C", "", "", ""), ()))
    )
    assert after.hand.hands == dealt.hand.hands and after.hand.turn == 0


def test_when_everyone_declines_nothing_moves() -> None:
    story = seated(opts(optional_passing=True)).deal()
    dealt = story.hand.hands
    after = story.pass_all("", "", "", "")
    assert after.hand.hands == dealt and after.hand.received == ((),) * 4


def test_passing_is_not_optional_by_default() -> None:
    story = seated().deal()
    given(story).when(pass_cards(0, "")).raises(PassingNotOptional, "you must pass 3 cards left")


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_the_number_of_cards_passed_is_an_option(count: int) -> None:
    story = seated(opts(cards_passed=count)).deal()
    mine = " ".join(sort_cards(story.holding(0))[:count])
    given(story).when(pass_cards(0, mine)).then(CardsPassed(0, cards(mine)))
    too_many = " ".join(sort_cards(story.holding(0))[: count + 1])
    given(story).when(pass_cards(0, too_many)).raises(
        WrongNumberOfCards, f"pass exactly {count} cards, not {count + 1}"
    )


def test_passing_no_cards_makes_every_hand_a_hold_hand() -> None:
    rules = opts(cards_passed=0)
    assert {rules.pass_direction(n) for n in range(1, 9)} == {PassDirection.HOLD}
    assert seated(rules).deal().state.phase is Phase.PLAYING


def test_a_pass_of_cards_not_held_is_refused() -> None:
    story = seated().deal()
    given(story).when(pass_cards(0, "2C 3C 2D")).raises(CardNotInHand, "you do not hold 2D")


def test_a_pass_listing_a_card_twice_is_refused() -> None:
    story = seated().deal()
    given(story).when(pass_cards(0, "2C 2C 3C")).raises(DuplicateCards)


def test_a_seat_passes_once() -> None:
    story = seated().deal().pass_all("2C 3C 4C")
    given(story).when(pass_cards(0, "5C 6C 7C")).raises(AlreadyPassed, "seat 0 has already")


def test_no_card_is_played_during_the_pass() -> None:
    story = seated().deal()
    given(story).when(play_card(0, "2C")).raises(WrongPhase, "cannot play a card now")


def test_across_with_six_players_is_three_seats_on() -> None:
    rules = opts(players=6, pass_cycle=["across"])
    story = seated(rules).deal()
    passes = [" ".join(sort_cards(h)[:3]) for h in story.hand.hands]
    after = story.pass_all(*passes)
    for seat in range(6):
        assert after.hand.received[seat] == cards(passes[(seat + 3) % 6])  # type: ignore[index]
