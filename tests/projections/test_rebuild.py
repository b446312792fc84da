"""Rebuilds: a fold of the whole log from scratch equals the incrementally built read models."""

from __future__ import annotations

import json
import random
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import RuleOptions
from service.app.projector import Projector, rebuild
from service.cli.projections import main as cli_main
from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from tests.projections.games import GamePlan, append_batch, play_game
from tests.projections.helpers import drain
from tests.rule_strategies import rule_options

game_specs = st.lists(
    st.tuples(
        # Every rule option drawn (tests/rule_strategies.py); low limits so games end quickly.
        rule_options(score_limit=(5, 15)),
        st.integers(0, 2**32 - 1),  # the bots' seed
        st.one_of(st.none(), st.floats(0.0, 1.0)),  # None: played to the end; else cut there
    ),
    min_size=1,
    max_size=3,
)


def _plan(i: int, rules: RuleOptions, seed: int, cut: float | None) -> GamePlan:
    plan = play_game(f"h{i}-{seed}", rules, random.Random(seed))
    if cut is not None:
        plan = GamePlan(plan.game_id, plan.batches[: 1 + int(cut * (len(plan.batches) - 1))])
    return plan


def _append_and_project(store, projector, plans, rng) -> None:
    """Append one command at a time from random games; now and then let the projector run."""
    versions = {p.game_id: 0 for p in plans}
    cursors = {p.game_id: 0 for p in plans}
    live = [p for p in plans if p.batches]
    while live:
        plan = rng.choice(live)
        append_batch(store, plan, cursors[plan.game_id], versions)
        cursors[plan.game_id] += 1
        if cursors[plan.game_id] == len(plan.batches):
            live.remove(plan)
        if rng.random() < 0.2:
            projector.poll(block_ms=0, count=rng.randint(1, 30))
    drain(projector)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(specs=game_specs, seed=st.integers(0, 2**32 - 1))
def test_a_rebuild_from_scratch_equals_the_incrementally_built_models(real_redis, specs, seed):
    store = RedisEventStore(real_redis, prefix=f"hyp-{uuid.uuid4().hex[:12]}")
    projections = ProjectionStore(store)
    rng = random.Random(seed)
    plans = [_plan(i, *spec) for i, spec in enumerate(specs)]
    projector = Projector(projections, consumer="incremental", batch_size=rng.randint(1, 50))
    projector.ensure_groups()
    _append_and_project(store, projector, plans, rng)
    incremental = projections.current_generation()
    assert projections.as_of(incremental).lag == 0
    before = projections.dump(incremental)

    result = rebuild(projections, batch_size=rng.randint(1, 500))

    assert result.replaced == incremental
    assert projections.current_generation() == result.generation
    assert projections.dump(result.generation) == before
    for plan in plans:
        board = projections.scoreboard(plan.game_id)
        assert board is not None and board.seq == store.version(plan.game_id)
    for key in store.redis.scan_iter(match=f"{store.prefix}:*"):
        store.redis.unlink(key)


def test_reads_keep_working_during_a_rebuild_and_writes_move_to_the_new_models(store, projections):
    rng = random.Random(21)
    plans = [play_game(f"r{i}", RuleOptions(score_limit=15), rng) for i in range(3)]
    later = play_game("later", RuleOptions(score_limit=15), rng)
    projector = Projector(projections, consumer="p")
    _append_and_project(store, projector, plans, rng)
    old = projections.current_generation()
    boards = {p.game_id: projections.scoreboard(p.game_id) for p in plans}
    seen = []

    def progress(done: int, total: int) -> None:
        # Mid-rebuild: readers still get the old, complete models.
        seen.append((done, total))
        assert projections.current_generation() == old
        for game_id, board in boards.items():
            assert projections.scoreboard(game_id) == board
        if len(seen) == 1:  # a game appended while the rebuild runs
            versions = {"later": 0}
            for i in range(len(later.batches)):
                append_batch(store, later, i, versions)

    result = rebuild(projections, batch_size=50, progress=progress)
    assert seen and seen[-1][0] == seen[-1][1]
    assert projections.current_generation() == result.generation != old
    assert projections.scoreboard("later").seq == store.version("later")
    # The live projector now writes to the new generation (the old one is retired).
    drain(projector)
    assert projections.as_of().lag == 0
    assert projections.store.redis.ttl(projections.game_key(old, "r0")) > 0  # expiring


def test_the_rebuild_command_prints_progress_and_swaps(
    monkeypatch, capsys, redis_url, key_prefix, store, projections
):
    rng = random.Random(22)
    plans = [play_game(f"c{i}", RuleOptions(score_limit=15), rng) for i in range(2)]
    _append_and_project(store, Projector(projections, consumer="p"), plans, rng)
    old = projections.current_generation()
    before = projections.dump(old)
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)

    assert cli_main(["projections", "rebuild", "--batch", "100", "--grace", "0"]) == 0

    out, err = capsys.readouterr()
    report = json.loads(out)
    total = sum(store.redis.xlen(k) for k in store.partition_log_keys())
    assert report["replaced"] == old and report["entries"] == total
    assert f"{total:,}/{total:,} events" in err.splitlines()[-1]
    assert "/s" in err and "left" in err
    assert projections.dump(report["generation"]) == before
    assert projections.dump(old) == {}  # --grace 0: dropped at once

    assert cli_main(["projections", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["generation"] == report["generation"] and status["lag"] == 0
