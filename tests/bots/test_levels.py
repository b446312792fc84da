"""The named levels: each a bot any seat may name, playing legal moves at a person's pace in
every rule preset, and the same move for the same state and seed."""

from __future__ import annotations

import pytest

from bots import bot_names, get_bot
from bots.levels import DEFAULT_LEVEL, LEVELS, get_level, level_names, level_of
from bots.tournament import play_game
from domain.rules import PRESETS, RuleOptions
from tests.bots.test_bots import Checked


def test_four_levels_weakest_first_and_the_default_is_the_second_strongest() -> None:
    assert level_names() == ["beginner", "casual", "strong", "master"]
    assert level_names()[-2] == DEFAULT_LEVEL
    assert set(level_names()) <= set(bot_names())


def test_every_level_is_a_work_budget_never_a_time_one() -> None:
    # A seat's bot plays the same move wherever it runs: no level may read a clock.
    for level in LEVELS:
        assert ":ms=" not in level.spec and not level.spec.endswith("ms")
        assert getattr(get_bot(level.name), "clock", None) is None


def test_the_strategies_play_at_a_level() -> None:
    assert level_of("random") == "beginner"
    assert level_of("heuristic") == "casual"
    assert level_of("montecarlo") == "strong"
    assert level_of("master") == "master"
    assert level_of("nobody") is None
    assert get_level("strong") is not None and get_level("montecarlo") is None


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("level", LEVELS, ids=lambda level: level.name)
def test_every_level_plays_legal_moves_within_its_pace(level, preset: str) -> None:
    rules = RuleOptions.from_dict({"preset": preset})
    seat = sorted(PRESETS).index(preset) % rules.players  # the level's seat varies by preset
    bot = Checked(get_bot(level.name))
    lineup = ["random"] * rules.players
    lineup[seat] = "level"
    # One hand, the others random (cheap): the level passes (but in the hold hand) and plays.
    game = play_game(
        f"level-{level.name}-{preset}",
        rules,
        lineup,
        f"levels/{preset}",
        bots={"level": bot, "random": get_bot("random")},
        max_hands=1,
    )
    assert game.hands and bot.calls >= rules.hand_size
    # CPU time of the slowest decision, well under the level's pace on a busy machine too.
    assert game.slowest_decision[seat] * 1000 <= level.pace_ms


def test_the_master_plays_the_same_game_for_the_same_seeds() -> None:
    # Its pass and plays are sampled: from the decision's seed only (the others' levels are
    # plain strategies whose determinism tests/bots/test_bots.py checks).
    rules = RuleOptions.from_dict({"preset": "standard"})
    lineup = ["master", "random", "random", "random"]
    first, second = (
        play_game("same", rules, lineup, "levels/same", max_hands=1, keep_events=True)
        for _ in range(2)
    )
    assert first.events and first.events == second.events
