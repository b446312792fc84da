"""Turn clocks over HTTP and the timekeeper (issue 19), on a time source the test moves: a
deadline passing makes the timeout bot move, a move racing the timekeeper leaves one of the two,
timeouts in a row mark a seat away and its token brings it back, a timekeeper that was down
catches up without repeating itself, and two timekeepers on a cluster share the partitions."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from domain.clock import iso, moment
from service.api.factory import create_app
from service.app.timekeeper import Timekeeper, time_out
from service.settings import Settings
from tests.api.helpers import Hearts, auth

T0 = 1_900_000_000.0
QUICK = {"time_control": "quick", "pass_cycle": "hold_always"}  # 15 s + 60 s reserve


class FakeTime:
    """The store's clock (every append's time) and the timekeeper's, moved by the test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *services: Any) -> None:
        self.now = T0
        for service in services:
            monkeypatch.setattr(service.store, "_now", lambda: iso(self.now))

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def moment(self) -> datetime:
        return datetime.fromtimestamp(self.now, UTC)


def start(hearts: Hearts, rules: dict[str, Any] = QUICK) -> tuple[str, str, dict[str, Any]]:
    """A game of one person (seat 0) and three bots, once the person must act."""
    game = hearts.create(
        [None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}], rules=rules
    )
    seat, token = hearts.join(game["id"], "ann", 0)
    view = hearts.wait_for(game["id"], lambda v: 0 in v["awaiting"], token)
    return game["id"], token, view


def events(client, game_id: str, after: int = 0) -> list[dict[str, Any]]:
    return client.get(f"/api/v1/games/{game_id}/events?after={after}").get_json()["events"]


def race(
    hearts: Hearts, service: Any, game_id: str, token: str, card: str, now: float
) -> dict[str, Any]:
    """The seat's play and the timekeeper's timeout, let go at once; what each answered."""
    go = threading.Barrier(2)
    answers: dict[str, Any] = {}

    def play() -> None:
        go.wait()
        path = f"/api/v1/games/{game_id}/play"
        answers["play"] = hearts.post(path, {"card": card}, token).status_code

    def keep() -> None:
        go.wait()
        answers["timeout"] = time_out(service, game_id, iso(now))

    threads = [threading.Thread(target=play), threading.Thread(target=keep)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_the_view_carries_each_seats_deadline_and_reserve(hearts, service, monkeypatch):
    clock = FakeTime(monkeypatch, service)
    game_id, token, view = start(hearts)
    seat = view["clock"]["seats"][0]
    assert view["clock"]["seconds_per_decision"] == 15
    assert seat["reserve_seconds"] == 60
    assert moment(seat["deadline"]) == clock.now + 75
    assert [s["deadline"] for s in view["clock"]["seats"][1:]] == [None] * 3  # bots: no clock
    assert hearts.view(game_id)["clock"] == view["clock"]  # public: anyone may draw it


def test_a_game_without_a_clock_shows_none(hearts):
    game = hearts.create([None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}])
    assert hearts.view(game["id"])["clock"] is None


def test_a_deadline_passing_makes_the_timeout_bot_move_for_the_seat(
    hearts, client, service, monkeypatch
):
    clock = FakeTime(monkeypatch, service)
    game_id, token, view = start(hearts, {**QUICK, "score_limit": 1})  # one hand
    keeper = Timekeeper(service, clock=clock.moment)
    clock.advance(74.9)
    assert keeper.tick() == []
    clock.advance(0.2)
    assert keeper.tick() == [(game_id, 0)]
    logged = events(client, game_id, view["version"])
    assert logged[0]["type"] == "SeatTimedOut"
    assert logged[0]["payload"] == {"seat": 0, "at": iso(clock.now)}
    assert logged[0]["time"] == iso(clock.now)
    assert (logged[1]["type"], logged[1]["payload"]["seat"]) == ("CardPlayed", 0)
    assert logged[1]["command_id"] == logged[0]["command_id"]  # one append
    # The hand's record says which decision the clock gave to the bot (the replay marks it).
    record = client.get(f"/api/v1/games/{game_id}/hands/1").get_json()
    assert record["timeouts"] == [
        {"seat": 0, "seq": logged[0]["seq"], "decision": "play", "trick": 1}
    ]
    seat = hearts.view(game_id, token)["clock"]["seats"][0]
    assert (seat["timeouts"], seat["reserve_seconds"], seat["away"]) == (1, 0, False)
    assert client.get(f"/api/v1/games/{game_id}/audit").get_json()["ok"] is True
    # Played out, exported and imported: the copy has the timeout too, and audits clean.
    hearts.play_out(game_id, {0: token})
    export = client.get(f"/api/v1/games/{game_id}/export").get_json()
    copied = client.post("/api/v1/games/import", json=export)
    assert copied.status_code == 201, copied.get_json()
    copy = copied.get_json()["id"]
    assert "SeatTimedOut" in [e["type"] for e in events(client, copy)]
    assert client.get(f"/api/v1/games/{copy}/audit").get_json()["ok"] is True


