"""An arena through the HTTP API (in process): bot accounts paired as they wait, every game
recorded once, the clock and its grace; a crash between pairing and the game's creation.

(The Done-when test, a real ``hearts serve`` SIGKILLed in the middle of an arena, is
tests/tournaments/test_arena_serve.py.)"""

from __future__ import annotations

import copy
import time
from datetime import UTC, datetime, timedelta
from itertools import takewhile

import pytest
from hearts_client.verify_tournament import verify_tournament

from domain.tournament.arena_events import ArenaGameRecorded, ArenaPaired
from service.app.projector import Projector, rebuild
from service.app.tournaments import TournamentService
from service.store.read_models import ProjectionStore
from service.store.tournament_models import TournamentModels
from tests.projections.helpers import drain
from tests.tournaments.arena_checks import check_arena_export
from tests.tournaments.helpers import API, auth, register


def _arena(client, n: int, **body) -> tuple[str, list[str]]:
    keys = [register(client, f"Arena{i:02d}") for i in range(n)]
    settings = dict(
        name="Quick arena",
        format="arena",
        duration_seconds=30,
        grace_seconds=60,
        hands=1,
        min_players=4,
        max_players=n,
    )
    settings.update(body)
    answer = client.post(f"{API}/tournaments", json=settings, headers=auth(keys[0]))
    assert answer.status_code == 201, answer.get_json()
    tid = answer.get_json()["id"]
    for key in keys:
        entered = client.post(
            f"{API}/tournaments/{tid}/entries", json={"stand_in": "random"}, headers=auth(key)
        )
        assert entered.status_code == 200, entered.get_json()
    return tid, keys


def _later(seconds: float):
    def now() -> str:
        moment = datetime.now(UTC) + timedelta(seconds=seconds)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    return now


def _until(client, tid: str, done, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"{API}/tournaments/{tid}").get_json()  # a read takes any step due
        if done(body):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


@pytest.mark.unlimited("registers 8 players whose bots play an arena")
@pytest.mark.parametrize("redis_client", ["real"], indirect=True)
def test_an_arena_pairs_as_players_wait_and_counts_each_game_once(app, client, monkeypatch):
    service: TournamentService = app.extensions["hearts.tournaments"]
    tid, keys = _arena(client, 8)
    started = client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    assert started.status_code == 200, started.get_json()
    body = started.get_json()
    # The bots may end a game, and its players be paired again, before the answer is read.
    assert body["status"] == "running" and body["arena"]["games_paired"] >= 2
    # The 8 who waited were paired at once: two games, before any game ended.
    events = [event for event, _ in service.load(tid).entries]
    first = takewhile(lambda event: not isinstance(event, ArenaGameRecorded), events)
    paired = [event for event in first if isinstance(event, ArenaPaired)]
    assert len(paired) == 2 and len({event.at for event in paired}) == 1
    assert len({player for event in paired for player in event.seats}) == 8

    _until(client, tid, lambda b: b["arena"]["games_paired"] >= 8)
    # The clock ends (30 s later): nobody is paired any more, games in play finish in the grace.
    monkeypatch.setattr(service.games.store, "_now", _later(31))
    finished = _until(client, tid, lambda b: b["status"] == "finished")
    assert finished["arena"]["games_in_play"] == 0

    export = client.get(f"{API}/tournaments/{tid}/export").get_json()
    games = check_arena_export(export)
    standings = client.get(f"{API}/tournaments/{tid}/standings").get_json()
    assert standings["frozen"] is True
    assert standings["games_counted"] == len(games) >= 8
    assert {r["player"]: r["points"] for r in standings["standings"]} == export_points(export)
    # Its standings are a read model too: the projector's fold is what is served, and a
    # rebuild from the logs makes it equal.
    projections = ProjectionStore(service.games.store)
    drain(Projector(projections, blocking=False))
    live = projections.current_generation()
    doc = TournamentModels(projections).read(live, tid)
    assert doc["version"] == service.load(tid).version and doc["status"] == "finished"
    assert doc["standings"] == standings["standings"]
    assert doc["games_counted"] == standings["games_counted"]
    assert client.get(f"{API}/tournaments/{tid}/standings").get_json() == standings
    rebuilt = rebuild(projections, grace_seconds=0).generation
    assert TournamentModels(projections).read(rebuilt, tid) == doc
    pairings = client.get(f"{API}/tournaments/{tid}/pairings").get_json()
    assert [g["game_id"] for g in pairings["games"]] == list(games)
    # An arena's games are each on their own deals: anyone reads them, like any game.
    assert client.get(f"{API}/games/{next(iter(games))}").status_code == 200
    _hearts_verify_checks(export)


