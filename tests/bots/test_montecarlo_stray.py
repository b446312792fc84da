"""montecarlo's ``stray``: the others of the play-outs leave the heuristic's card, at given
odds, for the card a searching player most often plays instead (issue 41)."""

from __future__ import annotations

import random

import pytest

from bots.montecarlo import Budget, MonteCarloBot, _play_out
from bots.simulation import PlayState, table_rules
from domain.rules import RuleOptions
from tests.bots.test_bots import plays_legally_and_alike

TR = table_rules(RuleOptions())


def _deal(seed: int) -> PlayState:
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    hands = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
    return PlayState(TR, hands, turn=next(s for s in range(4) if hands[s] & 1))


def _played(st: PlayState) -> list[int]:
    return list(st.penalty) + [st.played]


@pytest.mark.parametrize("seed", range(4))
def test_a_strayed_play_out_is_fixed_by_its_seed(seed: int) -> None:
    start = _deal(seed)
    me = start.turn
    card = (start.hands[me] & -start.hands[me]).bit_length() - 1  # the 2C: a forced lead
    budget = Budget(stray=0.5, stray_spread=0.8)
    one = _play_out(start.copy(), me, card, budget, seed)
    two = _play_out(start.copy(), me, card, budget, seed)
    assert _played(one) == _played(two)


def test_strayed_others_finish_hands_otherwise_than_the_heuristic() -> None:
    differ = 0
    for seed in range(12):
        start = _deal(seed)
        me = start.turn
        card = (start.hands[me] & -start.hands[me]).bit_length() - 1
        plain = _play_out(start.copy(), me, card)
        strayed = _play_out(start.copy(), me, card, Budget(stray=0.9), seed)
        assert plain.hands == strayed.hands == [0, 0, 0, 0]  # both finish the hand
        differ += plain.penalty != strayed.penalty
    assert differ >= 6  # the others' points fall elsewhere in most hands


def test_straying_plays_legal_moves_and_the_same_game_for_the_same_seeds() -> None:
    plays_legally_and_alike(MonteCarloBot(Budget(plays=600, stray=0.3)), "stray", hands=1)


def test_stray_is_odds_below_one() -> None:
    with pytest.raises(ValueError, match="stray"):
        Budget(stray=1.0)
    with pytest.raises(ValueError, match="stray"):
        Budget(stray=-0.1)
