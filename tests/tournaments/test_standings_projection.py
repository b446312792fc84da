"""Standings are a read model: folded by the projector from each tournament's log as it moves
on, equal to a rebuild from the logs, and what the standings endpoint serves."""

from __future__ import annotations

import pytest

from service.app.projector import Projector, rebuild
from service.app.tournaments import TournamentService
from service.store.read_models import ProjectionStore
from service.store.tournament_models import TournamentModels
from tests.projections.helpers import drain
from tests.tournaments.helpers import API, auth, create, play_out, register


def _tournament(client, n: int, name: str) -> tuple[str, list[str]]:
    keys = [register(client, f"{name}{i}") for i in range(n)]
    tid = create(client, keys[0], name=name, rounds=2, boards=1, min_players=n)["id"]
    for k in keys:
        answer = client.post(
            f"{API}/tournaments/{tid}/entries", json={"stand_in": "random"}, headers=auth(k)
        )
        assert answer.status_code == 200
    return tid, keys


@pytest.mark.unlimited("registers 8 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_the_projector_folds_standings_and_a_rebuild_makes_them_equal(app, client) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    store = service.games.store
    projections = ProjectionStore(store)
    projector = Projector(projections, blocking=False)
    models = TournamentModels(projections)

    finished, keys = _tournament(client, 4, "Proj")
    client.post(f"{API}/tournaments/{finished}/start", json={}, headers=auth(keys[0]))
    assert play_out(app, client, finished)["status"] == "finished"
    upcoming, _ = _tournament(client, 4, "Soon")
    drain(projector)

    live = projections.current_generation()
    assert live is not None
    doc = models.read(live, finished)
    assert doc is not None and doc["version"] == service.load(finished).version
    assert doc["status"] == "finished" and doc["rounds_counted"] == 2
    served = client.get(f"{API}/tournaments/{finished}/standings").get_json()
    assert served == {"rounds_counted": 2, "standings": doc["standings"]}
    assert len(doc["standings"]) == 4 and {r["boards"] for r in doc["standings"]} == {2}
    assert models.read(live, upcoming)["status"] == "upcoming"
    assert models.dirty(list(range(store.keys.partitions))) == {}  # nothing left due

    before = {k: v for k, v in projections.dump(live).items() if ":tournament:" in k}
    assert len(before) == 2
    result = rebuild(projections, grace_seconds=0)
    after = {k: v for k, v in projections.dump(result.generation).items() if ":tournament:" in k}
    assert after == before


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_an_append_after_the_fold_keeps_the_tournament_due(app, client) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    projections = ProjectionStore(service.games.store)
    models = TournamentModels(projections)
    tid, keys = _tournament(client, 4, "Due")
    generation = projections.ensure_generation()
    folded = service.projection.project(generation, tid)  # folded at this version...
    answer = client.delete(f"{API}/tournaments/{tid}/entries/me", headers=auth(keys[1]))
    assert answer.status_code == 200  # ...then the log moves on
    assert not models.clean(tid, folded)  # kept due: the next poll folds the new version
    projector = Projector(projections, blocking=False)
    drain(projector)
    assert models.read(generation, tid)["version"] == service.load(tid).version == folded + 1
