"""``hearts simulate``: a self-play tournament between bot strategies, in process.

    hearts simulate --games 50 --seats montecarlo,heuristic,heuristic,random \\
        --rules '{"preset": "omnibus"}' --seed s1 [--record] [--json]

Each of the ``--games`` games is played once per rotation of the seats, from the same deals
(duplicate play), so every strategy plays every seat's cards. The table gives, per strategy,
the average points per hand with a 95% confidence interval (over duplicate deals), the share of
games won, moons shot, and decisions per second; then each strategy against the first one,
deal by deal. ``--record`` also stores every finished game through the event store
(``REDIS_URL``, else the embedded redis-server) so it can be replayed and audited; a game cut short
by ``--max-hands`` is not stored (it would wait for its next deal in the lobby forever: a game in
the store ends only at its score limit), and the report says how many were left out. Exit status:
0 done, 2 bad arguments or no Redis to record to.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import secrets
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from service.cli.progress import ProgressBar, fail, positive

if TYPE_CHECKING:  # the heavy imports wait until the subcommand runs
    from bots.tournament import GameResult, TournamentResult
    from domain.rules import RuleOptions

OK, BAD = 0, 2


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "simulate", help="play bots against each other in process and compare them"
    )
    p.add_argument(
        "--games", type=positive, default=10, help="duplicate games (each played per rotation)"
    )
    p.add_argument(
        "--seats",
        default="montecarlo,heuristic,heuristic,random",
        help="a strategy per seat, comma separated (one per player); parameters after colons, "
        "e.g. montecarlo:ms=50 (CPU ms per decision) or montecarlo:plays=1000",
    )
    p.add_argument(
        "--rules", default="{}", help='rule options as JSON, e.g. \'{"preset": "omnibus"}\''
    )
    p.add_argument("--seed", help="the tournament's seed (default: a fresh one, printed)")
    p.add_argument("--max-hands", type=positive, help="stop each game after this many hands")
    p.add_argument("--record", action="store_true", help="store every game in the event store")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bots import UnknownBot
    from bots.specs import BadBotSpec, make_bot
    from bots.tournament import run_tournament
    from domain.errors import InvalidRules
    from domain.rules import RuleOptions

    try:
        raw = json.loads(args.rules)
        rules = RuleOptions.from_dict(raw)
    except (json.JSONDecodeError, InvalidRules, TypeError, AttributeError) as exc:
        return _refuse(f"--rules: {exc}")
    lineup = [s.strip() for s in args.seats.split(",")]
    if len(lineup) != rules.players:
        return _refuse(f"--seats: {rules.players} players need {rules.players} strategies")
    try:
        # A time budget (montecarlo:ms=50) is read in CPU time, as the table's ms/decision is.
        bots = {name: make_bot(name, clock=time.process_time) for name in lineup}
    except (UnknownBot, BadBotSpec) as exc:
        return _refuse(f"--seats: {exc}")
    seed = args.seed if args.seed is not None else secrets.token_hex(6)

    from service.app.deal_plan import hand_seed

    with contextlib.ExitStack() as stack:
        recorder = None
        if args.record:
            from service.cli.connection import open_store

            recorder = Recorder(stack.enter_context(open_store()))
        bar = None if args.no_progress else GameProgress(sys.stderr)
        started = time.perf_counter()
        try:
            result = run_tournament(
                lineup,
                rules,
                args.games,
                seed,
                bots=bots,
                max_hands=args.max_hands,
                keep_events=recorder is not None,
                on_game=recorder.record if recorder is not None else None,
                progress=bar,
                hand_seed=hand_seed,  # the service's scheme, so recorded games pass an audit
            )
        finally:
            if bar is not None:
                bar.finish()
        elapsed = time.perf_counter() - started
    recorded = recorder.game_ids if recorder is not None else []
    cut_short = recorder.cut_short if recorder is not None else 0
    if args.json:
        body = _as_json(result, rules, seed, args.games, elapsed, recorded)
        if recorder is not None:
            body["not_recorded_cut_short"] = cut_short
        print(json.dumps(body, indent=2))
    else:
        print(report(result, rules, seed, args.games, elapsed, recorded))
        if cut_short:
            print(
                f"not recorded: {cut_short} games cut short by --max-hands (a stored game ends "
                "only at its score limit; lower it with --rules '{\"score_limit\": N}')"
            )
    return OK


class Recorder:
    """Stores each finished game in the event store, as the service would have written it.

    One append per game: ``GameCreated``, the deal plan record (the game's deal seed, from
    which every hand's seed is derived, so ``hearts audit`` can check the deals), then every
    event in order.
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self.game_ids: list[str] = []
        self.cut_short = 0  # games stopped by --max-hands, not stored

    def record(self, game: GameResult) -> None:
        from service.app.deal_plan import DealPlan, plan_event
        from service.app.game import new_event

        if not game.finished:
            # Stored, it would sit in the lobby between two hands for good (issue 18).
            self.cut_short += 1
            return

        plan = plan_event(DealPlan(game.deal_seed))
        events = [new_event(game.events[0]), plan, *(new_event(e) for e in game.events[1:])]
        self.store.append(game.game_id, 0, events, command_id=f"simulate:{game.game_id}")
        self.game_ids.append(game.game_id)


def _refuse(message: str) -> int:
    return fail(message, BAD, "hearts simulate")


def _as_json(
    result: TournamentResult,
    rules: RuleOptions,
    seed: str,
    games: int,
    elapsed: float,
    recorded: list[str],
) -> dict[str, Any]:
    return {
        "seed": seed,
        "games": games,
        "games_played": len(result.games),
        "hands_played": sum(len(g.hands) for g in result.games),
        "lineup": list(result.lineup),
        "rules": rules.to_dict(),
        "seconds": round(elapsed, 3),
        "strategies": [_finite(s.to_dict()) for s in result.stats()],
        "comparisons": [_finite(c.to_dict()) for c in result.comparisons()],
        "recorded": list(recorded),
    }


def _finite(d: dict[str, Any]) -> dict[str, Any]:
    """JSON has no NaN or infinity: such figures (one observation, no time) become null."""

    def fix(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    return {k: fix(v) for k, v in d.items()}


def report(
    result: TournamentResult,
    rules: RuleOptions,
    seed: str,
    games: int,
    elapsed: float,
    recorded: list[str],
) -> str:
    stats = result.stats()
    hands = sum(len(g.hands) for g in result.games)
    deals = max((s.points.n for s in stats), default=0)
    w = max([12, *(len(s.name) for s in stats)])  # a spec (montecarlo:ms=50) can be longer
    lines = [
        f"{games} duplicate games x {rules.players} rotations = {len(result.games)} games, "
        f"{hands} hands, {deals} duplicate deals; seed {seed}; {elapsed:.1f}s",
        "",
        f"{'strategy':<{w}} {'seats':>5} {'points/hand':>11} {'95% CI':>16} {'win rate':>8} "
        f"{'moons':>5} {'decisions/s':>11} {'ms/decision':>11} {'slowest ms':>10}",
    ]
    for s in stats:
        ci = f"[{s.points.low:.2f}, {s.points.high:.2f}]" if s.points.n > 1 else "-"
        lines.append(
            f"{s.name:<{w}} {s.seats:>5} {s.points.mean:>11.2f} {ci:>16} {_percent(s.win_rate):>8} "
            f"{s.moons:>5} {s.decisions_per_second:>11,.0f} {s.ms_per_decision:>11.2f} "
            f"{1000 * s.slowest_decision:>10.1f}"
        )
    comparisons = result.comparisons()
    if comparisons:
        lines.append("")
    for c in comparisons:
        d = c.difference
        ci = f"[{d.low:+.2f}, {d.high:+.2f}]" if d.n > 1 else "-"
        verdict = ""
        if d.n > 1:
            verdict = "  better" if d.high < 0 else "  worse" if d.low > 0 else "  not significant"
        lines.append(
            f"{c.name} - {c.baseline}: {d.mean:+.2f} points per hand, 95% CI {ci} "
            f"over {d.n} duplicate deals{verdict}"
        )
    if recorded:
        lines += ["", f"recorded {len(recorded)} games: {recorded[0]} .. {recorded[-1]}"]
    return "\n".join(lines)


class GameProgress(ProgressBar):
    """``[####......] 12/40 games  3,456 events  45.6 hands/s  1m02s left`` on stderr."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream, width=24, unit="games")
        self.events = self.hands = 0

    def __call__(self, done: int, total: int, events: int = 0, hands: int = 0) -> None:
        self.events, self.hands = events, hands
        super().__call__(done, total)

    def detail(self, elapsed: float) -> str:
        return f"{self.events:,} events  {self.hands / elapsed:,.1f} hands/s"


def _percent(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.1%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hearts")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["simulate", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
