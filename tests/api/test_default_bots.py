"""Every place the service picks a bot for a person's table picks the default level of
bots/levels.py (the one place the levels are defined), never a strategy named on its own: the
matchmaker's fill and a challenge's other seats. (A tournament's house bot is the organiser's
choice, `heuristic` unless named: it fills many tables at once.)"""

from __future__ import annotations

from bots import get_bot
from bots.levels import DEFAULT_LEVEL, get_level
from service.app import challenges, matchmaking


def test_the_default_level_is_a_level_any_seat_may_name() -> None:
    assert get_level(DEFAULT_LEVEL) is not None
    assert get_bot(DEFAULT_LEVEL) is not None


def test_the_matchmaker_and_challenges_fill_with_the_default_level() -> None:
    assert matchmaking.FILL_BOT == DEFAULT_LEVEL
    assert challenges.FILL_BOT == DEFAULT_LEVEL
