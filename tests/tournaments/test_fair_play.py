"""A player absent from their seat: a house bot stands in, they score last on those boards, and
a second missed round withdraws them, so nobody holds up a clockless table."""

from __future__ import annotations

import time

import pytest

from service.app.tournaments import UNPLAYED, TournamentService
from tests.background import settle
from tests.tournaments.helpers import API, auth, create, register


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_an_absent_player_is_stood_in_for_scores_last_and_is_withdrawn_at_two(app, client) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    service.miss_after = 0.0  # a table waits on nobody here
    keys = [register(client, f"Absent{i}") for i in range(4)]
    tid = create(client, keys[0], name="Absent", rounds=3, boards=1, min_players=4)["id"]
    for i, k in enumerate(keys):  # three bot accounts and one person who never comes
        body = {"stand_in": "random"} if i else {}
        client.post(f"{API}/tournaments/{tid}/entries", json=body, headers=auth(k))
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    absent = service.load(tid).state.entrants[0].player_id

    deadline = time.monotonic() + 120
    while service.load(tid).state.status.value == "running":
        assert time.monotonic() < deadline, "the absent player held the table up"
        service.sweep()  # what hearts serve's sweep thread does every 5 s
        settle(app)

    state = service.load(tid).state
    kinds = [(type(e).__name__, getattr(e, "round", None)) for e, _ in service.load(tid).entries]
    assert ("PlayerMissed", 1) in kinds and ("PlayerMissed", 2) in kinds
    assert kinds.index(("PlayerMissed", 2)) + 1 == kinds.index(("PlayerWithdrew", None))
    assert state.entrant(absent).withdrawn_after == 2 and state.entrant(absent).missed == (1, 2)
    assert all(absent not in table for table in state.rounds[2].tables)  # a house bot's seat
    mine = [r.score for r in state.results() if r.player == absent]
    assert mine == [UNPLAYED, UNPLAYED]  # last on the boards the bot played for them
    rows = client.get(f"{API}/tournaments/{tid}/standings").get_json()["standings"]
    assert rows[-1]["player"] == absent and rows[-1]["boards"] == 2
    assert all(r["place"] < rows[-1]["place"] for r in rows[:-1])


def _four_entered(
    app, client, name: str, entry: dict[str, str]
) -> tuple[TournamentService, list[str], str]:
    """A tournament of one table of one board, four players entered with ``entry``, not
    started; nobody is counted missing (an hour's grace)."""
    service: TournamentService = app.extensions["hearts.tournaments"]
    service.miss_after = 3600.0
    keys = [register(client, f"{name}{i}") for i in range(4)]
    tid = create(client, keys[0], name=name, rounds=1, boards=1, min_players=4)["id"]
    for k in keys:
        client.post(f"{API}/tournaments/{tid}/entries", json=entry, headers=auth(k))
    return service, keys, tid


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_a_player_at_their_seat_within_the_grace_misses_nothing(app, client) -> None:
    service, keys, tid = _four_entered(app, client, "Here", {})
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    assert service.fair_play(tid) == []
    (game,) = service.load(tid).state.rounds[0].games
    assert all(seat.bot is None for seat in service.games.snapshot(game).state.state.seats)


@pytest.mark.unlimited("registers 4 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_the_sweep_hands_a_table_waiting_on_bots_back_to_them(app, client) -> None:
    # A table of stand-ins whose place in the bots' queue was lost (a Redis failover that
    # dropped the write, say): the tournament sweep, not only the next start-up, queues it again.
    service, keys, tid = _four_entered(app, client, "Lost", {"stand_in": "random"})
    settle(app, stop=True)  # no runner: what is queued stays queued
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    (game,) = service.load(tid).state.rounds[0].games
    queue = service.games.background.queue
    assert queue.redis.zscore(queue.key, game) is not None
    queue.done(game)  # lost
    service.games._handed_over.clear()  # as in another worker, which never handed it over
    assert service.fair_play(tid) == []
    assert queue.redis.zscore(queue.key, game) is not None
