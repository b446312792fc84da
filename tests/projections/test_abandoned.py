"""A game that ends because a seat left (GameAbandoned, issue 32): the scoreboard ends it like
any finished game and names the leaver; the ratings rank the leaver last, alone (a loss), and
the others by their totals."""

from __future__ import annotations

from domain.commands import AbandonGame, CreateGame, JoinGame
from projections.ratings import places, standings
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


def test_the_scoreboard_ends_the_game_and_the_ratings_rank_the_leaver_last() -> None:
    story, leaver = _abandoned()
    events = [SourceEvent("g1", seq, e, AT) for seq, e in enumerate(story.events, start=1)]
    board = fold_game(events).board
    assert board is not None
    assert board.status == STATUS_FINISHED and board.abandoned_by == leaver
    assert leaver not in board.winners
    rated = rated_game(board, AT)
    assert rated is not None
    assert rated.left == {f"pl_{leaver}"}  # left, as a seat handed to a bot has
    ranks = places(standings(rated))
    assert ranks[leaver] == 4 and ranks.count(4) == 1  # last, alone
    others = [s for s in range(4) if s != leaver]
    by_total = sorted(others, key=lambda s: board.totals[s])
    assert [ranks[s] for s in by_total] == sorted(ranks[s] for s in others)


def test_a_stored_board_keeps_the_leaver() -> None:
    story, leaver = _abandoned()
    events = [SourceEvent("g1", seq, e, AT) for seq, e in enumerate(story.events, start=1)]
    board = fold_game(events).board
    assert board is not None
    assert type(board).from_dict(board.to_dict()).abandoned_by == leaver
