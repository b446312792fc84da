"""The one bot interface, and the registry of strategies by name."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Protocol

from domain.cards import Card
from domain.rules import MoonScoring, RuleOptions
from domain.views import SeatView


class Bot(Protocol):
    name: str

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        """The cards to pass (``view.cards_to_pass`` of them, from ``view.legal_cards``)."""
        ...

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        """One card of ``view.legal_cards``."""
        ...

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        """After shooting the moon, where the rules let the shooter choose."""
        ...


class UnknownBot(ValueError):
    def __init__(self, name: object) -> None:
        super().__init__(f"unknown bot {name!r}; one of {', '.join(bot_names())}")
        self.name = name


_REGISTRY: dict[str, Callable[[], Bot]] = {}


def register(name: str) -> Callable[[Callable[[], Bot]], Callable[[], Bot]]:
    def add(factory: Callable[[], Bot]) -> Callable[[], Bot]:
        _REGISTRY[name] = factory
        return factory

    return add


def get_bot(name: str) -> Bot:
    _load_strategies()
    try:
        return _REGISTRY[name]()
    except (KeyError, TypeError):
        raise UnknownBot(name) from None


def bot_names() -> list[str]:
    _load_strategies()
    return sorted(_REGISTRY)


def _load_strategies() -> None:
    from . import heuristic, montecarlo, random_bot  # noqa: F401  (each registers itself)
    from .levels import LEVELS
    from .specs import make_bot

    # A level is a name for a spec (bots/levels.py): a seat may name it as it names a strategy.
    for level in LEVELS:
        if level.name not in _REGISTRY:
            _REGISTRY[level.name] = partial(make_bot, level.spec)


def rng_for(seed: str) -> random.Random:
    """A private random stream for one decision (string seeds hash the same in every process)."""
    return random.Random(seed)


def best_moon_choice(view: SeatView, rules: RuleOptions) -> MoonScoring:
    """Whichever moon scoring leaves the shooter furthest ahead of the best other score."""
    me = view.seat
    scores = list(view.public.scores)
    others = [s for i, s in enumerate(scores) if i != me]
    # The shot's points are the rules' (a function of the options, never a constant): the sun
    # when every trick of the hand was mine and the rules score it, else the moon.
    tricks = view.public.tricks
    sun = rules.shoot_the_sun and bool(tricks) and all(t.winner == me for t in tricks)
    shot = rules.sun_points if sun else rules.moon_points
    # Subtracting the shot moves me that much closer to the others; adding it to them does the
    # same, but pushes them toward the limit, which can end the game with me ahead.
    if max(others) + shot >= rules.score_limit and scores[me] < min(o + shot for o in others):
        return MoonScoring.ADD_TO_OTHERS
    return MoonScoring.SUBTRACT_FROM_SHOOTER if scores[me] >= shot else MoonScoring.ADD_TO_OTHERS
