"""bench/arena_openspiel.py: a seat's view as an OpenSpiel state (skipped without open_spiel).

Hands are played in our domain by the heuristic bot; at every decision of every seat the state
built from that seat's view must show OpenSpiel the seat's true information state and our legal
cards, and ISMCTS must search it exactly as it searches the true state: the cards the view hides
are never read. Every finished hand replays in both engines to the same points.
"""

from __future__ import annotations

import os
import random

import pytest

try:
    import pyspiel  # noqa: F401  (the bench extra: bench/arena_openspiel.py needs it)
except ImportError:
    # .ci/run installs the bench extra and sets this: in CI the bridge is always tested.
    if os.environ.get("HEARTS_REQUIRE_OPEN_SPIEL"):
        pytest.fail("HEARTS_REQUIRE_OPEN_SPIEL is set but open_spiel is not installed")
    pytest.skip("open_spiel is not installed (pip install -e '.[bench]')", allow_module_level=True)

from bench.arena_client import seat_view_of  # noqa: E402
from bench.arena_openspiel import (  # noqa: E402
    DIRECTIONS,
    PASS_OUTCOMES,
    World,
    check_cards,
    load_game,
    our_rules,
    replay_record,
    state_for_view,
)
from bench.randomplay import execute, new_game  # noqa: E402
from bots import bot_command, get_bot  # noqa: E402
from domain.cards import DECK, Card  # noqa: E402
from domain.commands import Deal, PassCards  # noqa: E402
from domain.rules import RuleOptions  # noqa: E402
from domain.state import Phase  # noqa: E402
from domain.views import seat_view  # noqa: E402


def _hand(direction: str, seed: int, at_decision):
    """Play one hand with the heuristic bot, calling ``at_decision(state, seat, true_world)``
    before every decision; the hand's record in the form ``replay_record`` reads."""
    rng = random.Random(seed)
    cards = [str(c) for c in DECK]
    rng.shuffle(cards)
    dealt = [sorted(cards[13 * s : 13 * s + 13]) for s in range(4)]
    rules = RuleOptions.from_dict(our_rules(direction))
    state = new_game("arena-test", rules)
    execute(state, Deal(seed="t", hands=tuple(tuple(map(Card, h)) for h in dealt)))
    bot = get_bot("heuristic")
    passes: list[list[str]] = [[] for _ in range(4)]
    plays: list[tuple[int, str]] = []
    while state.phase in (Phase.PASSING, Phase.PLAYING):
        hand = state.hand
        seat = (
            next(s for s in range(4) if not passes[s])
            if state.phase is Phase.PASSING
            else hand.turn
        )
        done = [p for p in passes if p] if state.phase is Phase.PLAYING else []
        at_decision(state, seat, World(direction, dealt, done, list(plays)))
        command = bot_command(bot, state, seat, "t")
        execute(state, command)
        if isinstance(command, PassCards):
            passes[seat] = [str(c) for c in command.cards]
        else:
            plays.append((seat, str(command.card)))
    tricks = [plays[i : i + 4] for i in range(0, 52, 4)]
    return {
        "rules": rules.to_dict(),
        "pass_direction": direction,
        "dealt": dealt,
        "passes": [{"seat": s, "passed": passes[s]} for s in range(4)],
        "tricks": [{"cards": [{"seat": s, "card": c} for s, c in t]} for t in tricks],
        "score_changes": list(state.scores),
    }


def _resamples(state, seeds=range(3)) -> list[list[str]]:
    """The worlds ISMCTS would search from ``state`` (its only use of the root's hidden cards:
    ``ISMCTSBot::RunSearch`` otherwise reads the root's legal actions and information state),
    each as every player's information state: the order in which a seat's passed cards were
    recorded is not part of a world (the strings sort them) and changes nothing to come."""
    worlds = []
    for seed in seeds:
        world = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0))
        worlds.append([world.information_state_string(p) for p in range(4)])
    return worlds


def _search_runs(state) -> int:
    evaluator = pyspiel.RandomRolloutEvaluator(1, 7)
    bot = pyspiel.ISMCTSBot(
        7, evaluator, 2.0, 30, -1, pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False
    )
    return bot.step(state)


def test_the_card_names_agree():
    check_cards()


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_a_view_gives_the_seat_its_information_state_and_the_hidden_cards_are_never_read(
    direction,
):
    game = load_game()
    decisions = 0

    def check(state, seat, true_world):
        nonlocal decisions
        decisions += 1
        view = seat_view(state, seat).to_dict()
        assert seat_view_of(view) == seat_view(state, seat)  # what our bot decides on
        built = state_for_view(game, view, random.Random(1))  # checks the legal cards too
        other = state_for_view(game, view, random.Random(2))
        if true_world.passes:
            # The order a passer's cards were recorded in is not information (OpenSpiel's
            # information state sorts them) but it steers the resampler's draws: the seat's
            # received cards in the view's order, as the built world has them.
            giver = (seat - PASS_OUTCOMES[true_world.direction]) % 4
            true_world.passes[giver] = list(view["received_cards"])
        true = true_world.state(game, me=seat)
        assert built.information_state_string(0) == true.information_state_string(0)
        assert other.information_state_string(0) == true.information_state_string(0)
        assert _resamples(built) == _resamples(other) == _resamples(true)
        if view["phase"] == "passing":  # the search runs for every seat (no crash: player 0)
            assert _search_runs(built) in built.legal_actions()

    record = _hand(direction, seed=len(direction), at_decision=check)
    assert decisions == 52 + (4 if direction != "hold" else 0)
    assert replay_record(game, record) == record["score_changes"]


def test_the_tally_pairs_ours_with_ismcts_and_the_baseline_deal_by_deal():
    from bench.arena import Tally

    tally = Tally()
    tally.add_deal([(4, 10, 4), (0, 0, 26)])  # a deal, two test seats
    tally.add_deal([(13, 13, None)])  # no baseline this deal
    assert tally.diffs == [6, 0, 0] and tally.per_deal == [3.0, 0.0]
    assert tally.base == [4, 26] and tally.per_deal_base == [13.0]
    only_baseline = Tally()
    only_baseline.add_deal([(2, None, 5)])  # --sims 0
    assert only_baseline.per_deal == [] and only_baseline.per_deal_base == [3.0]
