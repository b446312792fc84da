"""montecarlo's ``weigh``: sampled deals weighed by how likely the others' plays are in them,
read as the heuristic's (issue 41)."""

from __future__ import annotations

import random

import pytest

from bots.heuristic import choose_card
from bots.montecarlo import Budget, MonteCarloBot, likelihood
from bots.simulation import PlayState, legal_mask, play, table_rules
from domain.rules import RuleOptions
from tests.bots.test_bots import plays_legally_and_alike

TR = table_rules(RuleOptions())


def _heuristic_hand(seed: int, plays: int) -> tuple[PlayState, list[tuple[int, int]]]:
    """A hand dealt at random, played ``plays`` cards far by the heuristic in every seat."""
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    hands = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
    leader = next(s for s in range(4) if hands[s] & 1)  # the 2C
    st = PlayState(TR, hands, turn=leader)
    history = []
    for _ in range(plays):
        seat = st.turn
        card = choose_card(st, seat, legal_mask(st, seat))
        history.append((seat, card))
        play(st, seat, card)
    return st, history


@pytest.mark.parametrize("seed", range(6))
def test_the_true_deal_of_heuristic_players_is_fully_likely(seed: int) -> None:
    st, history = _heuristic_hand(seed, 25)
    assert likelihood(st, history, me=0, miss=0.5) == 1.0


def test_a_deal_that_contradicts_a_play_counts_less() -> None:
    # Swap cards between two other seats until some earlier play is no longer the heuristic's
    # choice there: that deal weighs at most miss.
    for seed in range(40):
        st, history = _heuristic_hand(seed, 25)
        a, b = 1, 2
        ca, cb = st.hands[a] & -st.hands[a], st.hands[b] & -st.hands[b]
        swapped = st.copy()
        swapped.hands[a] = (st.hands[a] & ~ca) | cb
        swapped.hands[b] = (st.hands[b] & ~cb) | ca
        weight = likelihood(swapped, history, me=0, miss=0.5)
        assert weight in {1.0} | {0.5**k for k in range(1, 30)}
        if weight < 1.0:
            return
    raise AssertionError("no swap ever contradicted a play")


def test_weighing_plays_legal_moves_and_the_same_game_for_the_same_seeds() -> None:
    plays_legally_and_alike(MonteCarloBot(Budget(plays=600, weigh=0.5)), "weigh", hands=1)


def test_weigh_is_a_factor_below_one() -> None:
    with pytest.raises(ValueError):
        Budget(weigh=1.0)
    with pytest.raises(ValueError):
        Budget(weigh=-0.1)