def _hearts_verify_checks(export: dict) -> None:
    """hearts-verify passes the export, and fails it tampered with in each of its checks."""
    findings = verify_tournament(export)
    assert [f.check for f in findings] == ["games", "pairing", "results", "standings"]
    assert all(f.ok for f in findings), [str(f) for f in findings if not f.ok]

    def failed(document: dict) -> set[str]:
        return {f.check for f in verify_tournament(document) if not f.ok}

    points = copy.deepcopy(export)
    points["standings"][0]["points"] += 2
    assert failed(points) == {"standings"}
    score = copy.deepcopy(export)
    recorded = next(e for e in score["log"] if e["type"] == "ArenaGameRecorded")
    recorded["data"]["scores"][0] += 1
    assert "results" in failed(score)
    twice = copy.deepcopy(export)
    paired = [e for e in twice["log"] if e["type"] == "ArenaPaired"]
    paired[1]["data"]["seats"][0] = paired[0]["data"]["seats"][0]  # one player, two tables
    assert "pairing" in failed(twice)


def export_points(export: dict) -> dict[str, int]:
    return {row["player"]: row["points"] for row in export["standings"]}


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_crash_between_pairing_and_creating_the_game_creates_that_game_once(
    app, client, monkeypatch
):
    service: TournamentService = app.extensions["hearts.tournaments"]
    tid, keys = _arena(client, 4)
    real_create = service.games.create
    calls: list[str] = []

    def die_once(game_id, **kw):
        calls.append(game_id)
        if len(calls) == 1:
            raise RuntimeError("killed after the pairing's append, before the game existed")
        return real_create(game_id, **kw)

    monkeypatch.setattr(service.games, "create", die_once)
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    arena = service.load(tid).state.arena
    assert arena is not None and len(arena.games) == 1  # paired, its game not made
    paired = arena.games[0].game_id
    pairings = client.get(f"{API}/tournaments/{tid}/pairings").get_json()  # a read
    assert [g["game_id"] for g in pairings["games"]] == [paired]
    assert calls[:2] == [paired, paired]  # made again under the id the log holds
    assert service.games.snapshot(paired).version > 0


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_crash_before_the_stand_ins_took_their_seats_hands_them_over_later(
    app, client, monkeypatch
):
    service: TournamentService = app.extensions["hearts.tournaments"]
    tid, keys = _arena(client, 4)
    real = service._stand_in
    crashed: list[int] = []

    def die_at_the_first(game_id, seat, bot):
        if not crashed:
            crashed.append(seat)
            raise RuntimeError("killed after the game was created, before its stand-ins")
        return real(game_id, seat, bot)

    monkeypatch.setattr(service, "_stand_in", die_at_the_first)
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    first = service.load(tid).state.arena.games[0].game_id
    seats = service.games.snapshot(first).state.state.seats
    assert crashed and all(s.bot is None for s in seats)  # nobody plays: it would wait forever
    client.get(f"{API}/tournaments/{tid}")  # a read takes the step again
    seats = service.games.snapshot(first).state.state.seats
    assert all(s.bot == "random" for s in seats)
    _until(client, tid, lambda b: b["arena"]["games_paired"] >= 2)  # played out, paired again


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_game_end_whose_step_was_lost_is_recorded_once_by_the_sweep(app, client):
    service: TournamentService = app.extensions["hearts.tournaments"]
    service.games.on_appended.remove(service.game_appended)  # every game end's step lost
    tid, keys = _arena(client, 4)
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    first = service.load(tid).state.arena.games[0].game_id
    deadline = time.monotonic() + 60
    while service.games.snapshot(first).state.state.phase.name not in ("FINISHED", "EXPIRED"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert not service.load(tid).state.arena.games[0].recorded
    for _ in range(3):  # the sweep, run again and again: one record, one new pairing
        service.sweep()
    arena = service.load(tid).state.arena
    recorded = [e for e, _ in service.load(tid).entries if type(e).__name__ == "ArenaGameRecorded"]
    assert [e.game_id for e in recorded][:1] == [first]
    assert len({e.game for e in recorded}) == len(recorded)
    assert len(arena.games) >= 2


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_an_arena_is_refused_without_its_clock_or_rated_without_a_turn_clock(client):
    key = register(client, "Organiser")
    base = {"name": "A", "format": "arena", "hands": 1}
    missing = client.post(f"{API}/tournaments", json=base, headers=auth(key))
    assert missing.status_code == 422, missing.get_json()
    assert "duration_seconds" in missing.get_json()["detail"]
    body = {**base, "duration_seconds": 60, "rated": True}
    unclocked = client.post(f"{API}/tournaments", json=body, headers=auth(key))
    assert unclocked.status_code == 422 and "clock" in unclocked.get_json()["detail"]
    body["rules"] = {"time_control": "quick"}
    rated = client.post(f"{API}/tournaments", json=body, headers=auth(key))
    assert rated.status_code == 201, rated.get_json()
    assert rated.get_json()["arena"]["rated"] is True
    assert rated.get_json()["rules"]["seconds_per_decision"] == 15
    too_long = client.post(f"{API}/tournaments", json={**base, "hands": 5}, headers=auth(key))
    assert too_long.status_code == 422
    # A duplicate still needs its rounds and boards (optional in the schema for an arena).
    duplicate = client.post(
        f"{API}/tournaments", json={"name": "D", "boards": 2}, headers=auth(key)
    )
    assert duplicate.status_code == 422 and "rounds" in duplicate.get_json()["detail"]
