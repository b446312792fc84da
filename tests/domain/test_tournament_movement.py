"""The duplicate movement: every player once per round, pairs spread, seats rotated."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from domain.tournament.movement import affine_plane_4, meetings, movement


def test_the_affine_plane_of_order_4_has_every_pair_on_exactly_one_line() -> None:
    lines = [line for cls in affine_plane_4() for line in cls]
    assert len(lines) == 20
    on = {pair: 0 for pair in combinations(range(16), 2)}
    for line in lines:
        for a, b in combinations(sorted(line), 2):
            on[(a, b)] += 1
    assert set(on.values()) == {1}
    for cls in affine_plane_4():  # a parallel class covers every point once
        assert sorted(p for line in cls for p in line) == list(range(16))


def test_sixteen_players_in_five_rounds_meet_every_other_once_and_sit_every_seat() -> None:
    plan = movement(16, 5, "t-anything")
    met = meetings(plan)
    assert len(met) == 120 and set(met.values()) == {1}
    for player in range(16):
        seats = {s for rnd in plan for table in rnd for s, p in enumerate(table) if p == player}
        assert seats == {0, 1, 2, 3}


def test_sixteen_players_in_fewer_rounds_never_meet_twice() -> None:
    for rounds in (1, 2, 3, 4):
        assert set(meetings(movement(16, rounds, "k")).values()) == {1}


def test_a_movement_is_the_same_for_the_same_key_and_differs_by_key() -> None:
    assert movement(14, 4, "a") == movement(14, 4, "a")
    assert movement(16, 5, "a") != movement(16, 5, "b")


@given(players=st.integers(4, 24), rounds=st.integers(1, 6), key=st.text(max_size=8))
def test_every_player_sits_once_a_round_at_full_or_nearly_full_tables(
    players: int, rounds: int, key: str
) -> None:
    plan = movement(players, rounds, key)
    assert len(plan) == rounds
    for rnd in plan:
        seated = [p for table in rnd for p in table if p is not None]
        assert sorted(seated) == list(range(players))
        filled = [sum(p is not None for p in table) for table in rnd]
        assert max(filled) - min(filled) <= 1 and min(filled) >= 2
        assert all(len(table) == 4 for table in rnd)


def test_other_sizes_spread_repeat_meetings_and_rotate_seats() -> None:
    # The search's figures for these sizes (docs/tournaments.md): with 5 rounds every player
    # holds every seat, and no pair meets three times where twice suffices.
    for players in (8, 9, 12, 14, 20):
        plan = movement(players, 5, "figures")
        met = meetings(plan)
        assert max(met.values()) <= (3 if players <= 12 else 2), players
        for player in range(players):
            seats = {s for rnd in plan for t in rnd for s, p in enumerate(t) if p == player}
            assert seats == {0, 1, 2, 3}, (players, player)
