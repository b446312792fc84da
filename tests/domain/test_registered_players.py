"""Seats of registered players (issue 20): a join carries the player's id (the service resolved
the player's key to it), and only that player may give the seat a new credential."""

from __future__ import annotations

import pytest

from domain.commands import JoinGame, ResumeSeat
from domain.decider import decide
from domain.errors import GameOver, NotYourSeat
from domain.events import GameEnded, PlayerJoined, SeatResumed
from domain.views import public_view
from tests.domain.given import created


def test_a_join_with_a_player_id_binds_the_seat_and_a_guest_is_marked() -> None:
    story = created().do(JoinGame("Bea", 0, "c0", "p1"), JoinGame("cy", 1, "c1"))
    assert story.events[-2:] == (PlayerJoined(0, "Bea", "c0", "p1"), PlayerJoined(1, "cy", "c1"))
    seats = story.state.seats
    assert (seats[0].player_id, seats[0].guest) == ("p1", False)
    assert (seats[1].player_id, seats[1].guest) == (None, True)
    assert not seats[2].guest  # open
    shown = public_view(story.state).to_dict()["seats"]
    assert [(s["player_id"], s["guest"]) for s in shown[:3]] == [
        ("p1", False),
        (None, True),
        (None, False),
    ]


def test_the_player_who_joined_a_seat_resumes_it_with_a_new_credential() -> None:
    story = created().do(JoinGame("Bea", 0, "c0", "p1"))
    resumed = story.do(ResumeSeat(0, "p1", "c0-new"))
    assert resumed.events[-1] == SeatResumed(0, "c0-new")
    seat = resumed.state.seats[0]
    assert (seat.credential, seat.name, seat.player_id) == ("c0-new", "Bea", "p1")


@pytest.mark.parametrize(
    "command",
    [
        ResumeSeat(0, "p2", "x"),
        ResumeSeat(1, "p1", "x"),
        ResumeSeat(2, "p1", "x"),
        ResumeSeat(0, "", "x"),
    ],
)
def test_no_one_else_resumes_a_seat(command: ResumeSeat) -> None:
    """Another player, a guest's seat, an open seat, no player at all."""
    story = created().do(JoinGame("Bea", 0, "c0", "p1"), JoinGame("cy", 1, "c1"))
    with pytest.raises(NotYourSeat):
        decide(command, story.state)


def test_a_finished_game_is_not_resumed() -> None:
    story = created().do(JoinGame("Bea", 0, "c0", "p1")).then_(GameEnded((0,), (0, 0, 0, 0)))
    with pytest.raises(GameOver):
        decide(ResumeSeat(0, "p1", "x"), story.state)
