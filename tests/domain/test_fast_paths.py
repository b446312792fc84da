"""The hot paths written for speed (bench/README.md, "selfplay") give what the plain code gives.

The shuffle hashes the blocks a deal needs at once and falls back to more blocks after a
rejection; a dealt hand is built from a dict of HandState's fields rather than its __init__.
"""

from __future__ import annotations

import random
from dataclasses import fields

import pytest

import domain.shuffle
from domain import CreateGame, Deal, HandState, JoinGame, RuleOptions, decide, fold
from domain.decider import draft
from domain.shuffle import shuffled
from domain.state import INITIAL_STATE

from .test_shuffle import reference_draws


@pytest.mark.parametrize("span", [2**31 + 12_345, 3 * 2**30 + 7])
def test_the_shuffle_draws_again_after_a_rejection_as_documented(monkeypatch, span: int) -> None:
    # With a smaller span, draws at or above the limit are common: every rejection path, and the
    # blocks hashed after the first ones, are used; the reference applies the same limit.
    monkeypatch.setattr(domain.shuffle, "_SPAN", span)
    for size in (2, 9, 17, 52):
        for k in range(50):
            items, seed = list(range(size)), f"rejection-{size}-{k}"
            out, draws = list(items), reference_draws(seed)
            for i in range(size - 1, 0, -1):
                x = next(draws)
                while x >= span - span % (i + 1):
                    x = next(draws)
                j = x % (i + 1)
                out[i], out[j] = out[j], out[i]
            assert shuffled(items, seed) == out


@pytest.mark.parametrize(
    "rules", [RuleOptions(), RuleOptions.from_dict({"players": 3, "kitty": True})]
)
def test_a_dealt_hand_is_the_hand_its_init_would_build(rules: RuleOptions) -> None:
    state = draft(INITIAL_STATE)
    commands = [CreateGame("g", rules), *(JoinGame(f"p{s}") for s in range(rules.players))]
    for command in [*commands, Deal(seed=str(random.Random(1).random()))]:
        state = fold(decide(command, state), state)
    hand = state.hand
    assert hand is not None
    built = HandState(**{f.name: getattr(hand, f.name) for f in fields(HandState)})
    assert hand == built
    assert list(hand.__dict__) == list(built.__dict__)  # same fields, same order, nothing else
