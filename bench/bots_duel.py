"""A duplicate duel of two strategies in the same seat: which one plays a seat's cards better.

``python -m bench.bots_duel --candidate montecarlo:plays=7000 --baseline montecarlo --deals 200``

Every deal is played twice per seat: once with the candidate in that seat and once with the
baseline there, the other seats held by ``--others`` in both (the same strategies, the same
seeds), so the only difference between the two plays of a deal is the strategy in that seat.
The difference of that seat's points (candidate minus baseline, lower is better for the
candidate) averaged over the four seats is one observation per deal; the confidence interval is
over deals. Games run ``--hands`` hands (each a deal of its own, the pass direction turning as
in a game) with the score limit out of reach, so every hand counts.

Two figures per duel: ``points``, the seat's points per hand (the issue 23 arena's measure: a
moon shot by another seat costs the full 26, one's own shot counts as no points), and
``relative``, the seat's points less the others' average (what decides a game: one's own moon
counts for what it does to the others).

A strategy is a spec (``bots.specs``); ``REF:spec`` (``main:montecarlo``) is the spec as the bots
package was at git ref REF of this repository, for comparisons with an earlier version.
Decision costs are CPU time (``time.process_time``) of this process.

``--results F`` appends each deal's observation to F as a JSON line (its seed, game and hand,
and the two differences), and ``--pool F [F ...]`` reads such files back: the figures over
every deal of runs with independent seeds (a deal is named by its seed, game and hand), e.g.
two runs made side by side, one a core.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import json_lines
from bots.base import Bot
from bots.specs import make_bot
from bots.tournament import Interval, interval, play_game
from domain.rules import RuleOptions

_REPO = Path(__file__).resolve().parent.parent
# A measure's results by side ("candidate", "baseline"), then by deal (game, hand): each seat's.
Table = dict[str, dict[tuple[int, int], list[float]]]
_LOADED: dict[str, Any] = {}


def bot_for(spec: str) -> Bot:
    """The bot a spec names, ``REF:spec`` from the bots package as it was at git ref REF."""
    ref, colon, rest = spec.partition(":")
    if colon and "=" not in ref and _is_ref(ref):
        return _package_at(ref).specs.make_bot(rest, time.process_time)
    return make_bot(spec, time.process_time)


def _is_ref(text: str) -> bool:
    found = subprocess.run(
        ["git", "-C", str(_REPO), "rev-parse", "--verify", "--quiet", f"{text}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    return found.returncode == 0


def _package_at(ref: str) -> Any:
    if ref not in _LOADED:
        sha = subprocess.run(
            ["git", "-C", str(_REPO), "rev-parse", ref],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        name = "bots_" + re.sub(r"\W", "_", sha[:12])
        root = Path(tempfile.mkdtemp(prefix="duel-"))
        archive = subprocess.run(
            ["git", "-C", str(_REPO), "archive", sha, "bots"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
        (root / "bots").rename(root / name)
        sys.path.insert(0, str(root))
        importlib.import_module(f"{name}.montecarlo")
        _LOADED[ref] = importlib.import_module(name)
        importlib.import_module(f"{name}.specs")
    return _LOADED[ref]


def duel(
    candidate: str,
    baseline: str,
    others: str,
    deals: int,
    hands: int,
    seed: str,
    rules: RuleOptions,
    progress: bool = True,
    max_seconds: float | None = None,
    results: str | None = None,
) -> dict[str, Any]:
    n = rules.players
    bots = {
        "candidate": bot_for(candidate),
        "baseline": bot_for(baseline),
        "others": bot_for(others),
    }
    points: Table = {"candidate": {}, "baseline": {}}
    relative: Table = {"candidate": {}, "baseline": {}}
    decisions = {"candidate": 0, "baseline": 0}
    seconds = {"candidate": 0.0, "baseline": 0.0}
    slowest = {"candidate": 0.0, "baseline": 0.0}
    moons = {"candidate": 0, "baseline": 0, "against_candidate": 0, "against_baseline": 0}
    games = (deals + hands - 1) // hands
    started = time.perf_counter()
    for g in range(games):
        for seat in range(n):
            for who in ("candidate", "baseline"):
                lineup = ["others"] * n
                lineup[seat] = who
                game = play_game(
                    f"duel-{seed}-{g}-{seat}",
                    rules,
                    lineup,
                    f"{seed}/{g}",
                    bots=bots,
                    max_hands=hands,
                )
                for h in game.hands:
                    key = (g, h.hand_number)
                    mine = h.score_changes[seat]
                    rest = (sum(h.score_changes) - mine) / (n - 1)
                    points[who].setdefault(key, []).append(mine)
                    relative[who].setdefault(key, []).append(mine - rest)
                    if h.shooter == seat:
                        moons[who] += 1
                    elif h.shooter is not None:
                        moons[f"against_{who}"] += 1
                decisions[who] += game.decisions[seat]
                seconds[who] += game.decision_seconds[seat]
                slowest[who] = max(slowest[who], game.slowest_decision[seat])
        if results is not None:
            _record(results, seed, g, points, relative)
        if progress:
            print(
                f"\r{g + 1}/{games} games, {time.perf_counter() - started:.0f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )
        if max_seconds is not None and time.perf_counter() - started > max_seconds:
            break  # bounded: the figure is over the games played, its size reported
    if progress:
        print(file=sys.stderr)

    def diff(table: Table) -> Interval:
        return interval(
            [_difference(table, k) for k in table["candidate"] if k in table["baseline"]]
        )

    def mean(table: dict[tuple[int, int], list[float]]) -> Interval:
        return interval([sum(v) / len(v) for v in table.values()])

    return {
        "candidate": candidate,
        "baseline": baseline,
        "others": others,
        "seed": seed,
        "deals": diff(points).n,
        "points_difference": _show(diff(points)),
        "relative_difference": _show(diff(relative)),
        "points": {w: _show(mean(points[w])) for w in points},
        "relative": {w: _show(mean(relative[w])) for w in relative},
        "moons": moons,
        "ms_per_decision": {
            w: round(1000 * seconds[w] / decisions[w], 2) if decisions[w] else 0.0
            for w in decisions
        },
        "slowest_decision_ms": {w: round(1000 * slowest[w], 1) for w in slowest},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


def _difference(table: Table, key: tuple[int, int]) -> float:
    """A deal's observation: the candidate's mean over its seats minus the baseline's."""
    cand, base = table["candidate"][key], table["baseline"][key]
    return sum(cand) / len(cand) - sum(base) / len(base)


