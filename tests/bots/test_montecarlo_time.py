"""montecarlo with a budget in milliseconds, read on a clock handed to it; strategy specs.

The clocks here are fakes that move a fixed step per reading, so what is asserted (how many deals
a decision samples) does not depend on the machine's speed or load.
"""

from __future__ import annotations

import pytest

import bots.montecarlo as montecarlo
from bots import UnknownBot
from bots.montecarlo import Budget, MonteCarloBot
from bots.specs import BadBotSpec, make_bot
from bots.tournament import play_game
from domain.rules import RuleOptions
from service.cli import main as hearts

RULES = RuleOptions()
LINEUP = ["montecarlo", "heuristic", "heuristic", "heuristic"]


class SteppingClock:
    """Seconds that move on by ``step`` at every reading."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        now = self.now
        self.now += self.step
        return now


def forbidden_clock() -> float:
    raise AssertionError("a play budget must not read the clock")


@pytest.fixture
def deals_per_decision(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of sampled deals of each montecarlo decision that sampled at all."""
    counts: list[int] = []
    sample, choose = montecarlo.sample_state, montecarlo.best_card
    current = [0]

    def counting_sample(*args, **kwargs):
        current[0] += 1
        return sample(*args, **kwargs)

    def counting_choose(*args, **kwargs):
        current[0] = 0
        card = choose(*args, **kwargs)
        if current[0]:
            counts.append(current[0])
        return card

    monkeypatch.setattr(montecarlo, "sample_state", counting_sample)
    monkeypatch.setattr(montecarlo, "best_card", counting_choose)
    return counts


def one_hand(bot: MonteCarloBot, seed: str = "t"):
    return play_game("g", RULES, LINEUP, seed, bots={"montecarlo": bot}, max_hands=1)


@pytest.mark.parametrize(
    ("ms", "step_ms", "min_samples", "deals"),
    [
        # Read at the start, then after each deal from the min_samples-th on, 1 ms later each
        # time: with min_samples=2, 11 ms spent after the twelfth deal.
        # (Half-millisecond budgets: no reading falls on the deadline, whatever the rounding.)
        (10.5, 1, 2, 12),
        (10.5, 5, 2, 4),  # a slower clock: 5, 10, 15 ms spent after the fourth deal
        (10.5, 1000, 4, 4),  # spent at once: still the minimum of deals
        (30.5, 1, 6, 36),  # readings from the sixth deal on: 31 ms after the 36th
    ],
)
def test_sampling_stops_when_the_time_is_spent(
    deals_per_decision: list[int], ms: float, step_ms: float, min_samples: int, deals: int
) -> None:
    # settle_z=0: no early stop on a settled choice, so only the time ends the sampling
    budget = Budget(ms=ms, min_samples=min_samples, settle_z=0)
    one_hand(MonteCarloBot(budget, SteppingClock(step_ms / 1000)))
    assert deals_per_decision and set(deals_per_decision) == {deals}


def test_the_play_budget_is_ignored_under_a_time_budget(deals_per_decision: list[int]) -> None:
    # 300 plays would allow a few deals at most; 40.5 ms at 1 ms a reading allow 42
    budget = Budget(plays=300, ms=40.5, min_samples=2, settle_z=0)
    one_hand(MonteCarloBot(budget, SteppingClock(0.001)))
    assert set(deals_per_decision) == {42}


def test_max_samples_still_caps_a_time_budget(deals_per_decision: list[int]) -> None:
    budget = Budget(ms=1000, min_samples=2, max_samples=7, settle_z=0)
    one_hand(MonteCarloBot(budget, SteppingClock(0.001)))
    assert set(deals_per_decision) == {7}


def test_a_settled_choice_stops_before_the_time_is_spent(deals_per_decision: list[int]) -> None:
    budget = Budget(ms=1000, min_samples=6)  # the default settle_z
    one_hand(MonteCarloBot(budget, SteppingClock(0.001)))
    assert min(deals_per_decision) == 6 and max(deals_per_decision) <= 1001


def test_a_play_budget_never_reads_the_clock(deals_per_decision: list[int]) -> None:
    small = Budget(plays=300, min_samples=2, max_samples=6)
    result = one_hand(MonteCarloBot(small, forbidden_clock))
    assert result.hands and deals_per_decision  # it sampled, and never asked the time


def test_the_same_clock_readings_give_the_same_game() -> None:
    budget = Budget(ms=5, min_samples=2)

    def game():
        bot = MonteCarloBot(budget, SteppingClock(0.0007))
        return play_game(
            "g", RULES, LINEUP, "same", bots={"montecarlo": bot}, max_hands=1, keep_events=True
        ).events

    assert game() == game()


def test_a_time_budget_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="needs a clock"):
        MonteCarloBot(Budget(ms=50))
    with pytest.raises(ValueError, match="positive"):
        Budget(ms=0)
    with pytest.raises(ValueError, match="max_samples"):
        Budget(min_samples=6, max_samples=3)


# -- specs ----------------------------------------------------------------------------------------


def test_a_spec_sets_the_budget() -> None:
    clock = SteppingClock(0.001)
    bot = make_bot("montecarlo:ms=50:max_samples=500:settle_z=0", clock)
    assert isinstance(bot, MonteCarloBot) and bot.clock is clock
    assert bot.budget == Budget(ms=50.0, max_samples=500, settle_z=0.0)
    assert make_bot("montecarlo:plays=1000").budget == Budget(plays=1000)
    assert make_bot("montecarlo:bold=2").budget == Budget(bold=2)
    assert make_bot("montecarlo:stray=0.3").budget == Budget(stray=0.3)
    assert make_bot("heuristic").name == "heuristic"
    assert make_bot("montecarlo").budget == Budget()


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("nobody", UnknownBot, "unknown bot 'nobody'"),
        ("nobody:ms=5", UnknownBot, "unknown bot 'nobody'"),
        ("heuristic:ms=5", BadBotSpec, "heuristic takes no parameters"),
        ("montecarlo:speed=5", BadBotSpec, "not 'speed'"),
        ("montecarlo:ms", BadBotSpec, "key=value"),
        ("montecarlo:ms=fast", BadBotSpec, "not a number"),
        ("montecarlo:ms=-5", BadBotSpec, "positive"),
        ("montecarlo:plays=1.5", BadBotSpec, "not a number"),
        ("montecarlo:ms=5:ms=6", BadBotSpec, "twice"),
        ("montecarlo:ms=5", BadBotSpec, "needs a clock"),  # no clock given
        ("montecarlo:bold=-1", BadBotSpec, "bold must be 0 or more"),
        ("montecarlo:stray=1", BadBotSpec, "stray must be in"),
    ],
)
def test_a_bad_spec_is_refused(spec: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make_bot(spec)


def test_simulate_takes_a_time_budget(capsys: pytest.CaptureFixture[str]) -> None:
    spec = "montecarlo:ms=2:min_samples=2"
    status = hearts(
        ["simulate", "--games", "1", "--seats", f"{spec},heuristic,heuristic,heuristic"]
        + ["--seed", "ms", "--max-hands", "1", "--no-progress"]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert f"{spec} - heuristic:" in out


def test_simulate_refuses_a_bad_spec(capsys: pytest.CaptureFixture[str]) -> None:
    seats = "montecarlo:ms=-1,heuristic,heuristic,heuristic"
    assert hearts(["simulate", "--seats", seats, "--no-progress"]) == 2
    assert "positive" in capsys.readouterr().err
