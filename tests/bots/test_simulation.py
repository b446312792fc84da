"""The bots' compact simulation agrees with the domain: legal cards, tricks, points, moons.

A hand is played through the domain's decider with random legal moves while the simulation
follows along card by card; at every play the legal cards of every seat must be the same, and
at the end the points taken and the score changes must be too.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from bots.cardbits import bits, card_of, mask_of
from bots.simulation import PlayState, legal_mask, outcome, play, table_rules
from domain.commands import ChooseMoonScoring, CreateGame, Deal, PassCards, PlayCard
from domain.decider import decide, fold
from domain.events import HandScored
from domain.legal import legal_plays
from domain.rules import MoonScoring, RuleOptions
from domain.scoring import score_hand
from domain.state import INITIAL_STATE, GameState, Phase
from tests.rule_strategies import rule_options


def _start(rules: RuleOptions, seed: str) -> GameState:
    state = fold(decide(CreateGame("g", rules, ("random",) * rules.players), INITIAL_STATE))
    return fold(decide(Deal(seed=seed), state), state)


def _pass_all(state: GameState, rng: random.Random) -> GameState:
    while state.phase is Phase.PASSING:
        hand = state.hand
        assert hand is not None
        seat = next(s for s, p in enumerate(hand.passed) if p is None)
        need = state.rules.cards_to_pass(hand.pass_direction)
        held = sorted(hand.hands[seat])
        cards = (
            () if state.rules.optional_passing and rng.random() < 0.3 else rng.sample(held, need)
        )
        state = fold(decide(PassCards(seat, tuple(cards)), state), state)
    return state


def _model(state: GameState) -> PlayState:
    hand = state.hand
    assert hand is not None and hand.turn is not None
    return PlayState(
        table_rules(state.rules),
        [mask_of(h) for h in hand.hands],
        kitty=mask_of(hand.kitty),
        turn=hand.turn,
        scores=state.scores,
    )


@settings(max_examples=60, deadline=None)
@given(rules=rule_options(score_limit=(5, 30)), seed=st.integers(0, 10**6))
def test_simulation_follows_the_domain_through_a_hand(rules: RuleOptions, seed: int) -> None:
    rng = random.Random(seed)
    state = _pass_all(_start(rules, f"sim-{seed}"), rng)
    assert state.phase is Phase.PLAYING
    model = _model(state)
    scored: HandScored | None = None
    while state.phase is Phase.PLAYING:
        hand = state.hand
        assert hand is not None and hand.turn == model.turn
        for seat in range(rules.players):
            assert legal_mask(model, seat) == mask_of(legal_plays(rules, hand, seat)), seat
        card = rng.choice(sorted(legal_plays(rules, hand, hand.turn)))
        events = decide(PlayCard(hand.turn, card), state)
        play(model, hand.turn, card.index)
        state = fold(events, state)
        scored = next((e for e in events if isinstance(e, HandScored)), scored)
    assert model.over
    changes, shooter = outcome(model)
    if state.phase is Phase.MOON_CHOICE:
        assert shooter == state.moon_shooter
        choice = ChooseMoonScoring(shooter, MoonScoring.ADD_TO_OTHERS)
        scored = next(e for e in decide(choice, state) if isinstance(e, HandScored))
    assert scored is not None
    assert tuple(model.points) == scored.points_taken
    assert shooter == (scored.shooter if scored.shooter is not None else -1)
    if scored.moon_scoring in (None, MoonScoring.ADD_TO_OTHERS):
        assert tuple(changes) == scored.score_changes
    hand = state.hand
    assert hand is not None
    taken = [mask_of(t) for t in hand.taken]
    assert sum(m.bit_count() for m in taken) == len(list(bits(table_rules(rules).in_play)))
    assert [card_of(c) for c in bits(model.played)] == sorted(
        (c for t in hand.tricks for _, c in t.plays), key=lambda c: c.index
    )


@settings(max_examples=60, deadline=None)
@given(
    rules=rule_options(score_limit=(5, 30)),
    seed=st.integers(0, 10**6),
    shape=st.sampled_from(["any", "moon", "sun"]),
)
def test_simulation_scores_hands_as_the_domain_does(
    rules: RuleOptions, seed: int, shape: str
) -> None:
    """Taken cards split at random, or every penalty card (or trick) to one seat."""
    rng = random.Random(seed)
    tr = table_rules(rules)
    n = rules.players
    shooter = rng.randrange(n)
    taken: list[list] = [[] for _ in range(n)]
    for c in bits(tr.in_play):
        penalty = (tr.penalty_mask >> c) & 1
        seat = shooter if shape == "sun" or (shape == "moon" and penalty) else rng.randrange(n)
        taken[seat].append(card_of(c))
    tricks = [len(t) // n for t in taken]
    if shape == "sun":
        tricks = [tr.hand_size if s == shooter else 0 for s in range(n)]
    model = PlayState(tr, [0] * n, tricks_won=tricks)
    for seat, cards in enumerate(taken):
        model.points[seat] = sum(rules.card_points(c) for c in cards)
        model.penalty[seat] = sum(rules.card_points(c) for c in cards if rules.is_penalty_card(c))
        if rules.bonus_card in cards:
            model.bonus_taker = seat
    changes, who = outcome(model)
    expected = score_hand(rules, taken, tricks, (0,) * n, MoonScoring.ADD_TO_OTHERS)
    assert who == (expected.shot.shooter if expected.shot else -1)
    if expected.moon_scoring in (None, MoonScoring.ADD_TO_OTHERS, MoonScoring.SHOOTERS_CHOICE):
        assert tuple(changes) == expected.score_changes
