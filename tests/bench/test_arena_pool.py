"""Pooling arena runs: a deal is one observation, named by its run (two runs' deal 0 differ)."""

from __future__ import annotations

import json

import pytest

from bench.arena_pool import pooled


def write(path, hands):
    path.write_text("".join(json.dumps(h) + "\n" for h in hands))
    return str(path)


def hand(deal, seat, ours, ismcts, baseline=None):
    return {
        "deal": deal,
        "seat": seat,
        "direction": "left",
        "ours": ours,
        "ismcts": ismcts,
        "baseline": baseline,
    }


def test_runs_pool_by_deal_each_deal_its_seats_mean(tmp_path):
    first = write(tmp_path / "a.jsonl", [hand(0, 0, 5, 9, 6), hand(0, 1, 3, 3, 3)])  # deal +2
    second = write(tmp_path / "b.jsonl", [hand(0, 0, 10, 8, 10), hand(1, 2, 0, 4, 1)])  # -2, +4
    figures = pooled([first, second, first])
    assert (figures["runs"], figures["deals"], figures["hands"]) == (2, 3, 4)
    mean, low, high = figures["ismcts"]["minus_ours"]
    assert mean == pytest.approx(4 / 3)
    assert low < mean < high
    assert figures["ismcts"]["points_a_hand"] == pytest.approx(6.0)
    assert figures["baseline"]["minus_ours"][0] == pytest.approx((0.5 + 0 + 1) / 3)
    assert figures["ours_points_a_hand"] == pytest.approx(4.5)


def test_a_run_without_a_baseline_reports_none(tmp_path):
    only = write(tmp_path / "a.jsonl", [hand(0, 0, 5, 9), hand(1, 0, 3, 4)])
    figures = pooled([only])
    assert "baseline" not in figures
    assert figures["ismcts"]["minus_ours"][0] == pytest.approx(2.5)


def test_a_new_run_pairs_with_a_stored_runs_ismcts_and_bot(tmp_path):
    # The stored run: ISMCTS and the old bot; the new run: the new bot alone (--sims 0).
    stored = write(tmp_path / "ref.jsonl", [hand(0, 0, 6, 9), hand(0, 1, 2, 4), hand(1, 2, 8, 7)])
    new = write(tmp_path / "new.jsonl", [hand(0, 0, 5, None), hand(0, 1, 3, None)])
    figures = pooled([], [(stored, new)])
    assert (figures["runs"], figures["deals"], figures["hands"]) == (1, 1, 2)
    assert figures["ismcts"]["minus_ours"][0] == pytest.approx(((9 - 5) + (4 - 3)) / 2)
    assert figures["baseline"]["minus_ours"][0] == pytest.approx(((6 - 5) + (2 - 3)) / 2)
    assert figures["ours_points_a_hand"] == pytest.approx(4.0)


def test_a_hand_the_stored_run_lacks_is_refused(tmp_path):
    stored = write(tmp_path / "ref.jsonl", [hand(0, 0, 6, 9)])
    other_seed = write(tmp_path / "new.jsonl", [hand(0, 0, 5, None), hand(3, 1, 3, None)])
    with pytest.raises(ValueError, match="deal 3 seat 1"):
        pooled([], [(stored, other_seed)])
    turned = {**hand(0, 0, 5, None), "direction": "right"}
    with pytest.raises(ValueError, match="deal 0 seat 0"):
        pooled([], [(stored, write(tmp_path / "turned.jsonl", [turned]))])


def test_a_paired_run_may_be_measured_against_the_stored_baseline(tmp_path):
    stored = write(tmp_path / "ref.jsonl", [hand(0, 0, 6, 9, 8)])
    new = write(tmp_path / "new.jsonl", [hand(0, 0, 5, None)])
    assert pooled([], [(stored, new)])["baseline"]["minus_ours"][0] == pytest.approx(1.0)
    against = pooled([], [(stored, new)], against="baseline")
    assert against["baseline"]["minus_ours"][0] == pytest.approx(3.0)


def test_pairs_against_a_references_bot_and_against_anothers_baseline_pool_together(tmp_path):
    # The master was ours in one stored run and the baseline in another: a new bot run on both
    # seeds is measured against the master in each.
    as_ours = write(tmp_path / "a.jsonl", [hand(0, 0, 6, 9, 8)])
    as_baseline = write(tmp_path / "b.jsonl", [hand(0, 0, 7, 10, 4)])
    new_a = write(tmp_path / "new-a.jsonl", [hand(0, 0, 5, None)])
    new_b = write(tmp_path / "new-b.jsonl", [hand(0, 0, 3, None)])
    figures = pooled([], [(as_ours, new_a)], against_baseline=[(as_baseline, new_b)])
    assert (figures["runs"], figures["deals"]) == (2, 2)
    assert figures["baseline"]["minus_ours"][0] == pytest.approx(((6 - 5) + (4 - 3)) / 2)
    assert figures["ismcts"]["minus_ours"][0] == pytest.approx(((9 - 5) + (10 - 3)) / 2)


def test_a_swapped_run_pools_its_baseline_as_ours(tmp_path):
    # The master was ours in one run and the baseline in another: pooled as one bot.
    first = write(tmp_path / "a.jsonl", [hand(0, 0, 5, 9, 7)])
    second = write(tmp_path / "b.jsonl", [hand(0, 0, 6, 10, 4)])
    figures = pooled([first], swapped=[second])
    assert (figures["runs"], figures["deals"]) == (2, 2)
    assert figures["ismcts"]["minus_ours"][0] == pytest.approx(((9 - 5) + (10 - 4)) / 2)
    assert figures["baseline"]["minus_ours"][0] == pytest.approx(((7 - 5) + (6 - 4)) / 2)
    assert figures["ours_points_a_hand"] == pytest.approx(4.5)
