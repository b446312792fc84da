"""A rebuild reads the archived games' entries merged with the live logs in log order, so it
still equals the live read models (tests/projections/test_rebuild.py with archiving on)."""

from __future__ import annotations

import json
import random

import pytest

from domain import RuleOptions
from service.app.archiver import Archiver, archived_scoreboard
from service.app.projector import Projector, rebuild
from service.app.transparency import Appender
from service.store.archive import attach
from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from tests.archive.helpers import redis_of
from tests.blob_helpers import archive_url
from tests.projections.games import GamePlan, play_game
from tests.projections.test_rebuild import _append_and_project

# Each seed interleaves the games' entries otherwise in the partition logs, which is Redis's
# side: S3 (where the objects are) takes one.
CASES = [(where, seed) for where in ("real-disk", "cluster-disk") for seed in (1, 2, 3)]
CASES.append(("real-s3", 1))


@pytest.fixture
def archived(request, key_prefix, tmp_path) -> tuple[RedisEventStore, ProjectionStore]:
    """An event store on the throwaway redis-server or cluster (``<redis>-<backend>``: as the
    projection tests' stores, tests/projections/conftest.py), archiving to disk or S3."""
    redis_kind, backend = request.param.split("-")
    client = redis_of(request, redis_kind)
    store = RedisEventStore(client, prefix=key_prefix)
    attach(store, archive_url(request, backend, tmp_path))
    yield store, ProjectionStore(store)
    client.close()


@pytest.mark.parametrize(("archived", "seed"), CASES, indirect=["archived"])
def test_a_rebuild_with_games_archived_equals_the_live_models(archived, seed):
    store, projections = archived
    rng = random.Random(seed)
    plans = [play_game(f"a{i}-{seed}", RuleOptions(score_limit=15), rng) for i in range(4)]
    cut = play_game(f"live-{seed}", RuleOptions(score_limit=15), rng)  # still in play
    plans.append(GamePlan(cut.game_id, cut.batches[: len(cut.batches) // 2]))
    projector = Projector(projections, consumer="p", public_log=Appender(store, "test/log"))
    projector.ensure_groups()
    _append_and_project(store, projector, plans, rng)  # the games' entries interleave
    live = projections.current_generation()
    with_boards = projections.dump(live)
    moved = Archiver(store, store.archive, after_seconds=0, projections=projections).run_once()
    assert len(moved.archived) == 4
    before = projections.dump(live)  # the moved games' boards are folded from the archive now
    assert len(with_boards) - len(before) == 4
    assert sum(store.redis.xlen(key) for key in store.partition_log_keys()) < sum(
        projections.as_of().log_lengths
    )
    assert projections.as_of().lag == 0  # the moved entries still count as applied

    result = rebuild(projections, batch_size=rng.randint(1, 60))

    assert result.replaced == live
    assert result.entries == sum(len(b) for p in plans for b in p.batches)
    # The fold re-made the archived games' boards; the archiver's next pass drops them again.
    assert len(projections.dump(result.generation)) == len(with_boards)
    archiver = Archiver(store, store.archive, after_seconds=0, projections=projections)
    assert archiver.run_once().archived == []
    assert projections.dump(result.generation) == before
    assert projections.as_of().lag == 0
    for game_id in moved.archived:  # and the boards it dropped are the ones a read folds
        board = archived_scoreboard(projections, game_id)
        assert board is not None
        assert json.loads(json.dumps(board.to_dict())) == _board(with_boards, game_id)


def _board(dump: dict, game_id: str) -> dict:
    found = [value for key, value in dump.items() if key.endswith(f":game:{game_id}")]
    assert len(found) == 1
    return found[0]
