"""Matchpoints: one per player beaten on the same seat of the same board, a half per tie."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from domain.tournament.matchpoints import BoardResult, half_matchpoints, standings


def _board(scores: list[tuple[str | None, int]], seat: int = 0) -> list[BoardResult]:
    return [BoardResult(1, 1, t, seat, p, s) for t, (p, s) in enumerate(scores)]


def test_fewer_points_beat_more_and_ties_share() -> None:
    mp = half_matchpoints(_board([("a", 0), ("b", 5), ("c", 5), ("d", 26)]))
    assert mp[(1, 1, 0, "a")] == (6, 6)  # beat three
    assert mp[(1, 1, 0, "b")] == (3, 6)  # beat d, tied c
    assert mp[(1, 1, 0, "c")] == (3, 6)
    assert mp[(1, 1, 0, "d")] == (0, 6)


def test_a_moon_counts_as_it_was_scored() -> None:
    # The shooter's hand scored 0 (others +26): it beats a 3 on the same seat.
    mp = half_matchpoints(_board([("shooter", 0), ("other", 3)]))
    assert mp[(1, 1, 0, "shooter")] == (2, 2)


def test_house_bots_are_neither_compared_nor_ranked() -> None:
    mp = half_matchpoints(_board([("a", 10), (None, 0), ("b", 12)]))
    assert mp == {(1, 1, 0, "a"): (2, 2), (1, 1, 0, "b"): (0, 2)}
    table = standings(_board([("a", 10), (None, 0), ("b", 12)]), ["a", "b"])
    assert [s.player for s in table] == ["a", "b"]


def test_only_the_same_seat_of_the_same_board_is_compared() -> None:
    results = _board([("a", 1)], seat=0) + _board([("b", 9)], seat=1)
    assert half_matchpoints(results) == {(1, 1, 0, "a"): (0, 0), (1, 1, 1, "b"): (0, 0)}


def test_standings_by_percentage_then_points_with_shared_places() -> None:
    results = [
        *_board([("a", 0), ("b", 13)], seat=0),
        *_board([("c", 13), ("d", 0)], seat=1),
        *_board([("e", 4), ("f", 4)], seat=2),
    ]
    table = standings(results, ["a", "b", "c", "d", "e", "f"])
    assert [(s.place, s.player) for s in table] == [
        (1, "a"),
        (1, "d"),
        (3, "e"),
        (3, "f"),
        (5, "b"),
        (5, "c"),
    ]
    assert table[0].percentage == 100 and table[2].percentage == 50
    assert table[0].matchpoints == Fraction(1)


@given(st.lists(st.integers(0, 26), min_size=1, max_size=12))
def test_the_matchpoints_of_a_group_add_up_to_one_per_pair(scores: list[int]) -> None:
    mp = half_matchpoints(_board([(f"p{i}", s) for i, s in enumerate(scores)]))
    n = len(scores)
    assert sum(half for half, _ in mp.values()) == n * (n - 1)  # halves: 2 per pair / 2 ... x2
    assert all(top == 2 * (n - 1) for _, top in mp.values())