def _show(i: Interval) -> dict[str, float]:
    return {"mean": round(i.mean, 3), "ci95": round(i.half_width, 3), "n": i.n}


def _record(path: str, seed: str, game: int, points: Table, relative: Table) -> None:
    """Append game ``game``'s deals, one JSON line each: candidate minus baseline, its seats
    averaged, in both measures."""
    keys = [k for k in points["candidate"] if k[0] == game and k in points["baseline"]]
    with open(path, "a") as out:
        for key in sorted(keys):
            line = {"seed": seed, "game": key[0], "hand": key[1]}
            line |= {"points": _difference(points, key), "relative": _difference(relative, key)}
            out.write(json.dumps(line) + "\n")


def pool(paths: list[str]) -> dict[str, Any]:
    """The figures over every deal in ``--results`` files (each deal once, by seed, game and
    hand: a file named twice, or a run appended twice, counts once)."""
    deals = {(d["seed"], d["game"], d["hand"]): d for path in paths for d in json_lines(path)}
    return {
        "seeds": sorted({seed for seed, _, _ in deals}),
        "deals": len(deals),
        "points_difference": _show(interval([d["points"] for d in deals.values()])),
        "relative_difference": _show(interval([d["relative"] for d in deals.values()])),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidate")
    parser.add_argument("--baseline", default="montecarlo")
    parser.add_argument("--others", default="heuristic")
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals (hands)")
    parser.add_argument("--hands", type=int, default=4, help="hands per game")
    parser.add_argument("--seed", default="duel")
    parser.add_argument("--rules", default="{}", help="rule options as JSON")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--max-seconds", type=float, default=None, help="stop after the game that passes this"
    )
    parser.add_argument("--results", help="append each deal's observation here (JSON lines)")
    parser.add_argument("--pool", nargs="+", metavar="RESULTS", help="pool --results files")
    args = parser.parse_args(argv)
    if args.pool:
        print(json.dumps(pool(args.pool)))
        return 0
    if not args.candidate:
        parser.error("--candidate is required (or --pool)")
    options = {"score_limit": 500, **json.loads(args.rules)}  # the most (issue 33)
    rules = RuleOptions.from_dict(options)
    result = duel(
        args.candidate,
        args.baseline,
        args.others,
        args.deals,
        args.hands,
        args.seed,
        rules,
        progress=not args.quiet,
        max_seconds=args.max_seconds,
        results=args.results,
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
