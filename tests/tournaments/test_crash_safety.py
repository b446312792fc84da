"""Progress decided from the log: a step cut short by a crash (here: an exception where a
SIGKILL could land) is taken again by the next read, and nothing happens twice."""

from __future__ import annotations

import threading

import pytest

from service.app.tournaments import TournamentService
from tests.background import settle
from tests.tournaments.helpers import API, auth, create, play_out, register


def _events(service: TournamentService, tid: str, kind: str) -> list:
    return [e for e, _ in service.load(tid).entries if type(e).__name__ == kind]


def _entered(client, n: int, stand_in: str | None = "random") -> tuple[str, list[str]]:
    keys = [register(client, f"Crash{i}") for i in range(n)]
    tid = create(client, keys[0], name="Crash", rounds=2, boards=1, min_players=n)["id"]
    for k in keys:
        body = {"stand_in": stand_in}
        assert (
            client.post(f"{API}/tournaments/{tid}/entries", json=body, headers=auth(k)).status_code
            == 200
        )
    return tid, keys


@pytest.mark.unlimited("registers 8 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_crash_after_a_table_game_is_created_links_that_game_not_another(
    app, client, monkeypatch
) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    tid, keys = _entered(client, 8, stand_in=None)  # people: the games wait for them
    real_create = service.games.create
    created: list[str] = []

    def create_then_die(game_id, **kw):
        outcome = real_create(game_id, **kw)
        created.append(game_id)
        if len(created) == 1:
            raise RuntimeError("killed after the game was created, before it was linked")
        return outcome

    monkeypatch.setattr(service.games, "create", create_then_die)
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    state = service.load(tid).state
    assert state.current is not None and state.current.games == (None, None)  # nothing linked
    monkeypatch.setattr(service.games, "create", real_create)

    pairings = client.get(f"{API}/tournaments/{tid}/pairings").get_json()["rounds"]  # a read
    games = [t["game_id"] for t in pairings[0]["tables"]]
    assert games[0] == created[0] and None not in games  # the game made before the crash
    assert len(_events(service, tid, "TableGameLinked")) == 2
    assert len(_events(service, tid, "RoundStarted")) == 1


@pytest.mark.unlimited("registers 8 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_crash_before_the_round_ends_ends_it_once_and_pairs_nobody_twice(
    app, client, monkeypatch
) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    tid, keys = _entered(client, 8)
    real_execute = service._execute
    ends: list[int] = []

    def die_at_the_first_end(tournament_id, command):
        if type(command).__name__ == "EndRound" and not ends:
            ends.append(command.round)
            raise RuntimeError("killed before the round's end was appended")
        return real_execute(tournament_id, command)

    monkeypatch.setattr(service, "_execute", die_at_the_first_end)
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    state = service.load(tid).state
    games = [g for g in state.rounds[0].games if g is not None]
    settle(app, games)
    finished = play_out(app, client, tid)
    assert ends == [1]  # the crash happened, and a later step ended the round
    assert finished["status"] == "finished"
    assert [e.round for e in _events(service, tid, "RoundEnded")] == [1, 2]
    assert [e.round for e in _events(service, tid, "RoundStarted")] == [1, 2]
    assert len(_events(service, tid, "TableResultRecorded")) == 4
    assert len(_events(service, tid, "TableGameLinked")) == 4


@pytest.mark.unlimited("registers 8 players")
@pytest.mark.parametrize("redis_client", ["real"], indirect=True)
def test_progress_taken_by_many_at_once_does_each_step_once(app, client) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    tid, keys = _entered(client, 8)
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            service.advance(tid)

    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        finished = play_out(app, client, tid)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert finished["status"] == "finished"
    assert [e.round for e in _events(service, tid, "RoundStarted")] == [1, 2]
    assert len(_events(service, tid, "TableGameLinked")) == 4
    assert len(_events(service, tid, "TableResultRecorded")) == 4
    linked = service.store.redis.hlen(service.store.keys.tournament_games_key())
    assert linked == 4  # no table game made twice under another id


@pytest.mark.unlimited("registers 8 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_the_sweep_moves_on_a_tournament_whose_game_ends_were_lost(app, client) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    # As if every process that appended a game's end was killed before its progress step.
    service.games.on_appended.remove(service.game_appended)
    tid, keys = _entered(client, 8)
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    games = [g for g in service.load(tid).state.rounds[0].games if g is not None]
    settle(app, games)
    assert not service.load(tid).state.rounds[0].ended  # nobody took the step
    assert service.store.all_running() == [tid]
    assert service.sweep() == 1
    state = service.load(tid).state
    assert state.rounds[0].ended and len(state.rounds) == 2
