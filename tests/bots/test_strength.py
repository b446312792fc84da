"""The montecarlo levers of issue 23: inferences from the others' plays, the weighed pass, the
objective; each legal, deterministic for a seed, and sound where it can be checked exactly."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bots.tournament as tournament
from bots.base import Bot
from bots.cardbits import QS_BIT, mask_of
from bots.heuristic import HeuristicBot, pass_cards
from bots.inference import excluded_cards
from bots.knowledge import Knowledge
from bots.montecarlo import Budget, MonteCarloBot, best_card
from bots.sampling import sample_state
from bots.simulation import PlayState, table_rules
from bots.specs import make_bot
from bots.tournament import play_game
from domain.cards import Card, parse_cards
from domain.commands import CreateGame, Deal
from domain.decider import decide, fold
from domain.rules import MoonScoring, RuleOptions
from domain.state import INITIAL_STATE, GameState
from domain.views import SeatView, seat_view
from tests.bots.test_bots import Checked
from tests.rule_strategies import rule_options

RULES = RuleOptions(score_limit=10000)


def m(text: str) -> int:
    return mask_of(parse_cards(text.split()))


class Watching:
    """A bot that checks, before each play, what ``excluded_cards`` says of the real hands."""

    def __init__(self, inner: Bot, states: list[GameState]) -> None:
        self.inner = inner
        self.name = inner.name
        self.states = states
        self.excluded = 0

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        return self.inner.choose_pass(view, rules, seed)

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        return self.inner.choose_moon_scoring(view, rules, seed)

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        state = self.states[-1]
        assert state.hand is not None
        excluded = excluded_cards(view, rules)
        assert excluded[view.seat] == 0
        for s, held in enumerate(state.hand.held):
            assert not excluded[s] & held, (s, excluded[s], held)
            self.excluded += excluded[s].bit_count()
        return self.inner.choose_play(view, rules, seed)


@pytest.fixture
def states(monkeypatch: pytest.MonkeyPatch) -> list[GameState]:
    """The state each bot decision of ``play_game`` is made in, the latest last."""
    seen: list[GameState] = []
    command = tournament.bot_command

    def watched(bot: Bot, state: GameState, seat: int, seed: str):  # type: ignore[no-untyped-def]
        seen.append(state)
        return command(bot, state, seat, seed)

    monkeypatch.setattr(tournament, "bot_command", watched)
    return seen


def test_what_heuristic_players_reveal_is_true(states: list[GameState]) -> None:
    bot = Watching(HeuristicBot(), states)
    for g in range(6):
        play_game(f"inf-{g}", RULES, ["h"] * 4, f"inf-{g}", bots={"h": bot}, max_hands=4)
    assert bot.excluded > 500  # the plays do say something


# The fixture only records the states as they come (the latest is read): safe across inputs.
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rules=rule_options(score_limit=(5, 20)), seed=st.integers(0, 10**6))
def test_inferences_hold_under_any_rule_options(
    rules: RuleOptions, seed: int, states: list[GameState]
) -> None:
    bot = Watching(HeuristicBot(), states)
    play_game(f"inf-{seed}", rules, ["h"] * rules.players, f"{seed}", bots={"h": bot}, max_hands=2)


def _knowledge(excluded: tuple[int, ...]) -> Knowledge:
    """Seat 0 holds the clubs; the other 39 cards are unseen, 13 to a seat."""
    tr = table_rules(RULES)
    hands = [m(" ".join(f"{r}C" for r in "23456789TJQKA")), 0, 0, 0]
    return Knowledge(
        seat=0,
        state=PlayState(tr, hands, turn=0),
        unseen=tr.in_play & ~hands[0],
        sizes=(13, 13, 13, 13),
        holds=(0, 0, 0, 0),
        outside=0,
        kitty_live=False,
        excluded=excluded,
    )


def test_samples_keep_the_exclusions_where_they_can() -> None:
    # The queen of spades is in neither seat 1 nor seat 2: always seat 3's.
    k = _knowledge((0, QS_BIT | m("AH"), QS_BIT, 0))
    rng = random.Random(1)
    for _ in range(200):
        world = sample_state(k, rng)
        assert world.hands[3] & QS_BIT
        assert not world.hands[1] & m("AH")
        assert [h.bit_count() for h in world.hands] == [13, 13, 13, 13]
        assert world.hands[1] | world.hands[2] | world.hands[3] == k.unseen


def test_montecarlo_stops_an_obvious_moon_shot() -> None:
    # Seat 1 has every point so far (the queen and eight hearts) and leads the 9H; seats 2 and
    # 3 are out of hearts; the KH and AH left are seat 1's. Ducking with the 2H hands it the
    # moon; the TH stops it.
    tr = table_rules(RULES)
    taken = m("QS 3H 4H 5H 6H 7H 8H JH QH")
    hand = m("TH 2H 5C")
    trick_cards = [(1, "9H"), (2, "3C"), (3, "4D")]
    trick = [(s, parse_cards([c])[0].index) for s, c in trick_cards]
    others_played = m("2C 4C 6C 7C 8C 9C TC JC QC KC AC 2D 3D 5D 6D 7D 8D 9D TD JD QD KD AD")
    others_played |= m("2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS")
    played = taken | others_played | m("9H 3C 4D")
    unseen = tr.in_play & ~played & ~hand
    st_ = PlayState(
        tr,
        [hand, 0, 0, 0],
        trick=trick,
        turn=0,
        played=played,
        tricks_done=10,
        hearts_broken=True,
        points=[0, 21, 0, 0],
        penalty=[0, 21, 0, 0],
        tricks_won=[3, 4, 2, 1],
        voids=[0, 0, 0b1000, 0b1000],
    )
    k = Knowledge(0, st_, unseen, (3, 2, 2, 2), (0, 0, 0, 0), 0, False)
    legal = m("TH 2H")
    assert unseen & m("KH AH") == m("KH AH")
    for budget in (Budget(), Budget(others_weight=0.0), Budget(infer=1, pass_deals=20)):
        card = best_card(k, legal, random.Random(3), budget)
        assert card == parse_cards(["TH"])[0].index


def test_the_weighed_pass_is_legal_and_the_same_for_a_seed() -> None:
    bot = make_bot("montecarlo:pass_deals=12:plays=500")
    assert isinstance(bot, MonteCarloBot)
    state = fold(decide(CreateGame("p", RULES, ("heuristic",) * 4), INITIAL_STATE))
    changed = 0
    for i in range(8):
        dealt = fold(decide(Deal(seed=f"pass-{i}"), state), state)
        view = seat_view(dealt, i % 4)
        first = bot.choose_pass(view, RULES, f"seed-{i}")
        assert first == bot.choose_pass(view, RULES, f"seed-{i}")
        assert len(set(first)) == view.cards_to_pass == 3
        assert set(first) <= set(view.legal_cards)
        heuristic = pass_cards(mask_of(view.legal_cards), table_rules(RULES), 3)
        changed += mask_of(first) != sum(1 << c for c in heuristic)
    assert changed < 8  # mostly the heuristic's pass, sometimes another


@settings(max_examples=8, deadline=None)
@given(rules=rule_options(score_limit=(5, 20)), seed=st.integers(0, 10**6))
def test_every_lever_plays_only_legal_moves(rules: RuleOptions, seed: int) -> None:
    budget = Budget(plays=300, min_samples=2, max_samples=6, pass_deals=6, infer=1)
    bots = {
        "mc": Checked(MonteCarloBot(budget)),
        "mc0": Checked(MonteCarloBot(dataclasses.replace(budget, others_weight=0.0))),
    }
    lineup = [["mc", "mc0"][s % 2] for s in range(rules.players)]
    game = play_game(f"lev-{seed}", rules, lineup, f"lev-{seed}", bots=bots, max_hands=3)
    assert game.hands
    again = play_game(f"lev-{seed}", rules, lineup, f"lev-{seed}", bots=bots, max_hands=3)
    assert [h.score_changes for h in again.hands] == [h.score_changes for h in game.hands]
