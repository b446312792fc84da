"""Every strategy: legal moves only, under any rule options; the same seed, the same game."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots import bot_names, get_bot
from bots.base import Bot
from bots.montecarlo import Budget, MonteCarloBot
from bots.tournament import play_game, run_tournament
from domain.cards import Card
from domain.rules import MoonScoring, RuleOptions
from domain.views import SeatView
from tests.rule_strategies import rule_options

SMALL_MC = MonteCarloBot(Budget(plays=300, min_samples=2, max_samples=6))


class Checked:
    """Wraps a bot and checks each answer against the view it was given."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        cards = tuple(self.inner.choose_pass(view, rules, seed))
        assert len(cards) == view.cards_to_pass
        assert len(set(cards)) == len(cards)
        assert set(cards) <= set(view.legal_cards)
        self.calls += 1
        return cards

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        card = self.inner.choose_play(view, rules, seed)
        assert card in view.legal_cards, (card, view.legal_cards)
        self.calls += 1
        return card

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        choice = self.inner.choose_moon_scoring(view, rules, seed)
        assert choice in (MoonScoring.ADD_TO_OTHERS, MoonScoring.SUBTRACT_FROM_SHOOTER)
        return choice


def plays_legally_and_alike(bot: Bot, seed: str, hands: int) -> None:
    """``bot`` in seat 0 of heuristic players, two games of the same seed: every answer legal,
    and the same game both times (a seed fixes a work-budget bot's every choice)."""
    checked = Checked(bot)
    lineup = ["w", "heuristic", "heuristic", "heuristic"]
    rules = RuleOptions()
    games = [
        play_game("w", rules, lineup, seed, bots={"w": checked}, max_hands=hands, keep_events=True)
        for _ in range(2)
    ]
    assert checked.calls and games[0].events == games[1].events


def test_the_strategies_are_registered() -> None:
    assert {"random", "heuristic", "montecarlo"} <= set(bot_names())
    for name in ("random", "heuristic", "montecarlo"):
        assert get_bot(name).name == name


@settings(max_examples=12, deadline=None)
@given(rules=rule_options(score_limit=(5, 20)), seed=st.integers(0, 10**6), data=st.data())
def test_every_strategy_plays_only_legal_moves(rules: RuleOptions, seed: int, data) -> None:
    names = ["random", "heuristic", "montecarlo"]
    lineup = [data.draw(st.sampled_from(names)) for _ in range(rules.players)]
    bots = {
        "random": Checked(get_bot("random")),
        "heuristic": Checked(get_bot("heuristic")),
        "montecarlo": Checked(SMALL_MC),
    }
    # Illegal moves would raise IllegalMove from the decider; Checked also asserts each answer.
    game = play_game(f"legal-{seed}", rules, lineup, f"deal-{seed}", bots=bots, max_hands=6)
    assert game.hands
    assert sum(b.calls for b in bots.values()) > 0


def test_the_default_montecarlo_plays_legally_with_a_kitty_and_diamonds_as_penalty() -> None:
    rules = RuleOptions.from_dict(
        {"preset": "omnibus", "penalty_suit": "diamonds", "bonus_card": None, "kitty": True}
    )
    bots = {
        "montecarlo": Checked(get_bot("montecarlo")),
        "heuristic": Checked(get_bot("heuristic")),
    }
    game = play_game(
        "mc-default", rules, ["montecarlo", "heuristic"] * 2, "deal", bots=bots, max_hands=1
    )
    assert len(game.hands) == 1
    assert bots["montecarlo"].calls >= rules.hand_size


@pytest.mark.parametrize("name", ["random", "heuristic", "montecarlo"])
def test_the_same_seed_gives_the_same_game(name: str) -> None:
    rules = RuleOptions.from_dict({"preset": "omnibus", "score_limit": 30})
    bot = SMALL_MC if name == "montecarlo" else get_bot(name)
    lineup = [name, "heuristic", name, "random"]

    def game(deal_seed: str):
        return play_game("same", rules, lineup, deal_seed, bots={name: bot}, keep_events=True)

    first, second = game("s1"), game("s1")
    assert first.events == second.events
    assert len(first.events) > 10
    assert game("s2").events != first.events


def test_heuristic_beats_random() -> None:
    """A weak sanity check over 40 hands (10 duplicate deals); the real figure is in docs."""
    result = run_tournament(
        ["heuristic", "random", "random", "random"], RuleOptions(), 2, "sanity", max_hands=5
    )
    stats = {s.name: s for s in result.stats()}
    assert stats["heuristic"].hands == 40
    assert stats["heuristic"].points.mean < stats["random"].points.mean - 2
