"""A seat that leaves a game without a turn clock (issue 32, item 9): the service asks
``AbandonGame(seat, at)`` once the awaited seat has been silent for its setting's time; the
domain checks the game waits on that seat's own player, and the game ends, the others ranked
by their totals. A game with a clock times the seat out instead."""

from __future__ import annotations

import pytest

from domain.commands import AbandonGame, JoinGame, SetSeatBot
from domain.errors import GameOver, InvalidCommand, NotYourSeat, NotYourTurn, WrongPhase
from domain.events import GameAbandoned, GameEnded
from domain.state import Phase
from domain.views import public_view
from tests.domain.given import HOLD, created, given, opts, seated

AT = "2026-11-27T10:00:00.000000Z"


def test_the_seat_to_play_leaves_and_the_game_ends_without_it_among_the_winners() -> None:
    story = seated(HOLD).deal(None, None, None, None)
    turn = story.state.hand.turn
    others = tuple(s for s in range(4) if s != turn)
    after = (
        given(story)
        .when(AbandonGame(turn, AT))
        .then(GameAbandoned(turn, AT), GameEnded(others, (0, 0, 0, 0)))
    )
    assert after.state.phase is Phase.FINISHED
    assert after.state.abandoned_by == turn
    assert public_view(after.state).to_dict()["abandoned_by"] == turn


def test_the_winners_are_the_others_with_the_lowest_total() -> None:
    story = seated(HOLD).deal(None, None, None, None).play_out()
    story = story.deal(None, None, None, None)  # hand 2: the totals of hand 1 stand
    turn = story.state.hand.turn
    totals = story.state.scores
    others = [s for s in range(4) if s != turn]
    best = min(totals[s] for s in others)
    ended = given(story).when(AbandonGame(turn, AT)).events()[-1]
    assert ended == GameEnded(tuple(s for s in others if totals[s] == best), totals)


def test_a_seat_that_has_not_passed_leaves_in_the_passing_phase() -> None:
    story = seated().deal(None, None, None, None)
    given(story).when(AbandonGame(2, AT)).then_starts_with(GameAbandoned(2, AT))


def test_a_seat_the_game_does_not_wait_on_does_not_leave() -> None:
    story = seated(HOLD).deal(None, None, None, None)
    other = (story.state.hand.turn + 1) % 4
    given(story).when(AbandonGame(other, AT)).raises(NotYourTurn)


def test_a_game_with_a_turn_clock_times_out_instead() -> None:
    story = seated(opts(pass_cycle="hold_always", time_control="quick"))
    story = story.deal(None, None, None, None)
    given(story).when(AbandonGame(story.state.hand.turn, AT)).raises(InvalidCommand, "clock")


def test_a_bots_seat_does_not_leave() -> None:
    story = seated(HOLD).deal(None, None, None, None)
    turn = story.state.hand.turn
    story = story.do(SetSeatBot(turn, "random"))
    given(story).when(AbandonGame(turn, AT)).raises(NotYourSeat)


@pytest.mark.parametrize("phase", ["waiting", "finished"])
def test_only_a_game_in_play_is_abandoned(phase: str) -> None:
    story = created().do(JoinGame("Bea", 0, "c0"))
    if phase == "finished":
        story = seated(HOLD).then_(GameEnded((0,), (0, 0, 0, 0)))
    # A finished game refuses every command as over (game-over); a waiting one, as too early.
    refused = GameOver if phase == "finished" else WrongPhase
    given(story).when(AbandonGame(0, AT)).raises(refused)


def test_an_abandonment_names_its_time() -> None:
    story = seated(HOLD).deal(None, None, None, None)
    given(story).when(AbandonGame(story.state.hand.turn, "")).raises(InvalidCommand, "time")
