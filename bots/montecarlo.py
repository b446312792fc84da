"""``montecarlo``: sample the unseen cards, play every candidate out, keep the best on average.

For each decision it deals the cards it cannot see in ways that agree with what its seat knows
(``bots.sampling``), plays each distinct legal card in each sampled deal, finishes the hand with
every seat playing ``heuristic`` on the compact simulation (``bots.simulation``), and scores the
outcome as its own points minus the others' average (so a moon counts for what it does to the
standings). The same deals serve every candidate, so differences between candidates are not
drowned in deal-to-deal noise; the heuristic's own choice stands unless another card does better
by a margin.

The budget is work, not time, so a seed always gives the same choice: at most ``plays`` simulated
plays per decision, split over the candidates, within ``min_samples``..``max_samples`` deals.
``seconds`` adds a wall-clock cap for callers that prefer a deadline to determinism. Passing
uses the heuristic's pass.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from domain.cards import Card
from domain.rules import MoonScoring, RuleOptions
from domain.views import SeatView

from .base import best_moon_choice, register
from .cardbits import QS, SUIT_MASK, bits, card_of, mask_of
from .heuristic import choose_card, pass_cards
from .knowledge import Knowledge, knowledge_of
from .sampling import sample_state
from .simulation import PlayState, legal_mask, outcome, play, table_rules


@dataclass(frozen=True, slots=True)
class Budget:
    plays: int = 3500  # simulated plays per decision, over every sample and candidate
    min_samples: int = 6
    max_samples: int = 60
    seconds: float | None = None  # optional wall-clock cap (then a seed no longer fixes the choice)
    margin: float = 0.25  # points per hand another card must beat the heuristic's choice by
    # Stop sampling once no card is within this many standard errors of beating the heuristic's
    # card by the margin (see _settled); 0 or less: always play ``samples`` deals.
    settle_z: float = 1.5


DEFAULT_BUDGET = Budget()


class MonteCarloBot:
    name = "montecarlo"

    def __init__(self, budget: Budget = DEFAULT_BUDGET) -> None:
        self.budget = budget

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        picks = pass_cards(mask_of(view.legal_cards), table_rules(rules), view.cards_to_pass)
        return tuple(card_of(c) for c in picks)

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        if len(view.legal_cards) == 1:
            return view.legal_cards[0]
        k = knowledge_of(view, rules)
        legal = mask_of(view.legal_cards)
        return card_of(best_card(k, legal, random.Random(seed), self.budget))

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        return best_moon_choice(view, rules)


register("montecarlo")(MonteCarloBot)


def best_card(k: Knowledge, legal: int, rng: random.Random, budget: Budget) -> int:
    me = k.seat
    default = choose_card(k.state, me, legal)
    candidates = distinct_cards(legal, k.state.hands[me], k.unseen, k.state.rules.bonus)
    if len(candidates) == 1:
        return default
    # The heuristic's card stands for its class of equivalent cards.
    candidates = [default if _same_class(c, default, candidates) else c for c in candidates]
    to_play = sum(k.sizes)
    samples = budget.plays // (len(candidates) * max(to_play, 1))
    samples = max(budget.min_samples, min(budget.max_samples, samples))
    deadline = time.perf_counter() + budget.seconds if budget.seconds is not None else None
    totals = [0.0] * len(candidates)
    d = candidates.index(default)
    # Per candidate, the sums of its value less the default's per deal, and of their squares:
    # what the early stop below reads.
    gaps = [0.0] * len(candidates)
    squares = [0.0] * len(candidates)
    done = 0
    for _ in range(samples):
        world = sample_state(k, rng)
        values = [_value(_play_out(world.copy(), me, card), me) for card in candidates]
        base_value = values[d]
        for j, v in enumerate(values):
            totals[j] += v
            gap = v - base_value
            gaps[j] += gap
            squares[j] += gap * gap
        done += 1
        if (
            budget.settle_z > 0
            and done >= max(budget.min_samples, 2)
            and _settled(gaps, squares, done, budget)
        ):
            break
        if deadline is not None and done >= budget.min_samples and time.perf_counter() > deadline:
            break
    base = totals[d]
    best = min(range(len(candidates)), key=lambda j: totals[j])
    if totals[best] < base - budget.margin * done:
        return candidates[best]
    return default


def _settled(gaps: list[float], squares: list[float], done: int, budget: Budget) -> bool:
    """Whether more deals would hardly change the choice: the heuristic's card stands, since no
    other card is within ``settle_z`` standard errors of beating it by the margin (paired, deal
    by deal).

    Most decisions settle after ``min_samples`` deals (every card scores alike, or the
    heuristic's card is clearly best); the budget goes to the close ones.
    """
    for gap, square in zip(gaps, squares, strict=True):
        mean = gap / done
        squared_error = max(square / done - mean * mean, 0.0) / (done - 1)  # of the mean
        if mean - budget.settle_z * squared_error**0.5 <= -budget.margin:
            return False
    return True


def distinct_cards(legal: int, hand: int, unseen: int, bonus: int) -> list[int]:
    """One card per class of legal cards that play alike.

    Two cards of a suit with no unseen card between them win and lose the same tricks; the
    queen of spades and the bonus card carry their own points, so each stays its own class.
    """
    out: list[int] = []
    prev = -1
    for c in bits(legal):
        if (
            prev >= 0
            and prev // 13 == c // 13
            and not unseen & SUIT_MASK[c // 13] & ((1 << c) - (2 << prev))
            and c not in (QS, bonus)
            and prev not in (QS, bonus)
            and not hand & ~legal & ((1 << c) - (2 << prev))
        ):
            prev = c
            continue
        out.append(c)
        prev = c
    return out


def _same_class(c: int, default: int, candidates: list[int]) -> bool:
    """Whether ``default`` falls in the class that ``c`` represents (classes run upward)."""
    if c == default:
        return True
    i = candidates.index(c)
    upper = candidates[i + 1] if i + 1 < len(candidates) else 52
    return c <= default < upper and default // 13 == c // 13


def _play_out(st: PlayState, me: int, card: int) -> PlayState:
    play(st, me, card)
    hands = st.hands
    while hands[st.turn]:
        seat = st.turn
        play(st, seat, choose_card(st, seat, legal_mask(st, seat)))
    return st


def _value(st: PlayState, me: int) -> float:
    changes, _ = outcome(st)
    n = len(changes)
    return changes[me] - (sum(changes) - changes[me]) / (n - 1)
