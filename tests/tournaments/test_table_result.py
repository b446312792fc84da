"""A table's result as the tournament records it: the hands' scores, and last (UNPLAYED) for a
board never scored or a seat its player left to a bot during that hand."""

from __future__ import annotations

from domain.events import HandDealt, HandScored, SeatControlChanged
from service.app.game_log import Entry
from service.app.tournaments import UNPLAYED, table_result


def _dealt(n: int) -> HandDealt:
    return HandDealt(n, 0, None, (), (), "seed", "commitment", False)  # type: ignore[arg-type]


def _scored(n: int, changes: tuple[int, ...]) -> HandScored:
    return HandScored(n, changes, None, None, None, changes, (), changes)


def _entries(*events) -> list[Entry]:
    return [Entry(i, "", "", "", event) for i, event in enumerate(events, start=1)]


def test_each_board_is_its_hands_score_moon_as_scored() -> None:
    log = _entries(_dealt(1), _scored(1, (0, 26, 26, 26)), _dealt(2), _scored(2, (3, 10, 0, 13)))
    assert table_result(log, 2, [None] * 4) == ((0, 26, 26, 26), (3, 10, 0, 13))


def test_a_board_never_scored_is_last_for_every_seat() -> None:
    log = _entries(_dealt(1), _scored(1, (1, 2, 3, 20)), _dealt(2))
    assert table_result(log, 2, [None] * 4)[1] == (UNPLAYED,) * 4


def test_a_seat_left_to_a_bot_scores_last_on_the_hands_it_was_left() -> None:
    log = _entries(
        _dealt(1),
        SeatControlChanged(2, "random"),  # handed over during hand 1
        SeatControlChanged(2, None),  # and taken back before hand 2
        _scored(1, (1, 2, 3, 20)),
        _dealt(2),
        _scored(2, (4, 5, 6, 11)),
    )
    assert table_result(log, 2, [None] * 4) == ((1, 2, UNPLAYED, 20), (4, 5, 6, 11))


def test_a_bot_accounts_own_stand_in_is_no_leaving() -> None:
    log = _entries(_dealt(1), SeatControlChanged(0, "random"), _scored(1, (5, 5, 5, 11)))
    assert table_result(log, 1, ["random", None, None, None]) == ((5, 5, 5, 11),)
    assert table_result(log, 1, ["heuristic", None, None, None]) == ((UNPLAYED, 5, 5, 11),)
