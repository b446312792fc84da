"""Commands refused: wrong phase, wrong seat, cards not held, bad deals, joining a full table."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from domain import (
    DECK,
    Card,
    CreateGame,
    Deal,
    JoinGame,
    PassCards,
    Phase,
    PlayCard,
    RuleOptions,
    SetSeatBot,
    decide,
    fold,
)
from domain.commands import ContributeSeed, ExpireGame, ReturnToSeat
from domain.decider import is_terminal
from domain.errors import (
    ALL_VIOLATIONS,
    CardNotInHand,
    GameAlreadyCreated,
    GameFull,
    GameNotCreated,
    GameOver,
    InvalidCommand,
    InvalidDeal,
    NotYourTurn,
    SeatOutOfRange,
    SeatTaken,
    WrongPhase,
)
from domain.events import CardPlayed, CardsPassed, GameCreated, PlayerJoined, SeatControlChanged
from domain.state import INITIAL_STATE

from .given import GAME_ID, HOLD, cards, choose, created, given, opts, pass_cards, play_card, seated

FULL_DECK = tuple(tuple(DECK[i * 13 : (i + 1) * 13]) for i in range(4))


# -- creating and joining -------------------------------------------------------------------------


def test_a_game_is_created_with_open_and_bot_seats() -> None:
    given().when(CreateGame("g", RuleOptions(), (None, "random", None, None))).then(
        GameCreated("g", RuleOptions(), (None, "random", None, None))
    )
    story = created(seats=(None, "random", None, None))
    assert story.state.phase is Phase.WAITING and story.state.open_seats == (0, 2, 3)


def test_a_game_of_bots_is_ready_to_deal_at_once() -> None:
    assert created(seats=("random",) * 4).state.phase is Phase.DEALING


def test_a_game_is_created_once() -> None:
    given(created()).when(CreateGame("g", RuleOptions())).raises(
        GameAlreadyCreated, f"game {GAME_ID} already exists"
    )


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (CreateGame("", RuleOptions()), "needs an id"),
        (CreateGame("g", RuleOptions(), (None, None, None)), "4 players need 4 seats, not 3"),
        (CreateGame("g", RuleOptions(), (None, "", None, None)), "names its strategy"),
    ],
)
def test_bad_create_commands_are_refused(command: CreateGame, reason: str) -> None:
    given().when(command).raises(InvalidCommand, reason)


@pytest.mark.parametrize(
    "command",
    [
        JoinGame("Ann"),
        SetSeatBot(0, "random"),
        Deal("seed"),
        PassCards(0, cards("2C 3C 4C")),
        PlayCard(0, Card("2C")),
        choose(0, "add_to_others"),
    ],
)
def test_every_command_needs_a_game(command: Any) -> None:
    given().when(command).raises(GameNotCreated, "no such game")


def test_joining_takes_the_first_open_seat_unless_one_is_named() -> None:
    story = created(seats=("random", None, None, None))
    given(story).when(JoinGame("  Ann  ")).then(PlayerJoined(1, "Ann"))
    given(story).when(JoinGame("Ann", seat=3, credential="h")).then(PlayerJoined(3, "Ann", "h"))


def test_the_last_join_makes_the_game_ready_to_deal() -> None:
    story = created().do(JoinGame("A"), JoinGame("B"), JoinGame("C"))
    assert story.state.phase is Phase.WAITING
    assert story.do(JoinGame("D")).state.phase is Phase.DEALING


def test_a_taken_seat_cannot_be_joined() -> None:
    story = created().do(JoinGame("Ann", seat=2))
    given(story).when(JoinGame("Bob", seat=2)).raises(SeatTaken, "seat 2 is taken")
    given(created(seats=(None, "random", None, None))).when(JoinGame("Bob", seat=1)).raises(
        SeatTaken
    )


def test_a_full_game_cannot_be_joined() -> None:
    given(seated()).when(JoinGame("Eve")).raises(GameFull, "every seat is taken")


@pytest.mark.parametrize("seat", [-1, 4, True, "0", 1.0])
def test_a_seat_outside_the_table_is_refused(seat: Any) -> None:
    given(created()).when(JoinGame("Ann", seat=seat)).raises(SeatOutOfRange, "seats are 0 to 3")


@pytest.mark.parametrize(
    ("name", "reason"),
    [("", "empty"), ("   ", "empty"), ("x" * 65, "at most 64"), (None, "text"), (7, "text")],
)
def test_a_player_needs_a_name_of_1_to_64_characters(name: Any, reason: str) -> None:
    from domain.errors import InvalidName

    given(created()).when(JoinGame(name)).raises(InvalidName, reason)


def test_a_name_of_64_characters_is_fine() -> None:
    given(created()).when(JoinGame("x" * 64)).then(PlayerJoined(0, "x" * 64))


def test_a_joined_seat_can_be_handed_to_a_bot_and_back() -> None:
    story = seated()
    story = given(story).when(SetSeatBot(1, "random")).then(SeatControlChanged(1, "random"))
    assert story.state.seats[1].bot == "random" and story.state.seats[1].name == "Bob"
    given(story).when(SetSeatBot(1, "random")).then()  # already so: nothing happens
    given(story).when(SetSeatBot(1, None)).then(SeatControlChanged(1, None))
    given(story).when(SetSeatBot(1, "")).raises(InvalidCommand)
    given(created()).when(SetSeatBot(0, "random")).raises(WrongPhase, "seat 0 is open")


# -- phases ---------------------------------------------------------------------------------------


def test_no_deal_until_every_seat_is_filled() -> None:
    story = created().do(JoinGame("Ann"))
    given(story).when(Deal("seed")).raises(WrongPhase, "cannot deal now: the game is waiting")


def test_no_second_deal_while_a_hand_is_on() -> None:
    given(seated().deal()).when(Deal("seed")).raises(WrongPhase, "the game is passing")
    given(seated(HOLD).deal()).when(Deal("seed")).raises(WrongPhase, "the game is playing")


def test_no_pass_or_play_before_the_deal() -> None:
    story = seated()
    given(story).when(pass_cards(0, "2C 3C 4C")).raises(WrongPhase, "game is dealing")
    given(story).when(play_card(0, "2C")).raises(WrongPhase, "game is dealing")
    given(story).when(choose(0, "add_to_others")).raises(WrongPhase)


def test_a_deal_needs_a_seed() -> None:
    given(seated()).when(Deal("")).raises(InvalidCommand, "a deal needs a seed")


def test_a_seeded_deal_is_dealt_and_its_seed_committed() -> None:
    story = seated().deal_seeded("abc")
    dealt = story.events[-1]
    assert dealt.seed == "abc" and not dealt.explicit  # type: ignore[union-attr]
    assert dealt.seed_commitment == (  # type: ignore[union-attr]
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


# -- seats, turns and cards -----------------------------------------------------------------------


def test_only_the_seat_whose_turn_it_is_may_play() -> None:
    story = seated(HOLD).deal()
    given(story).when(play_card(1, "2D")).raises(NotYourTurn, "seat 0's turn, not seat 1's")


@pytest.mark.parametrize("seat", [-1, 4, None])
def test_a_play_from_no_seat_is_refused(seat: Any) -> None:
    given(seated(HOLD).deal()).when(PlayCard(seat, Card("2C"))).raises(SeatOutOfRange)
    given(seated().deal()).when(PassCards(seat, cards("2C 3C 4C"))).raises(SeatOutOfRange)


def test_a_card_not_held_cannot_be_played() -> None:
    story = seated(HOLD).deal().play("2C")
    given(story).when(play_card(1, "3C")).raises(CardNotInHand, "you do not hold 3C")


def test_a_card_cannot_be_played_twice() -> None:
    story = seated(HOLD).deal().play("2C 2D 2S 2H")
    given(story).when(play_card(0, "2C")).raises(CardNotInHand)


def test_commands_may_name_cards_as_text() -> None:
    story = seated(HOLD).deal()
    given(story).when(PlayCard(0, "2c")).then(CardPlayed(0, Card("2C")))  # type: ignore[arg-type]
    story = seated().deal()
    passed = (
        given(story)
        .when(PassCards(0, ("2C", "10c", "Q♣")))
        .then(  # type: ignore[arg-type]
            CardsPassed(0, cards("2C TC QC"))
        )
    )
    assert all(type(c) is Card for c in passed.events[-1].cards)  # type: ignore[union-attr]


@pytest.mark.parametrize("text", ["ZZ", "", 12, None])
def test_a_command_naming_no_card_is_refused(text: Any) -> None:
    given(seated(HOLD).deal()).when(PlayCard(0, text)).raises(InvalidCommand, "not a card")
    given(seated().deal()).when(PassCards(0, ("2C", "3C", text))).raises(InvalidCommand)


# -- explicit deals -------------------------------------------------------------------------------


def test_an_explicit_deal_is_dealt_as_given() -> None:
    story = seated().do(Deal("s", FULL_DECK))
    dealt = story.events[-1]
    assert dealt.hands == FULL_DECK and dealt.explicit and dealt.kitty == ()  # type: ignore
    assert story.hand.dealt == FULL_DECK


def test_an_explicit_deal_may_be_written_as_text() -> None:
    hands = [[str(c).lower() for c in h] for h in FULL_DECK]
    story = seated().do(Deal("s", hands))  # type: ignore[arg-type]
    assert story.hand.dealt == FULL_DECK


def _swap(hands: tuple, seat: int, index: int, card: str) -> tuple:
    hand = list(hands[seat])
    hand[index] = card
    return hands[:seat] + (tuple(hand),) + hands[seat + 1 :]


@pytest.mark.parametrize(
    ("rules", "hands", "kitty", "reason"),
    [
        (RuleOptions(), FULL_DECK[:3], None, "a deal has 4 hands, not 3"),
        (RuleOptions(), FULL_DECK[:3] + (FULL_DECK[3][:12],), None, "seat 3 must be dealt 13"),
        (RuleOptions(), _swap(FULL_DECK, 0, 1, "2C"), None, "a card is dealt twice"),
        (RuleOptions(), _swap(FULL_DECK, 0, 1, "XX"), None, "not a card: 'XX'"),
        (RuleOptions(), FULL_DECK, ("2C",), "the kitty must be exactly the cards not dealt"),
        (RuleOptions(), "2C 3C", None, "a deal is a list of hands"),
        (RuleOptions(), ("2C 3C",) * 4, None, "a hand .and the kitty. is a list of cards"),
        (opts(players=3), None, None, "2C is out of play in these rules"),
        (opts(kitty=True), None, ("2C", "3C", "4C", "5C"), "the kitty must be exactly"),
    ],
)
def test_explicit_deals_are_checked(rules, hands, kitty, reason) -> None:
    if hands is None:  # 2C among the hands when it should be out of play / in the kitty
        size = rules.hand_size
        hands = tuple(tuple(DECK[i * size : (i + 1) * size]) for i in range(rules.players))
    given(seated(rules)).when(Deal("s", hands, kitty)).raises(InvalidDeal, reason)


def test_an_explicit_deal_with_a_kitty() -> None:
    story = seated(opts(kitty=True)).deal(kitty="AC AD AS AH")
    assert story.hand.kitty == cards("AC AD AS AH")
    assert story.hand.dealt[0] == cards("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC")


def test_every_violation_has_a_stable_code_and_kind() -> None:
    codes = [v.code for v in ALL_VIOLATIONS]
    assert len(codes) == len(set(codes))
    assert {v.kind for v in ALL_VIOLATIONS} <= {"conflict", "invalid", "not-found", "forbidden"}


def test_a_refused_command_changes_nothing() -> None:
    story = seated(HOLD).deal()
    before = story.state
    with pytest.raises(NotYourTurn):
        decide(play_card(1, "2D"), before)
    assert story.state == before


def test_every_command_is_refused_after_the_game_ends() -> None:
    """One refusal of its own (game-over, not wrong-phase) whatever the command."""
    story = seated(opts(pass_cycle="hold_always", score_limit=1)).deal().play_out()
    assert story.state.phase is Phase.FINISHED
    given(story).when(Deal("seed")).raises(GameOver, "the game is over")
    given(story).when(play_card(0, "2C")).raises(GameOver)
    given(story).when(pass_cards(0, "2C 3C 4C")).raises(GameOver)
    given(story).when(choose(0, "add_to_others")).raises(GameOver)
    given(story).when(SetSeatBot(0, "random")).raises(GameOver, "the game is over")
    given(story).when(SetSeatBot(0, None)).raises(GameOver)
    given(story).when(ReturnToSeat(0)).raises(GameOver)
    given(story).when(ContributeSeed(0, story.state.hand_number + 1, "late")).raises(GameOver)
    given(story).when(JoinGame("Eve")).raises(GameOver)
    given(story).when(ExpireGame("2027-01-01T00:00:00Z")).raises(GameOver)


def test_a_finished_game_is_still_told_apart_from_a_new_one() -> None:
    """Creating a game under a finished one's id is refused as a creation, not as game-over."""
    story = seated(opts(pass_cycle="hold_always", score_limit=1)).deal().play_out()
    given(story).when(CreateGame(opts())).raises(GameAlreadyCreated)


