"""Pool the duplicate hands of several arena runs (``python -m bench.arena --results F``).

    python -m bench.arena_pool bench/results/arena-41/*.jsonl

Each run's deals are its own (its ``--seed``), so a deal is named by its file and number; a deal
is one observation (its test seats averaged, as ``bench.arena`` reports), and the figures are
the means with 95% CIs (Student's t) of ISMCTS's points minus ours and of the baseline's points
minus ours, with each side's points a hand."""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict

from bench.arena import interval
from bench.common import json_lines


def pooled(paths: list[str]) -> dict:
    """The pooled figures of the runs' JSON lines."""
    paths = list(dict.fromkeys(paths))  # a file named twice is one run
    deals: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for path in paths:
        for hand in json_lines(path):
            deals[(path, hand["deal"])].append(hand)
    hands = [hand for seats in deals.values() for hand in seats]
    figures: dict = {"runs": len(paths), "deals": len(deals), "hands": len(hands)}
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
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        sys.exit("usage: python -m bench.arena_pool RESULTS.jsonl [...]")
    figures = pooled(paths)
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
