"""``hearts analyse GAME HAND``: what each decision of a finished hand was worth.

    hearts analyse 3f2a... 4 [--json] [--samples 200] [--ms 50] [--seed S] [--quiet]

Reads the game from the event store (``REDIS_URL``, else the embedded redis-server of the data
directory), refuses a hand not yet scored (an analysis during play would be a cheating aid),
and prints every decision: the option played, the best one, the loss with its 95% interval and
a mark (inaccuracy, mistake, blunder), then an accuracy line per seat. docs/analysis.md says
what the figures mean. Under the default seed and a budget in deals the analysis is kept in
Redis (``service/store/analyses.py``), so asking again prints it at once. A progress bar goes
to stderr. Exit status: 0 done, 2 no such game or hand, the hand not finished, or no Redis.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from service.cli.connection import UNUSABLE, open_store
from service.cli.progress import ProgressBar, fail, positive

OK = 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "analyse", help="what each pass, play and moon choice of a finished hand was worth"
    )
    p.add_argument("game", help="the game id")
    p.add_argument("hand", type=positive, help="the hand number (1-based)")
    p.add_argument("--json", action="store_true", help="print the analysis as JSON")
    p.add_argument(
        "--samples", type=positive, default=200, help="sampled deals per decision (at most)"
    )
    p.add_argument(
        "--ms",
        type=float,
        metavar="MS",
        help="CPU milliseconds per decision instead (then a seed no longer fixes the figures)",
    )
    p.add_argument("--seed", help="the sampling seed (default: the game and hand)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bots.analysis import AnalysisBudget
    from service.app.analysis import HandAnalyst
    from service.app.errors import GameNotFound, HandInProgress, HandNotFound

    try:
        budget = AnalysisBudget(samples=max(args.samples, 2), ms=args.ms)
    except ValueError as error:
        return fail(str(error), UNUSABLE)
    bar = None if args.quiet else ProgressBar(sys.stderr, unit="decisions")
    kept = False
    with open_store() as store:
        analyst = HandAnalyst(store)
        try:
            if args.ms is None and args.seed is None:  # the figures a later request may reuse
                document, kept = analyst.document(args.game, args.hand, budget, progress=bar)
            else:
                document = analyst.analyse(
                    args.game,
                    args.hand,
                    seed=args.seed,
                    budget=budget,
                    clock=time.process_time if args.ms is not None else None,
                    progress=bar,
                ).to_dict()
        except GameNotFound:
            return fail(f"no game {args.game!r}", UNUSABLE)
        except (HandNotFound, HandInProgress) as error:
            return fail(error.detail, UNUSABLE)
        finally:
            if bar is not None and bar.done:
                bar.finish()
    if kept and not args.quiet:
        print("hearts: kept from an earlier analysis of this hand and budget", file=sys.stderr)
    if args.json:
        print(json.dumps(document, indent=1))
    else:
        print(render(args.game, document))
    return OK


def render(game_id: str, analysis: dict[str, Any]) -> str:
    """The text form of an analysis document (``HandAnalysis.to_dict``)."""
    budget = analysis["budget"]
    spent = f"{budget['ms']:g} ms" if budget["ms"] is not None else f"{budget['samples']} deals"
    lines = [
        f"game {game_id}, hand {analysis['hand_number']}: {spent} a decision, "
        f"seed {analysis['seed']!r}",
        "value: the seat's points less the others' average (lower is better); "
        "loss: the played option's value less the best's, +- its 95% interval",
        "",
    ]
    for d in analysis["decisions"]:
        lines.append(_line(d))
    lines.append("")
    for s in analysis["seats"]:
        lines.append(
            f"seat {s['seat']}: accuracy {s['accuracy']:.0f}% over {s['decisions']} choices "
            f"({s['forced']} forced), loss {s['total_loss']:.1f}, "
            f"{_count(s['inaccuracies'], 'inaccuracy', 'inaccuracies')}, "
            f"{_count(s['mistakes'], 'mistake', 'mistakes')}, "
            f"{_count(s['blunders'], 'blunder', 'blunders')}"
        )
    return "\n".join(lines)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _line(d: dict[str, Any]) -> str:
    where = f"trick {d['trick']:<2}" if d["kind"] == "play" else f"{d['kind']:<8}"
    head = f"{where} seat {d['seat']}  played {d['played']:<10}"
    if d["forced"]:
        return f"{head} forced"
    mark = f"  {d['mark'].upper()}" if d["mark"] else ""
    options = d["options"]
    shown = ", ".join(f"{o['option']} {o['value']:+.1f}" for o in options[:4])
    more = f" +{len(options) - 4} more" if len(options) > 4 else ""
    return (
        f"{head} best {d['best']:<10} loss {d['loss']:4.1f} +-{d['loss_interval']:.1f}{mark}"
        f"   [{shown}{more}]"
    )
