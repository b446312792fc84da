"""Pool the duplicate hands of several arena runs (``python -m bench.arena --results F``).

    python -m bench.arena_pool bench/results/arena-41/*.jsonl

Each run's deals are its own (its ``--seed``), so a deal is named by its file and number; a deal
is one observation (its test seats averaged, as ``bench.arena`` reports), and the figures are
the means with 95% CIs (bench.arena's) of ISMCTS's points minus ours and of the baseline's points
minus ours, with each side's points a hand.

    python -m bench.arena_pool --pair bench/results/arena-41/arena-415.jsonl new-415.jsonl

**A new bot against a stored run** (``--pair REFERENCE RUN``, repeatable; plain files may be
named too): RUN is ``bench.arena --sims 0 --our-bot NEW`` with REFERENCE's ``--seed`` and
``--table``. Our side is deterministic (the deals, the table's seeds), and the ISMCTS game of a
test seat involves no bot of ours, so REFERENCE's ISMCTS points for that hand are a draw of the
same game: RUN's hands take them, and REFERENCE's own bot becomes their baseline (what NEW is
measured against: ISMCTS, and the bot it would replace; ``--against baseline``: REFERENCE's
baseline instead; ``--pair-baseline REFERENCE RUN``: that pair alone, so runs whose bot was
ours in some references and the baseline in others pool together). Hands are matched by deal
and seat, their directions checked; a hand of RUN that REFERENCE lacks is an error (another
seed or a longer run), while REFERENCE's extra hands are left out. Each agent's CPU time is
not in the files: read it from the runs' own reports.

    python -m bench.arena_pool bench/results/arena-41/arena-41[56].jsonl --swap arena-417.jsonl

``--swap RUN``: RUN's baseline pools as ours (a run of a candidate with ``--baseline master``
pools its master with runs of ``--our-bot master``). The baseline's figure is then of the runs'
baselines together, whatever they were: read it only when they were one bot."""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

from bench.arena import interval
from bench.common import json_lines


def paired(reference: str, run: str, against: str = "ours") -> list[dict]:
    """RUN's hands, each with REFERENCE's ISMCTS points and, as its baseline, REFERENCE's bot
    (``against="ours"``) or REFERENCE's own baseline (``"baseline"``)."""
    stored = {(h["deal"], h["seat"]): h for h in json_lines(reference)}
    hands = []
    for hand in json_lines(run):
        ref = stored.get((hand["deal"], hand["seat"]))
        if ref is None or ref["direction"] != hand["direction"]:
            raise ValueError(f"{run}: deal {hand['deal']} seat {hand['seat']} not in {reference}")
        hands.append({**hand, "ismcts": ref["ismcts"], "baseline": ref[against]})
    return hands


def pooled(
    paths: list[str],
    pairs: list[tuple[str, str]] = (),
    against: str = "ours",
    swapped: list[str] = (),
    against_baseline: list[tuple[str, str]] = (),
) -> dict:
    """The pooled figures of the runs' JSON lines, of runs paired with their references (with
    REFERENCE's ``against`` bot as the baseline; ``against_baseline`` pairs with REFERENCE's own
    baseline), and of ``swapped`` runs: their baseline taken as ours and ours as their baseline
    (a bot that was one run's baseline and another's own pools as one)."""
    paths = list(dict.fromkeys(paths))  # a file named twice is one run
    runs = {path: list(json_lines(path)) for path in paths}
    for ref, run in dict.fromkeys(pairs):
        runs[f"{ref}+{run}"] = paired(ref, run, against)
    for ref, run in dict.fromkeys(against_baseline):
        runs[f"{ref}+{run}"] = paired(ref, run, "baseline")
    for path in dict.fromkeys(swapped):
        runs[f"swapped:{path}"] = [
            {**h, "ours": h["baseline"], "baseline": h["ours"]} for h in json_lines(path)
        ]
    deals: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for name, run_hands in runs.items():
        for hand in run_hands:
            deals[(name, hand["deal"])].append(hand)
    hands = [hand for seats in deals.values() for hand in seats]
    figures: dict = {"runs": len(runs), "deals": len(deals), "hands": len(hands)}
    for side in ("ismcts", "baseline"):
        per_deal = [
            statistics.fmean(h[side] - h["ours"] for h in seats)
            for seats in deals.values()
            if all(h.get(side) is not None for h in seats)
        ]
        if per_deal:
            mean, low, high = interval(per_deal)
            points = statistics.fmean(h[side] for h in hands if h.get(side) is not None)
            figures[side] = {"minus_ours": [mean, low, high], "points_a_hand": points}
    figures["ours_points_a_hand"] = statistics.fmean(h["ours"] for h in hands)
    return figures


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="pool arena runs' duplicate hands")
    p.add_argument("paths", nargs="*", metavar="RESULTS.jsonl")
    p.add_argument(
        "--pair",
        nargs=2,
        action="append",
        default=[],
        metavar=("REFERENCE", "RUN"),
        help="RUN (--sims 0, REFERENCE's seed) takes REFERENCE's ISMCTS and bot as baseline",
    )
    p.add_argument(
        "--against",
        choices=("ours", "baseline"),
        default="ours",
        help="which of REFERENCE's bots a paired RUN's bot is measured against",
    )
    p.add_argument(
        "--pair-baseline",
        nargs=2,
        action="append",
        default=[],
        metavar=("REFERENCE", "RUN"),
        help="as --pair, RUN measured against REFERENCE's baseline (this pair only)",
    )
    p.add_argument(
        "--swap",
        action="append",
        default=[],
        metavar="RESULTS.jsonl",
        help="a run whose baseline is the bot pooled as ours (and ours its baseline)",
    )
    args = p.parse_args(argv)
    if not args.paths and not args.pair and not args.pair_baseline and not args.swap:
        p.error("name a results file, a --pair, a --pair-baseline or a --swap")
    figures = pooled(
        args.paths,
        [tuple(pair) for pair in args.pair],
        args.against,
        args.swap,
        [tuple(pair) for pair in args.pair_baseline],
    )
    print(f"{figures['hands']} duplicate hands, {figures['deals']} deals, {figures['runs']} runs")
    print(f"ours: {figures['ours_points_a_hand']:.2f} points a hand")
    for side in ("ismcts", "baseline"):
        if side in figures:
            mean, low, high = figures[side]["minus_ours"]
            points = figures[side]["points_a_hand"]
            print(
                f"{side} minus ours, per hand (deals as observations): {mean:+.2f}, "
                f"95% CI [{low:+.2f}, {high:+.2f}]; {side} {points:.2f} points a hand"
            )


if __name__ == "__main__":
    main()
