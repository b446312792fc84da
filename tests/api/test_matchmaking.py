"""Matchmaking and the player's own stream (issue 20): seekers are paired into games with fair
seating, exactly once even with two workers pairing at the same moment; seeks expire, are
cancelled, are filled with bots; a player's stream says when its games start and its turns
come."""

from __future__ import annotations

import threading
import time
import uuid
import zlib
from typing import Any

import pytest

from bots.levels import DEFAULT_LEVEL
from service.api.factory import create_app
from service.settings import Settings
from tests.api.helpers import auth


def address_of(player: str) -> dict[str, str]:
    """A client address of the player's own (from its name or key), as seekers each at their
    own computer have: the default limits (registrations, seeks and requests with a key, per
    address) hold for each, and none is met."""
    n = zlib.crc32(player.encode())
    return {"REMOTE_ADDR": f"10.{n % 250}.{n // 250 % 250}.{n // 62500 % 250}"}


def register(client, name: str | None = None) -> str:
    name = name or f"p{uuid.uuid4().hex[:10]}"
    response = client.post("/api/v1/players", json={"name": name}, environ_base=address_of(name))
    assert response.status_code == 201, response.get_json()
    return response.get_json()["key"]


def seek(client, key: str, **body: Any):
    return client.post("/api/v1/seeks", json=body, headers=auth(key), environ_base=address_of(key))


def status(client, key: str, seek_id: str) -> dict[str, Any]:
    response = client.get(
        f"/api/v1/seeks/{seek_id}", headers=auth(key), environ_base=address_of(key)
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_four_seekers_are_seated_in_one_game_each_in_a_seat_of_its_own(client, hearts):
    keys = [register(client) for _ in range(4)]
    seeks = []
    for key in keys:
        response = seek(client, key)
        assert response.status_code == 201, response.get_json()
        assert response.headers["Location"].endswith(response.get_json()["id"])
        seeks.append(response.get_json())
    assert [s["state"] for s in seeks[:3]] == ["waiting"] * 3
    assert seeks[3]["state"] == "matched"  # the fourth completed the table
    found = [status(client, key, s["id"]) for key, s in zip(keys, seeks, strict=True)]
    assert len({s["game_id"] for s in found}) == 1
    assert sorted(s["seat"] for s in found) == [0, 1, 2, 3]
    game_id = found[0]["game_id"]
    view = hearts.view(game_id)
    assert view["phase"] != "waiting"  # every seat taken: dealt
    me = client.get("/api/v1/players/me", headers=auth(keys[0])).get_json()
    assert view["seats"][found[0]["seat"]]["player_id"] == me["id"]
    # Each player takes its seat's token with its key and plays.
    resumed = client.post(
        f"/api/v1/games/{game_id}/seats/{found[0]['seat']}/resume", json={}, headers=auth(keys[0])
    )
    assert resumed.status_code == 200
    assert resumed.get_json()["view"]["hand"]


def test_one_seek_per_kind_of_table_and_another_players_seek_is_not_found(client):
    key, other = register(client), register(client)
    first = seek(client, key, players=3).get_json()
    again = seek(client, key, players=3)
    assert again.status_code == 409 and again.get_json()["code"] == "already-seeking"
    assert seek(client, key, players=5).status_code == 201  # another kind of table
    hidden = client.get(f"/api/v1/seeks/{first['id']}", headers=auth(other))
    assert hidden.status_code == 404 and hidden.get_json()["code"] == "seek-not-found"
    assert client.get("/api/v1/seeks/sk_../../x", headers=auth(key)).status_code == 404
    assert client.get(f"/api/v1/seeks/{first['id']}").status_code == 401


def test_a_player_lists_its_waiting_seeks_and_only_its_own(client):
    # A page reloaded (or a client restarted) finds its seek without having kept the id.
    key, other = register(client), register(client)

    def listed(k: str) -> list[dict[str, Any]]:
        answer = client.get("/api/v1/seeks", headers=auth(k), environ_base=address_of(k))
        assert answer.status_code == 200 and answer.headers["Cache-Control"] == "no-store"
        return answer.get_json()["seeks"]

    assert listed(key) == []
    three = seek(client, key, players=3, fill_with_bots_after=600).get_json()
    five = seek(client, key, players=5).get_json()
    seek(client, other, players=3)
    assert [s["id"] for s in listed(key)] == [three["id"], five["id"]]  # oldest first
    assert listed(key)[0] == status(client, key, three["id"])
    client.delete(f"/api/v1/seeks/{three['id']}", headers=auth(key), environ_base=address_of(key))
    assert [s["id"] for s in listed(key)] == [five["id"]]  # over: not listed
    assert [s["players"] for s in listed(other)] == [3]
    refused = client.get("/api/v1/seeks")
    assert refused.status_code == 401 and refused.mimetype == "application/problem+json"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"players": 7}, "validation-error"),
        ({"preset": "chess"}, "validation-error"),
        ({"time_control": "bullet"}, "validation-error"),
        ({"rating_range": {"min": 5, "max": -5}}, "invalid-seek"),
        ({"fill_with_bots_after": 0}, "validation-error"),
        ({"players": 3, "preset": "standard", "extra": 1}, "validation-error"),
    ],
)
def test_a_seek_for_no_table_is_refused(client, body, code):
    response = seek(client, register(client), **body)
    assert response.status_code == 422 and response.get_json()["code"] == code


