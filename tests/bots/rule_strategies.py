"""Hypothesis strategies for rule options the bots must play under: every option, varied."""

from __future__ import annotations

from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from domain.errors import InvalidRules
from domain.rules import RuleOptions


@st.composite
def rule_options(draw: st.DrawFn, max_score_limit: int = 30) -> RuleOptions:
    players = draw(st.sampled_from([3, 4, 4, 4, 5, 6]))
    optional = draw(st.booleans())
    directions = ["left", "right", "hold", "mix"]
    if players % 2 == 0:
        directions.append("across")
    if not optional:
        directions.append("scatter")
    cycle = draw(st.lists(st.sampled_from(directions), min_size=1, max_size=4))
    hearts_lead = draw(st.sampled_from(["when_broken", "any_time"]))
    options: dict[str, Any] = {
        "players": players,
        "pass_cycle": cycle,
        "pass_cycle_repeats": draw(st.booleans()),
        "optional_passing": optional,
        "cards_passed": draw(st.integers(0, 4)),
        "kitty": draw(st.booleans()),
        "first_lead": draw(st.sampled_from(["lowest_club", "left_of_dealer"])),
        "hearts_lead": hearts_lead,
        "queen_breaks_hearts": draw(st.booleans()),
        "hearts_and_queen_may_lead_hearts": hearts_lead == "when_broken" and draw(st.booleans()),
        "no_points_on_first_trick": draw(st.booleans()),
        "must_play_queen_when_safe": draw(st.booleans()),
        "bonus_card": draw(st.sampled_from([None, "JD", "TD"])),
        "shoot_the_sun": draw(st.booleans()),
        "moon_scoring": draw(
            st.sampled_from(
                [
                    "add_to_others",
                    "subtract_from_shooter",
                    "add_unless_shooter_loses",
                    "shooters_choice",
                ]
            )
        ),
        "penalty_suit": draw(st.sampled_from(["hearts", "hearts", "diamonds"])),
        "score_limit": draw(st.integers(5, max_score_limit)),
        "exact_limit_reset": draw(st.sampled_from(["none", "half", "zero"])),
        "tie_break": draw(st.sampled_from(["shared", "play_on"])),
    }
    if options["penalty_suit"] == "diamonds" and options["bonus_card"] is not None:
        options["bonus_card"] = None  # the bonus card is a diamond
    try:
        return RuleOptions.from_dict(options)
    except InvalidRules:
        assume(False)
        raise  # pragma: no cover - assume(False) never returns
