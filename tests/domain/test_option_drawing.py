"""The property tests draw every rule option from its one source, ``domain.rules.OPTIONS``
(tests/rule_strategies.py): an option added there is drawn, every value of it, and a wrong
scoring branch for it is found by the scoring oracle (tests/domain/test_properties.py)."""

from __future__ import annotations

import json
import random
from collections import defaultdict

import pytest
from hypothesis import Phase, given, settings

import domain.scoring
from domain.rules import OPTIONS, OptionKind
from domain.scoring import Shot
from tests.domain.test_properties import SEEDS, check_scoring, play_hands, start
from tests.rule_strategies import random_rule_options, rule_options

SMALL_RANGE = 10  # an integer option of at most this many values must show its minimum and maximum


def test_every_value_of_every_option_is_drawn_in_a_valid_option_set() -> None:
    rng = random.Random(24)
    seen: dict[str, set[str]] = defaultdict(set)
    for _ in range(1500):
        rules = random_rule_options(rng, score_limit=(1, 10))
        for name, value in rules.to_dict().items():
            seen[name].add(json.dumps(value))
    missing = []
    for name, spec in OPTIONS.items():
        if spec.kind is OptionKind.BOOLEAN:
            wanted = {"false", "true"}
        elif spec.kind is OptionKind.CHOICE:
            wanted = {json.dumps(c) for c in spec.choices}
        elif spec.kind is OptionKind.INTEGER:
            assert spec.minimum is not None and spec.maximum is not None
            low, high = (1, 10) if name == "score_limit" else (spec.minimum, spec.maximum)
            wanted = {json.dumps(low), json.dumps(high)} if high - low < SMALL_RANGE else set()
        else:
            wanted = set()
        if spec.nullable:
            wanted.add("null")
        if not wanted <= seen[name] or len(seen[name]) < 2:
            missing.append(f"{name}: never {sorted(wanted - seen[name]) or 'varied'}")
    assert not missing, "options the strategy never draws in a valid set: " + "; ".join(missing)


def _hands_are_scored_right():
    """The scoring property of test_properties.py, without shrinking (only finding matters)."""

    @settings(
        max_examples=40,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        report_multiple_bugs=False,
    )
    @given(rules=rule_options(score_limit=(1, 100)), seed=SEEDS)
    def check(rules, seed: int) -> None:
        game = start(rules, seed)
        play_hands(game, hands=3)
        check_scoring(rules, game.log)

    return check


def test_a_wrong_scoring_branch_is_found_once_its_option_is_in_OPTIONS(monkeypatch) -> None:
    # shoot_the_sun stands in for a new option: its scoring branch is broken on purpose (a seat
    # that took most tricks, not all, "shot the sun").
    real_find_shot = domain.scoring.find_shot

    def wrong_find_shot(rules, taken, tricks_won):
        if rules.shoot_the_sun:
            for seat, won in enumerate(tricks_won):
                if won * 2 > sum(tricks_won):
                    return Shot(seat, "sun", rules.sun_points)
        return real_find_shot(rules, taken, tricks_won)

    monkeypatch.setattr(domain.scoring, "find_shot", wrong_find_shot)
    # Before the option is in OPTIONS nothing draws it, so nothing reaches the broken branch...
    declared = dict(OPTIONS)  # put back as it was, in its order (OPTIONS's order is declared)
    try:
        del OPTIONS["shoot_the_sun"]
        _hands_are_scored_right()()
        # ...and with only its OPTIONS entry back, the same property finds the wrong scores.
        OPTIONS["shoot_the_sun"] = declared["shoot_the_sun"]
        with pytest.raises(AssertionError) as found:
            _hands_are_scored_right()()
        assert any(entry.name == "check_scoring" for entry in found.traceback)
    finally:
        OPTIONS.clear()
        OPTIONS.update(declared)