def test_rating_ranges_are_mutual(client, service, monkeypatch):
    matchmaker = client.application.extensions["hearts.matchmaker"]
    keys = [register(client) for _ in range(4)]
    ids = [client.get("/api/v1/players/me", headers=auth(k)).get_json()["id"] for k in keys]
    strong = {ids[0]: 30.0}
    monkeypatch.setattr(matchmaker, "rating", lambda pid: strong.get(pid))
    # The strong player wants strong opponents only: the three unrated ones wait without it.
    picky = seek(client, keys[0], players=3, rating_range={"min": 20, "max": 50}).get_json()
    others = [seek(client, key, players=3).get_json() for key in keys[1:]]
    assert status(client, keys[0], picky["id"])["state"] == "waiting"
    # The three unrated players made a table of their own.
    found = [status(client, k, s["id"]) for k, s in zip(keys[1:], others, strict=True)]
    assert [s["state"] for s in found] == ["matched"] * 3
    assert len({s["game_id"] for s in found}) == 1
    waiting = matchmaker.seeks.waiting("3-standard-relaxed")
    assert [s.player_id for s in waiting] == [ids[0]]


def test_a_seek_expires_and_is_gone_and_a_cancelled_one_stays_cancelled(client):
    matchmaker = client.application.extensions["hearts.matchmaker"]
    key, other = register(client), register(client)
    waiting = seek(client, key, players=6).get_json()
    cancelled = seek(client, other, players=6).get_json()
    gone = client.delete(f"/api/v1/seeks/{cancelled['id']}", headers=auth(other))
    assert gone.status_code == 200 and gone.get_json()["state"] == "cancelled"
    later = time.time() + matchmaker.ttl_seconds + 1
    assert matchmaker.sweep(later)["expired"] == 1
    assert status(client, key, waiting["id"])["state"] == "expired"
    assert matchmaker.seeks.waiting("6-standard-relaxed") == []
    # The player may seek that table again.
    assert seek(client, key, players=6).status_code == 201


def test_a_table_no_one_else_comes_to_is_filled_with_bots(client, hearts):
    matchmaker = client.application.extensions["hearts.matchmaker"]
    key = register(client)
    mine = seek(client, key, players=4, time_control="quick", fill_with_bots_after=5).get_json()
    assert matchmaker.sweep(time.time() + 2)["filled"] == 0
    assert matchmaker.sweep(time.time() + 6)["filled"] == 1
    found = status(client, key, mine["id"])
    assert found["state"] == "matched"
    view = hearts.view(found["game_id"])
    assert [s["bot"] is None for s in view["seats"]].count(True) == 1
    assert view["seats"][found["seat"]]["bot"] is None
    # The bots are the level a person's table offers first (bots/levels.py), not a strategy.
    assert {s["bot"] for s in view["seats"] if s["bot"]} == {DEFAULT_LEVEL}
    assert view["rules"]["seconds_per_decision"] == 15  # the quick time control