# -- refusals added with the seat rules -----------------------------------------------------------


def test_two_players_may_not_share_a_name_at_one_table():
    from domain.errors import NameTaken

    state = fold([GameCreated("g", RuleOptions(), (None, None, None, None))])
    state = fold([PlayerJoined(0, "ann")], state)
    with pytest.raises(NameTaken):
        decide(JoinGame("ann", 1), state)


def test_a_seat_dealt_to_a_bot_has_no_player_to_take_it_back():
    from domain.errors import NoPlayerToTakeOver

    state = fold([GameCreated("g", RuleOptions(), ("random", None, None, None))])
    with pytest.raises(NoPlayerToTakeOver):
        decide(SetSeatBot(0, None), state)


def test_a_player_takes_back_the_seat_they_handed_to_a_bot():
    state = fold([GameCreated("g", RuleOptions(), (None, None, None, None))])
    state = fold([PlayerJoined(0, "ann"), SeatControlChanged(0, "random")], state)
    assert decide(SetSeatBot(0, None), state) == [SeatControlChanged(0, None)]


def test_seats_given_as_text_are_refused():
    with pytest.raises(InvalidCommand):
        decide(CreateGame("g", RuleOptions(), "rand"), INITIAL_STATE)  # type: ignore[arg-type]


def test_a_kitty_without_hands_is_refused():
    state = fold([GameCreated("g", RuleOptions(kitty=True), ("random",) * 4)])
    with pytest.raises(InvalidCommand):
        decide(Deal(seed="s", kitty=(Card("2C"), Card("3C"), Card("4C"), Card("5C"))), state)


def test_unusual_spellings_of_a_card_are_not_cached():
    before = len(Card._interned)
    assert Card("  qs ") is Card("QS")
    assert len(Card._interned) == before


def test_the_game_is_terminal_only_once_it_has_ended() -> None:
    assert not is_terminal(INITIAL_STATE)
    assert not is_terminal(dataclasses.replace(INITIAL_STATE, phase=Phase.PLAYING))
    assert is_terminal(dataclasses.replace(INITIAL_STATE, phase=Phase.FINISHED))
