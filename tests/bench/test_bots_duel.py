"""bench.bots_duel's results file: each deal's observation, pooled back to the run's figures."""

from __future__ import annotations

import json

from bench.bots_duel import duel, main, pool
from domain.rules import RuleOptions


def test_a_runs_results_pool_to_its_own_figures_and_two_runs_pool_together(tmp_path, capsys):
    rules = RuleOptions.from_dict({"score_limit": 500})
    path = str(tmp_path / "duel.jsonl")
    run = {"candidate": "heuristic", "baseline": "random", "others": "random", "hands": 2}
    first = duel(**run, deals=4, seed="a", rules=rules, progress=False, results=path)
    alone = pool([path, path])  # a file named twice counts once
    assert alone["deals"] == first["deals"] == 4
    assert alone["points_difference"] == first["points_difference"]
    assert alone["relative_difference"] == first["relative_difference"]
    duel(**run, deals=2, seed="b", rules=rules, progress=False, results=path)
    assert main(["--pool", path]) == 0
    both = json.loads(capsys.readouterr().out)
    assert both["seeds"] == ["a", "b"]
    assert both["deals"] == 6
    assert both["points_difference"]["mean"] < 0  # the heuristic takes fewer points
