"""Rule options drawn from their one source, ``domain.rules.OPTIONS`` (issue 24).

Every option is drawn, by its ``OptionSpec`` (kind, choices, range, nullable): nothing here names
an option, so an option added to ``OPTIONS`` is drawn by every property test and by
``bench/digest.py`` the moment it exists. Which combinations are valid is the rules' own
validation (``RuleOptions.from_dict``): the options are drawn one by one in a drawn order, and a
value the options drawn so far make invalid is redrawn a few times, then left at its default.
Nothing is thrown away, so hypothesis never filters, and no cross-option rule is copied here.

One algorithm, two sources of choices: hypothesis (``rule_options``, shrinking toward the
standard game) and a seeded ``random.Random`` (``random_rule_options``, for the digest).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from domain.cards import DECK
from domain.errors import InvalidRules
from domain.rules import OPTIONS, OptionKind, OptionSpec, PassDirection, RuleOptions

T = TypeVar("T")

TRIES = 3  # values tried per option before it keeps its default
MAX_CYCLE = 5  # the longest pass cycle drawn
MAX_CARDS = 4  # the most removed cards drawn (52 mod 6 = 4)


class Picker(Protocol):
    """Where the choices come from."""

    def integer(self, low: int, high: int) -> int: ...

    def choice(self, values: Sequence[T]) -> T: ...

    def order(self, names: Sequence[str]) -> list[str]: ...


def draw_options(pick: Picker, ranges: Mapping[str, tuple[int, int]] | None = None) -> RuleOptions:
    """A valid option set with every option of ``OPTIONS`` drawn. ``ranges`` narrows integer
    options (e.g. a low ``score_limit`` so games end quickly)."""
    ranges = dict(ranges or {})
    for name in ranges:
        if name not in OPTIONS or OPTIONS[name].kind is not OptionKind.INTEGER:
            raise ValueError(f"{name} is not an integer rule option")
    chosen: dict[str, Any] = {}
    rules = RuleOptions.from_dict({})
    for name in pick.order(list(OPTIONS)):
        for _ in range(TRIES):
            value = option_value(pick, name, OPTIONS[name], ranges.get(name))
            try:
                rules = RuleOptions.from_dict({**chosen, name: value})
            except InvalidRules:
                continue  # refused with what is drawn so far: the rules say what goes together
            chosen[name] = value
            break
    return rules


def option_value(
    pick: Picker, name: str, spec: OptionSpec, narrowed: tuple[int, int] | None = None
) -> Any:
    """One JSON value for an option, from its spec alone."""
    if spec.nullable and pick.integer(0, 3) == 0:
        return None
    if spec.kind is OptionKind.BOOLEAN:
        return pick.choice((False, True))
    if spec.kind is OptionKind.INTEGER:
        assert spec.minimum is not None and spec.maximum is not None
        low, high = narrowed or (spec.minimum, spec.maximum)
        return pick.integer(max(low, spec.minimum), min(high, spec.maximum))
    if spec.kind is OptionKind.CHOICE:
        return pick.choice(spec.choices)
    if spec.kind is OptionKind.CARDS:
        left = [str(c) for c in DECK]
        cards = []
        for _ in range(pick.integer(0, MAX_CARDS)):
            cards.append(left.pop(pick.integer(0, len(left) - 1)))
        return cards
    if spec.kind is OptionKind.CYCLE:
        if spec.choices and pick.integer(0, 2) == 0:
            return pick.choice(spec.choices)  # a named cycle
        directions = [d.value for d in PassDirection]
        return [pick.choice(directions) for _ in range(pick.integer(1, MAX_CYCLE))]
    raise AssertionError(f"no way to draw a {spec.kind} option ({name}): add one here")


class _Hypothesis:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def choice(self, values: Sequence[T]) -> T:
        return self.draw(st.sampled_from(values))

    def order(self, names: Sequence[str]) -> list[str]:
        return self.draw(st.permutations(names))


class _Random:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def choice(self, values: Sequence[T]) -> T:
        return self.rng.choice(values)

    def order(self, names: Sequence[str]) -> list[str]:
        return self.rng.sample(list(names), len(names))


@st.composite
def rule_options(draw: st.DrawFn, **ranges: tuple[int, int]) -> RuleOptions:
    """Any valid option set, every option drawn: ``rule_options(score_limit=(5, 30))``."""
    return draw_options(_Hypothesis(draw), ranges)


def random_rule_options(rng: random.Random, **ranges: tuple[int, int]) -> RuleOptions:
    """The same draw from a seeded ``random.Random`` (the same options every run)."""
    return draw_options(_Random(rng), ranges)
