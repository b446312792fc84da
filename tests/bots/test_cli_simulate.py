"""``hearts simulate``: the table, --json, refusals, and --record through the event store."""

from __future__ import annotations

import json
import re

import fakeredis
import pytest

from bots.tournament import run_tournament
from domain.rules import RuleOptions
from service.app.deal_plan import hand_seed
from service.app.replay import Replay
from service.cli import main as hearts
from service.cli.simulate import Recorder
from service.store.event_store import RedisEventStore


def test_simulate_prints_a_table_per_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    status = hearts(
        ["simulate", "--games", "1", "--seats", "heuristic,random,random,random"]
        + ["--seed", "cli", "--max-hands", "2", "--no-progress"]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "4 games, 8 hands, 2 duplicate deals; seed cli" in out
    assert re.search(r"^heuristic +1 +\d+\.\d\d +\[", out, re.M)  # one seat
    assert re.search(r"^random +3 +\d+\.\d\d +\[", out, re.M)  # three seats
    assert "heuristic - random:" in out


def test_simulate_json_and_progress(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["simulate", "--games", "1", "--seats", "heuristic,random,heuristic"]
    args += ["--rules", '{"preset": "omnibus", "players": 3}', "--seed", "j", "--max-hands", "1"]
    assert hearts([*args, "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["games_played"] == 3 and report["hands_played"] == 3
    assert [s["strategy"] for s in report["strategies"]] == ["heuristic", "random"]
    assert report["strategies"][0]["hands"] == 6  # two seats, three rotations, one hand each
    assert report["rules"]["bonus_card"] == "JD"
    assert "3/3 games" in captured.err  # the progress bar's last line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "{nope"], "--rules"),
        (["--rules", '{"preset": "nope"}'], "unknown preset"),
        (["--seats", "heuristic,random"], "4 players need 4 strategies"),
        (["--seats", "heuristic,random,random,nobody"], "unknown bot 'nobody'"),
    ],
)
def test_simulate_refuses_bad_arguments(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hearts(["simulate", *args]) == 2
    assert message in capsys.readouterr().err


def test_recorded_games_are_stored_and_pass_an_audit() -> None:
    store = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), prefix="sim")
    recorder = Recorder(store)
    rules = RuleOptions.from_dict({"preset": "omnibus", "score_limit": 15})
    result = run_tournament(
        ["heuristic", "random", "random", "random"],
        rules,
        1,
        "rec",
        keep_events=True,
        on_game=recorder.record,
        hand_seed=hand_seed,
    )
    assert len(recorder.game_ids) == 4
    for game in result.games:
        stored = store.read(game.game_id)
        assert [r.type for r in stored][:2] == ["GameCreated", "DealPlan"]
        assert stored[-1].type == "GameEnded"
        report = Replay(store).audit(game.game_id)
        assert report.ok, report.to_text()


def test_recording_with_max_hands_leaves_no_game_waiting_for_a_deal(
    redis_server, monkeypatch, capsys
):
    # Through the CLI, on a real server: games cut short are not stored (each would wait in the
    # lobby for its next deal), and the output says how many were left out.
    import redis as redis_lib

    prefix = "sim-cut"
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", prefix)
    args = ["simulate", "--games", "2", "--seats", "random,random,random,random", "--seed", "c"]
    args += ["--rules", '{"score_limit": 60}', "--max-hands", "1"]  # 26 points a hand at most
    assert hearts([*args, "--record", "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recorded"] == [] and out["not_recorded_cut_short"] == 8
    client = redis_lib.Redis.from_url(redis_server)
    try:
        # Nothing but the data layout the first use records (service/store/layout.py).
        assert list(client.scan_iter(f"{prefix}:*")) == [f"{prefix}:layout".encode()]
    finally:
        client.close()
    assert hearts([*args, "--record", "--no-progress"]) == 0
    assert "not recorded: 8 games cut short by --max-hands" in capsys.readouterr().out