def test_two_workers_pairing_twenty_concurrent_seekers_seat_each_exactly_once(
    redis_client, settings, client
):
    other = create_app(settings, redis=redis_client)
    try:
        clients = [client, other.test_client()]
        keys = [register(client) for _ in range(20)]
        answers: list[tuple[str, dict[str, Any]]] = []
        go = threading.Barrier(20)

        def post(i: int) -> None:
            go.wait()
            response = seek(clients[i % 2], keys[i])
            assert response.status_code == 201, response.get_json()
            answers.append((keys[i], response.get_json()))

        threads = [threading.Thread(target=post, args=(i,)) for i in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(answers) == 20
        matchmaker = client.application.extensions["hearts.matchmaker"]
        matchmaker.sweep()  # whatever a lost race left waiting is paired now
        found = [status(client, key, answer["id"]) for key, answer in answers]
        assert all(s["state"] == "matched" for s in found), [s["state"] for s in found]
        games: dict[str, list[int]] = {}
        for s in found:
            games.setdefault(s["game_id"], []).append(s["seat"])
        assert len(games) == 5
        assert all(sorted(seats) == [0, 1, 2, 3] for seats in games.values())
        for game_id in games:
            seated = [s["player_id"] for s in client.get(f"/api/v1/games/{game_id}").json["seats"]]
            assert len(set(seated)) == 4 and None not in seated  # each seeker once
    finally:
        other.extensions["hearts.bots_stop"]()


def test_the_players_stream_says_its_games_started_and_its_turn_came(client):
    keys = [register(client) for _ in range(3)]
    for key in keys:
        seek(client, key, players=3)
    feeds = [client.get("/api/v1/players/me/events", headers=auth(k)).get_json() for k in keys]
    turns = []
    for feed in feeds:
        assert [e["type"] for e in feed["events"]] == ["gameStart", "yourTurn"]  # the pass
        assert all(e["id"] is None for e in feed["events"])  # a snapshot: no ids
        turn = feed["events"][1]
        assert turn["view"]["seat"] == turn["seat"] and len(turn["view"]["legal_cards"]) == 17
        turns.append(turn)
    game_id = turns[0]["game_id"]
    # Everyone passes, with the seat token its key resumes.
    seat_of_key = {}
    for key, turn in zip(keys, turns, strict=True):
        url = f"/api/v1/games/{game_id}/seats/{turn['seat']}/resume"
        token = client.post(url, json={}, headers=auth(key)).get_json()["token"]
        seat_of_key[turn["seat"]] = key
        passed = client.post(
            f"/api/v1/games/{game_id}/pass",
            json={"cards": turn["view"]["legal_cards"][:3]},
            headers=auth(token),
        )
        assert passed.status_code == 200
    # The first lead is announced to the player who holds the lowest club, and only to it.
    leader = client.get(f"/api/v1/games/{game_id}").get_json()["awaiting"][0]
    for seat, key in seat_of_key.items():
        after = feeds[keys.index(key)]["last_id"]
        url = f"/api/v1/players/me/events?after={after}"
        later = client.get(url, headers=auth(key)).get_json()
        assert all(e["id"] for e in later["events"])  # notices now, not a snapshot
        turns_now = [e for e in later["events"] if e["type"] == "yourTurn"]
        if seat == leader:
            assert [e["seat"] for e in turns_now] == [seat]
            assert turns_now[0]["view"]["legal_cards"]
            assert later["last_id"] == later["events"][-1]["id"]
        else:
            assert turns_now == []


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_the_players_live_stream_sends_a_snapshot_then_notices_and_resumes(
    redis_client, key_prefix
):
    settings = Settings(key_prefix=key_prefix, sse_max_seconds=1.0, sse_keepalive_seconds=0.3)
    app = create_app(settings, redis=redis_client)
    try:
        client = app.test_client()
        keys = [register(client) for _ in range(3)]
        for key in keys:
            seek(client, key, players=3)
        live = {**auth(keys[0]), "Accept": "text/event-stream"}
        # Closed as a WSGI server closes it: the stream's watch (and the hub's reader) end.
        with client.get("/api/v1/players/me/events", headers=live) as response:
            body = response.get_data(as_text=True)
        messages = [m for m in body.split("\n\n") if m.strip()]
        kinds = [
            line.split(": ", 1)[1]
            for m in messages
            for line in m.split("\n")
            if line.startswith("event: ")
        ]
        assert kinds[:2] == ["gameStart", "yourTurn"] and kinds[-1] == "reconnect"
        assert ": keep-alive" in body  # nothing new for a second: the line is kept alive
        assert not any(line.startswith("id: ") for line in body.split("\n"))  # a snapshot
        # Resumed after the first notice: what followed it is sent again, with its id.
        feed = client.get("/api/v1/players/me/events?after=0-0", headers=auth(keys[0])).get_json()
        first, rest = feed["events"][0], feed["events"][1:]
        with client.get(
            "/api/v1/players/me/events", headers={**live, "Last-Event-ID": first["id"]}
        ) as response:
            resumed = response.get_data(as_text=True)
        ids = [line[4:] for line in resumed.split("\n") if line.startswith("id: ")]
        assert ids == [e["id"] for e in rest]
        # A Last-Event-ID that is no stream id is 400 before the stream, never a 500 (issue 32).
        odd = client.get("/api/v1/players/me/events", headers={**live, "Last-Event-ID": "9" * 40})
        assert odd.status_code == 400 and odd.get_json()["code"] == "invalid-event-id"
    finally:
        app.extensions["hearts.stop"]()
