"""A game that ends because a seat left (GameAbandoned, issue 32): the scoreboard ends it like
any finished game and names the leaver. Only a clockless game is abandoned (a clocked one times
its silent player out instead), and a clockless game is never rated: an abandoned game moves no
rating, even with four registered players."""

from __future__ import annotations

from dataclasses import replace

from domain.commands import AbandonGame, CreateGame, JoinGame
from projections.scoreboard import STATUS_FINISHED, SourceEvent, fold_game, rated_game
from tests.domain.given import HOLD, Story

AT = "2026-11-27T10:00:00.000000Z"


def _abandoned() -> tuple[Story, int]:
    story = Story.of(()).do(CreateGame("g1", HOLD))
    for seat in range(4):
        story = story.do(JoinGame(f"P{seat}", seat, f"c{seat}", f"pl_{seat}"))
    story = story.deal(None, None, None, None).play_out()  # hand 1: totals apart
    story = story.deal(None, None, None, None)
    leaver = story.state.hand.turn
    return story.do(AbandonGame(leaver, AT)), leaver


def test_the_scoreboard_ends_the_game_and_it_is_unrated() -> None:
    story, leaver = _abandoned()
    events = [SourceEvent("g1", seq, e, AT) for seq, e in enumerate(story.events, start=1)]
    board = fold_game(events).board
    assert board is not None
    assert board.status == STATUS_FINISHED and board.abandoned_by == leaver
    assert leaver not in board.winners
    assert board.rules["seconds_per_decision"] == 0  # the only kind of game abandoned
    assert all(s.player_id for s in board.seats)  # four registered players...
    assert rated_game(board, AT) is None  # ...and still unrated: it had no clock
    clocked = replace(board, rules={**board.rules, "seconds_per_decision": 60})
    assert rated_game(clocked, AT) is not None  # the clock is what it lacked


def test_a_stored_board_keeps_the_leaver() -> None:
    story, leaver = _abandoned()
    events = [SourceEvent("g1", seq, e, AT) for seq, e in enumerate(story.events, start=1)]
    board = fold_game(events).board
    assert board is not None
    assert type(board).from_dict(board.to_dict()).abandoned_by == leaver
