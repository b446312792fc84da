"""analysis: how long the analysis of one 13-trick hand takes at the default budget (CPU time).

Project: ``bots.analysis.analyse_hand`` at ``DEFAULT_BUDGET`` on hand 1 of a game played by
``heuristic`` seats (the pass, 52 plays), in CPU seconds of this process. Target: under 30 s
(issue 23).

Baseline, in the same run: the same 52 plays decided by ``montecarlo`` at its default budget (the
strongest bot's own cost for the hand), so ``ratio`` says how many hands' worth of montecarlo
play one analysis costs. Rounds alternate; the median round is reported.
"""

from __future__ import annotations

import random
import time

from bench.common import Report, alternate, median, parser
from bots.analysis import DEFAULT_BUDGET, AnalysisBudget, analyse_hand
from bots.montecarlo import MonteCarloBot
from bots.tournament import play_game
from domain import events as e
from domain.decider import evolve
from domain.rules import RuleOptions
from domain.state import INITIAL_STATE
from domain.views import seat_view

TARGET_SECONDS = 30.0


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--samples", type=int, default=DEFAULT_BUDGET.samples)
    p.add_argument("--seed", default="bench-analysis")
    args = p.parse_args()
    budget = AnalysisBudget(samples=args.samples)
    game = play_game(
        "bench", RuleOptions(), ["heuristic"] * 4, args.seed, max_hands=1, keep_events=True
    )
    events = game.events
    bot = MonteCarloBot()
    decisions = 0

    def analysis() -> float:
        nonlocal decisions
        started = time.process_time()
        result = analyse_hand(events, 1, seed=args.seed, budget=budget)
        decisions = len(result.decisions)
        return time.process_time() - started

    def montecarlo() -> float:
        state = INITIAL_STATE
        spent = 0.0
        for ev in events:
            if isinstance(ev, e.CardPlayed):
                view = seat_view(state, ev.seat)
                started = time.process_time()
                bot.choose_play(view, state.rules, str(random.random()))
                spent += time.process_time() - started
            state = evolve(state, ev)
        return spent

    results = alternate({"analysis": analysis, "montecarlo": montecarlo}, args.rounds)
    project, baseline = median(results["analysis"]), median(results["montecarlo"])
    report = Report("analysis")
    report.add("analysis of a 13-trick hand", project, "s CPU")
    report.add("decisions analysed", decisions)
    report.add("samples per decision", budget.samples)
    report.add("montecarlo playing the hand's 52 plays", baseline, "s CPU")
    report.add("ratio", project / baseline if baseline else float("nan"))
    report.target("analysis time", project < TARGET_SECONDS, f"< {TARGET_SECONDS:g} s")
    report.note("CPU time of this process: other tenants' load slows the wall clock, not this")
    report.emit(args.json)


if __name__ == "__main__":
    main()
