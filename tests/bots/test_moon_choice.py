"""The bots weigh a moon (or sun) by the points the rules give it, never a constant 26."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bots.base import best_moon_choice
from domain.rules import MoonScoring, RuleOptions


def _view(seat: int, scores: tuple[int, ...], tricks: tuple[int, ...] = ()) -> SimpleNamespace:
    """What best_moon_choice reads of a SeatView: the seat, the scores, the hand's tricks."""
    public = SimpleNamespace(scores=scores, tricks=tuple(SimpleNamespace(winner=w) for w in tricks))
    return SimpleNamespace(seat=seat, public=public)


def test_the_choice_follows_the_rules_points_of_a_hand(monkeypatch) -> None:
    view = _view(0, (30, 50, 60, 70))
    rules = RuleOptions()
    # 26: nobody reaches 100 by adding, and 30 - 26 stays >= 0: subtract.
    assert rules.moon_points == 26
    assert best_moon_choice(view, rules) is MoonScoring.SUBTRACT_FROM_SHOOTER  # type: ignore[arg-type]
    # Were a hand worth 40 (an option changing a card's points), adding ends the game with the
    # shooter ahead: the bot sees it only if it reads the rules.
    monkeypatch.setattr(RuleOptions, "moon_points", property(lambda self: 40))
    assert best_moon_choice(view, rules) is MoonScoring.ADD_TO_OTHERS  # type: ignore[arg-type]


@pytest.mark.parametrize("sun", [False, True])
def test_a_sun_is_weighed_at_the_suns_points(sun: bool) -> None:
    rules = RuleOptions(shoot_the_sun=True, score_limit=100)
    # Every trick mine: a sun (52), more than my 30, so subtracting is out: add. One trick
    # short: a moon (26), and 30 - 26 stays >= 0: subtract.
    tricks = (0,) * 13 if sun else (0,) * 12 + (1,)
    view = _view(0, (30, 40, 45, 47), tricks)
    expected = MoonScoring.ADD_TO_OTHERS if sun else MoonScoring.SUBTRACT_FROM_SHOOTER
    assert best_moon_choice(view, rules) is expected  # type: ignore[arg-type]
