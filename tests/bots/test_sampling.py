"""What a seat infers from its view is true, and the deals sampled from it agree with it."""

from __future__ import annotations

import random
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from bots.cardbits import SUIT_MASK, mask_of
from bots.knowledge import knowledge_of
from bots.montecarlo import distinct_cards
from bots.sampling import sample_state
from domain.commands import CreateGame, Deal, PassCards, PlayCard
from domain.decider import decide, fold
from domain.legal import legal_plays
from domain.rules import RuleOptions
from domain.state import INITIAL_STATE, GameState, Phase
from domain.views import seat_view
from tests.rule_strategies import rule_options


def _states(rules: RuleOptions, seed: int) -> Iterator[GameState]:
    """Every state of one hand where a seat is to play, under random legal moves."""
    rng = random.Random(seed)
    state = fold(decide(CreateGame("s", rules, ("random",) * rules.players), INITIAL_STATE))
    state = fold(decide(Deal(seed=f"sampling-{seed}"), state), state)
    while state.phase is Phase.PASSING:
        hand = state.hand
        assert hand is not None
        seat = next(s for s, p in enumerate(hand.passed) if p is None)
        need = rules.cards_to_pass(hand.pass_direction)
        cards = tuple(rng.sample(sorted(hand.hands[seat]), need))
        state = fold(decide(PassCards(seat, cards), state), state)
    while state.phase is Phase.PLAYING:
        yield state
        hand = state.hand
        assert hand is not None and hand.turn is not None
        card = rng.choice(sorted(legal_plays(rules, hand, hand.turn)))
        state = fold(decide(PlayCard(hand.turn, card), state), state)


def _check(state: GameState, rng: random.Random) -> None:
    rules = state.rules
    hand = state.hand
    assert hand is not None and hand.turn is not None
    me = hand.turn
    k = knowledge_of(seat_view(state, me), rules)
    actual = [mask_of(h) for h in hand.hands]
    kitty = mask_of(hand.kitty) if not hand.kitty_taken else 0
    # The inferences are true of the real deal.
    assert k.state.hands[me] == actual[me]
    assert k.state.hands[:me] + k.state.hands[me + 1 :] == [0] * (rules.players - 1)
    for s in range(rules.players):
        assert k.sizes[s] == actual[s].bit_count()
        assert k.holds[s] & ~actual[s] == 0
        if s != me:
            for suit in range(4):
                if k.state.voids[s] >> suit & 1:
                    assert actual[s] & SUIT_MASK[suit] == 0
    assert k.kitty_live == (rules.kitty and not hand.kitty_taken)
    if k.kitty_live:
        assert k.outside == len(hand.kitty)
    # Every sample agrees with them, and deals out exactly the unseen cards.
    for _ in range(3):
        world = sample_state(k, rng)
        dealt = world.kitty
        for s in range(rules.players):
            assert world.hands[s].bit_count() == actual[s].bit_count()
            assert k.holds[s] & ~world.hands[s] == 0
            if s != me:
                assert world.hands[s] & ~k.unseen == 0
                dealt |= world.hands[s]
                for suit in range(4):
                    if k.state.voids[s] >> suit & 1:
                        assert world.hands[s] & SUIT_MASK[suit] == 0
        assert world.hands[me] == actual[me]
        assert world.kitty.bit_count() == (kitty.bit_count() if k.kitty_live else 0)
        assert dealt & ~k.unseen == 0
    # The candidates of the Monte Carlo bot are legal cards, one per class.
    legal = mask_of(legal_plays(rules, hand, me))
    classes = distinct_cards(legal, actual[me], k.unseen, k.state.rules.bonus)
    assert classes and all(legal >> c & 1 for c in classes)


@settings(max_examples=25, deadline=None)
@given(rules=rule_options(score_limit=(5, 30)), seed=st.integers(0, 10**6))
def test_knowledge_is_true_and_samples_agree_with_it(rules: RuleOptions, seed: int) -> None:
    rng = random.Random(seed)
    for state in _states(rules, seed):
        _check(state, rng)


def test_samples_keep_known_voids_where_the_old_sampler_broke_them() -> None:
    """Six players and a kitty: the old sampler's last attempt ignored voids in this position.

    Seed 51, 43rd play: with ``random.Random(18)`` it gave a seat a suit it had shown it lacks
    (29 of 9,600 samples over such positions). The exact sampler never does, for any seed.
    """
    rules = RuleOptions.from_dict({"players": 6, "kitty": True})
    state = next(s for i, s in enumerate(_states(rules, 51)) if i == 42)
    hand = state.hand
    assert hand is not None and hand.turn is not None
    k = knowledge_of(seat_view(state, hand.turn), rules)
    voided = [(s, u) for s in range(6) for u in range(4) if k.state.voids[s] >> u & 1]
    assert voided  # the position does constrain the deal
    for r in range(300):
        world = sample_state(k, random.Random(r))
        for s, u in voided:
            assert world.hands[s] & SUIT_MASK[u] == 0, (r, s, u)
        for s in range(6):
            assert world.hands[s].bit_count() == k.sizes[s]
