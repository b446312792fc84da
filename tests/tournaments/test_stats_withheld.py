"""With HEARTS_COUNT_ARRANGED_GAMES on, a tournament's table games still stay out of the
player statistics (a table's result is the tournament's, and secret until its round ends),
live and in a rebuild, after the tournament's links have left with its archived log too."""

from __future__ import annotations

import pytest

from service.api.factory import create_app
from service.app import projection_apply
from service.app.archiver import Archiver
from service.app.projector import Projector, rebuild
from service.app.tournament_projection import TournamentProjection
from service.settings import Settings
from service.store.archive import attach
from service.store.read_models import ProjectionStore
from tests.projections.helpers import drain
from tests.tournaments.helpers import API, auth, create, play_out, register


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_table_games_stay_out_of_the_statistics_live_and_rebuilt(
    redis_client, key_prefix, tmp_path, monkeypatch
) -> None:
    settings = Settings(key_prefix=key_prefix, bot_poll_seconds=0.05, count_arranged_games=True)
    app = create_app(settings, redis=redis_client)
    try:
        client = app.test_client()
        service = app.extensions["hearts.tournaments"]
        store = service.games.store
        attach(store, f"file://{tmp_path / 'archive'}")
        keys = [register(client, f"Held{i}") for i in range(4)]
        tid = create(client, keys[0], name="Held", rounds=1, boards=1, min_players=4)["id"]
        for k in keys:
            body = {"stand_in": "random"}
            client.post(f"{API}/tournaments/{tid}/entries", json=body, headers=auth(k))
        client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
        assert play_out(app, client, tid)["status"] == "finished"

        projections = ProjectionStore(store, count_arranged=True)
        drain(Projector(projections, blocking=False))
        generation = projections.current_generation()
        entrants = {e.name for e in service.load(tid).state.entrants}
        entrants |= {e.player_id for e in service.load(tid).state.entrants}
        figures = projections.players(projections.as_of())
        assert not [who for who in figures if any(e in who for e in entrants)], figures.keys()

        moved = Archiver(store, store.archive, after_seconds=0, projections=projections)
        assert moved.run_once().tournaments == [tid]  # its links leave with it
        before = {k: v for k, v in projections.dump(generation).items() if k.endswith(":stats")}
        result = rebuild(projections, grace_seconds=0)
        after = projections.dump(result.generation)
        assert {k: v for k, v in after.items() if k.endswith(":stats")} == before

        # Without the tables kept out, the same rebuild shows them: the leak this closes.
        monkeypatch.setattr(projection_apply, "tables", lambda store, ids: set())
        monkeypatch.setattr(TournamentProjection, "table_games", lambda self: set())
        leaky = rebuild(projections, grace_seconds=0)
        figures = projections.players(projections.as_of(leaky.generation))
        assert [who for who in figures if any(e in who for e in entrants)]
    finally:
        app.extensions["hearts.stop"]()
