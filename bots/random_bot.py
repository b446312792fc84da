"""``random``: a uniformly random legal move."""

from __future__ import annotations

from domain.cards import Card
from domain.rules import MoonScoring, RuleOptions
from domain.views import SeatView

from .base import best_moon_choice, register, rng_for


@register("random")
class RandomBot:
    name = "random"

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        return tuple(rng_for(seed).sample(list(view.legal_cards), view.cards_to_pass))

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        return rng_for(seed).choice(list(view.legal_cards))

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        return best_moon_choice(view, rules)