def test_a_move_that_races_the_timekeeper_leaves_exactly_one_of_the_two(
    hearts, client, service, monkeypatch
):
    clock = FakeTime(monkeypatch, service)
    for _ in range(4):
        game_id, token, view = start(hearts)
        clock.advance(76)
        answers = race(hearts, service, game_id, token, view["legal_cards"][0], clock.now)
        decision = events(client, game_id, view["version"])
        seat0 = [e for e in decision if e["payload"].get("seat") == 0][:2]
        timed_out = seat0[0]["type"] == "SeatTimedOut"
        assert [e["type"] for e in decision].count("SeatTimedOut") == int(timed_out)
        if timed_out:  # the timekeeper won: the bot's move stands for this decision
            assert answers["timeout"] == 0, answers
            assert seat0[1]["type"] == "CardPlayed"
            assert seat0[1]["command_id"] == seat0[0]["command_id"]
            # The person's card was refused (not their turn), or played at their next turn.
            assert answers["play"] in (200, 409), answers
        else:  # the play won: the timeout is moot
            assert answers == {"timeout": None, "play": 200}, answers
            assert seat0[0]["type"] == "CardPlayed"
        assert client.get(f"/api/v1/games/{game_id}/audit").get_json()["ok"] is True


def test_three_timeouts_mark_the_seat_away_and_its_token_brings_it_back(
    hearts, client, service, monkeypatch
):
    clock = FakeTime(monkeypatch, service)
    game_id, token, view = start(hearts, {**QUICK, "reserve_seconds": 0})
    keeper = Timekeeper(service, clock=clock.moment)
    for n in (1, 2, 3):
        view = hearts.wait_for(game_id, lambda v: 0 in v["awaiting"], token)
        assert view["clock"]["seats"][0]["timeouts_in_a_row"] == n - 1
        if n == 3:
            # Once away, bots hold every seat: stop the background runner, or it would play
            # the game to its end before the player comes back.
            service.background.stop()
        clock.advance(15)
        assert keeper.tick() == [(game_id, 0)]
    view = hearts.view(game_id, token)
    assert view["seats"][0]["bot"] == "heuristic"
    assert view["clock"]["seats"][0]["away"] is True
    assert view["clock"]["seats"][0]["deadline"] is None  # its bot plays: no clock runs
    # I'm back, with the seat's own token.
    other = client.post(f"/api/v1/games/{game_id}/seats/1/back", json={}, headers=auth(token))
    assert other.status_code == 403
    back = client.post(f"/api/v1/games/{game_id}/seats/0/back", json={}, headers=auth(token))
    assert back.status_code == 200, back.get_json()
    seat = back.get_json()["view"]["clock"]["seats"][0]
    assert (seat["away"], seat["timeouts_in_a_row"], seat["timeouts"]) == (False, 0, 3)
    assert back.get_json()["view"]["seats"][0]["bot"] is None
    again = client.post(f"/api/v1/games/{game_id}/seats/0/back", json={}, headers=auth(token))
    assert again.status_code == 409
    assert again.get_json()["type"].endswith("/not-away")
    assert client.get(f"/api/v1/games/{game_id}/audit").get_json()["ok"] is True


def test_a_timekeeper_down_and_up_again_misses_nothing_and_repeats_nothing(
    redis_client, settings, hearts, client, service, monkeypatch
):
    """Killed: the first timekeeper never looks again. Its successor (another process: its own
    app on the same Redis) handles every deadline that passed meanwhile, once."""
    other = create_app(settings, redis=redis_client)
    try:
        clock = FakeTime(monkeypatch, service, other.extensions["hearts"])
        games = [start(hearts)[0] for _ in range(5)]
        first = Timekeeper(service, clock=clock.moment)
        assert first.tick() == []
        restart = 30.0
        clock.advance(75 + restart)  # every deadline passed while no timekeeper ran
        successor = Timekeeper(other.extensions["hearts"], clock=clock.moment)
        assert sorted(successor.tick()) == sorted((g, 0) for g in games)
        # Both look again, at once: nothing is due twice.
        found: list[Any] = []
        both = [
            threading.Thread(target=lambda k=k: found.extend(k.tick())) for k in (first, successor)
        ]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join()
        assert found == []
        for game_id in games:
            logged = events(client, game_id)
            timeouts = [e for e in logged if e["type"] == "SeatTimedOut"]
            assert len(timeouts) == 1
            assert moment(timeouts[0]["time"]) <= T0 + 75 + restart
            assert client.get(f"/api/v1/games/{game_id}/audit").get_json()["ok"] is True
    finally:
        other.extensions["hearts.bots_stop"]()


