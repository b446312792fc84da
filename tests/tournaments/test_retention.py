"""Tournaments over leave Redis like games: their log to the archive, their links pruned, and
every read answers the same from the archive."""

from __future__ import annotations

import pytest

from service.app.archiver import Archiver
from service.app.tournaments import TournamentService
from service.store.archive import attach
from service.store.tournament_archive import archived_key, games_key, over_key
from tests.background import settle
from tests.tournaments.helpers import API, auth, create, play_out, register


def _tournament(client, n: int, rounds: int = 1, name: str = "Kept") -> tuple[str, list[str]]:
    keys = [register(client, f"{name}{i}") for i in range(n)]
    tid = create(client, keys[0], name=name, rounds=rounds, boards=1, min_players=n)["id"]
    for k in keys:
        answer = client.post(
            f"{API}/tournaments/{tid}/entries", json={"stand_in": "random"}, headers=auth(k)
        )
        assert answer.status_code == 200
    return tid, keys


def _reads(client, tid: str) -> dict:
    reads = {
        path: client.get(f"{API}/tournaments/{tid}{path}").get_json()
        for path in ("", "/standings", "/pairings", "/rounds/1/boards/1", "/export")
    }
    for game in reads["/export"]["games"].values():
        game.pop("exported_at")  # the moment of the export, not the tournament's
    return reads


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_finished_tournament_moves_to_the_archive_and_reads_the_same(
    app, client, tmp_path
) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    store = service.games.store
    attach(store, f"file://{tmp_path / 'archive'}")
    tid, keys = _tournament(client, 4, rounds=2)
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    assert play_out(app, client, tid)["status"] == "finished"
    before = _reads(client, tid)
    games = [g for r in service.load(tid).state.rounds for g in r.games if g is not None]
    assert len(games) == 2 and service.store.game_links(games).keys() == set(games)
    redis, layout = store.redis, store.keys
    partition = layout.partition_of(tid)
    assert redis.zscore(over_key(layout, partition), tid) is not None

    redis.zrem(over_key(layout, partition), tid)  # as if it finished before the index
    archiver = Archiver(store, store.archive, after_seconds=0)
    assert archiver.run_once().tournaments == []  # no candidate
    assert archiver.tournaments.backfill() == 1  # hearts archive backfill puts it back

    done = Archiver(store, store.archive, after_seconds=0).run_once()

    assert done.tournaments == [tid]
    assert not redis.exists(layout.tournament_key(tid))
    assert not redis.exists(games_key(layout, tid))
    assert service.store.game_links(games) == {}  # the links pruned with it
    assert redis.zscore(over_key(layout, partition), tid) is None
    assert redis.hexists(archived_key(layout, partition), tid)
    after = _reads(client, tid)
    assert after == before  # every read answers from the archive
    again = Archiver(store, store.archive, after_seconds=0).run_once()
    assert again.tournaments == []


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_cancelled_tournament_waits_for_its_tables_to_end(app, client, tmp_path) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    store = service.games.store
    attach(store, f"file://{tmp_path / 'archive'}")
    keys = [register(client, f"Gone{i}") for i in range(4)]
    tid = create(client, keys[0], name="Gone", rounds=1, boards=1, min_players=4)["id"]
    for k in keys:  # people: the table waits for them
        client.post(f"{API}/tournaments/{tid}/entries", json={}, headers=auth(k))
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    (game,) = service.load(tid).state.rounds[0].games
    answer = client.post(f"{API}/tournaments/{tid}/cancel", json={}, headers=auth(keys[0]))
    assert answer.status_code == 200, answer.get_json()

    waiting = Archiver(store, store.archive, after_seconds=0).run_once()
    assert waiting.tournaments == []  # its table is in play: its boards stay secret
    assert service.store.game_link(game) is not None

    # The table's game ends (its seats left to bots), and the next pass moves the tournament.
    for seat in range(4):
        service._stand_in(game, seat, "random")
    settle(app)
    done = Archiver(store, store.archive, after_seconds=0).run_once()
    assert done.tournaments == [tid]
    assert service.store.game_link(game) is None
    assert client.get(f"{API}/tournaments/{tid}").get_json()["status"] == "cancelled"