@pytest.mark.parametrize("redis_client", ["cluster"], indirect=True)
def test_two_timekeepers_on_a_cluster_share_the_partitions_and_append_each_timeout_once(
    redis_client, settings, hearts, client, service, monkeypatch
):
    other = create_app(settings, redis=redis_client)
    try:
        clock = FakeTime(monkeypatch, service, other.extensions["hearts"])
        keepers = [
            Timekeeper(s, clock=clock.moment, lease_ms=60_000, owner=f"keeper-{i}")
            for i, s in enumerate((service, other.extensions["hearts"]))
        ]
        for keeper in keepers + keepers:  # the second round: each sees the other
            keeper.tick()
        owned = [k.leases.owned for k in keepers]
        assert owned[0] and owned[1] and not owned[0] & owned[1]
        assert owned[0] | owned[1] == set(range(service.store.partitions))
        games = [start(hearts)[0] for _ in range(6)]
        clock.advance(76)
        found: list[Any] = []
        both = [threading.Thread(target=lambda k=k: found.extend(k.tick())) for k in keepers]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join()
        assert sorted(found) == sorted((g, 0) for g in games)
        for game_id in games:
            kinds = [e["type"] for e in events(client, game_id)]
            assert kinds.count("SeatTimedOut") == 1
    finally:
        for keeper in keepers:
            keeper.leases.release_all()
        other.extensions["hearts.bots_stop"]()


@pytest.mark.parametrize("redis_client", ["real"], indirect=True)
def test_bots_standing_in_for_everyone_play_at_a_persons_pace(redis_client, key_prefix):
    # No other app on this prefix (the hearts fixture's would drive the same queue on its own poll).
    # A poll far longer than the pace: the runner must sleep until the next paced move is due,
    # not until its next look at the queue (it once moved a paced game once a poll). Judged by
    # the moves' own times, not by how many fit in a window: a busy machine may be slow to move,
    # never quick (a fixed 1.6 s window once saw one move on a loaded CI machine).
    settings = Settings(key_prefix=key_prefix, bot_away_pace=0.5, bot_poll_seconds=60)
    app = create_app(settings, redis=redis_client)
    try:
        paced = Hearts(app.test_client())
        game_id, token, view = start(paced)
        # The person hands the seat over: every person's seat is now a bot's.
        handed = paced.post(f"/api/v1/games/{game_id}/seats/0/bot", {"bot": "random"}, token)
        assert handed.status_code == 200
        version = handed.get_json()["version"]
        moves = paced_moves(app.test_client(), game_id, version, count=3, within=30)
        # Three moves long before two 60 s polls: the runner slept until each move was due.
        assert len(moves) >= 3, moves
        # Each a pace after the one before: not a game in a second.
        gaps = [later - earlier for earlier, later in zip(moves, moves[1:], strict=False)]
        assert all(gap >= 0.45 for gap in gaps), gaps
        # "I'm back" is not raced away by bot moves.
        back = app.test_client().post(
            f"/api/v1/games/{game_id}/seats/0/back", json={}, headers=auth(token)
        )
        assert back.status_code == 200, back.get_json()
    finally:
        app.extensions["hearts.bots_stop"]()


def paced_moves(client, game_id: str, after: int, count: int, within: float) -> list[float]:
    """The times (epoch seconds) of the bots' moves after ``after``, once there are ``count``
    of them or ``within`` seconds have passed."""
    deadline = time.monotonic() + within
    while True:
        moved = [
            moment(e["time"])
            for e in events(client, game_id, after)
            if e["type"] in ("CardsPassed", "CardPlayed")
        ]
        if len(moved) >= count or time.monotonic() > deadline:
            return moved
        time.sleep(0.05)


def test_a_game_with_no_person_present_is_paced_clock_or_not():
    from domain.decider import fold
    from domain.events import GameCreated, PlayerJoined, SeatControlChanged
    from domain.rules import RuleOptions
    from service.app.bot_runner import table_pace

    clocked = RuleOptions.from_dict({"time_control": "quick"})
    created = GameCreated("g", clocked, (None, "random", "random", "random"))
    present = fold([created, PlayerJoined(0, "ann")])
    away = fold([SeatControlChanged(0, "heuristic")], present)
    assert table_pace(present, 2.0) == 0
    assert table_pace(away, 2.0) == 2.0
    bots_only = fold([GameCreated("g", clocked, ("random",) * 4)])
    assert table_pace(bots_only, 2.0) == 0
    unclocked = fold([GameCreated("g", RuleOptions(), (None, "random", "random", "random"))])
    unclocked = fold([PlayerJoined(0, "ann"), SeatControlChanged(0, "random")], unclocked)
    # Issue 42: a clockless game whose one person handed over is paced too, not full speed.
    assert table_pace(unclocked, 2.0) == 2.0
