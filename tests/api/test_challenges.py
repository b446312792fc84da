"""Issue 44: a challenge to a named player, accepted, declined, cancelled or left to expire.

Given two registered players, when one challenges the other by name, then the other sees it
incoming and may accept (a private game with both seated, bots elsewhere, each taking its own
seat's token), decline, or let it expire; the challenger may cancel; every other answer is a
problem document with a stable type, and the sender is bounded (open challenges, rate limit)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from bots.levels import DEFAULT_LEVEL
from service.settings import Settings
from tests.api.helpers import PROBLEM, auth
from tests.api.test_matchmaking import address_of


def register(client) -> tuple[str, str]:
    name = f"p{uuid.uuid4().hex[:10]}"
    response = client.post("/api/v1/players", json={"name": name}, environ_base=address_of(name))
    assert response.status_code == 201, response.get_json()
    return name, response.get_json()["key"]


def call(client, method: str, path: str, key: str, body: Any = None):
    kwargs = {"json": body} if body is not None else {}
    return client.open(
        f"/api/v1{path}", method=method, headers=auth(key), environ_base=address_of(key), **kwargs
    )


def challenge(client, key: str, to: str, **body: Any) -> dict[str, Any]:
    response = call(client, "POST", "/challenges", key, {"to": to, **body})
    assert response.status_code == 201, response.get_json()
    assert response.headers["Cache-Control"] == "no-store"
    return response.get_json()


def refused(response, status: int, code: str) -> None:
    assert response.status_code == status, response.get_json()
    assert response.mimetype == PROBLEM
    assert response.get_json()["code"] == code


def test_an_accepted_challenge_seats_both_players_in_a_private_game(client, hearts):
    (alice, a_key), (bob, b_key) = register(client), register(client)
    sent = challenge(client, a_key, bob, rules={"players": 4, "score_limit": 50})
    assert sent["state"] == "open" and sent["direction"] == "outgoing"
    assert sent["challenger"] == alice and sent["challenged"] == bob
    people = [s for s in sent["seats"] if not s["bot"]]
    assert sorted(s["name"] for s in people) == sorted([alice, bob])
    assert len(sent["seats"]) == 4

    incoming = call(client, "GET", "/challenges", b_key).get_json()["challenges"]
    assert [(c["id"], c["direction"]) for c in incoming] == [(sent["id"], "incoming")]

    accepted = call(client, "POST", f"/challenges/{sent['id']}/accept", b_key, {})
    assert accepted.status_code == 200, accepted.get_json()
    assert accepted.headers["Cache-Control"] == "no-store"
    answer = accepted.get_json()
    game_id, b_seat = answer["challenge"]["game_id"], answer["seat"]
    assert answer["challenge"]["state"] == "accepted" and answer["view"]["hand"]
    # The acceptor plays with the token it was given.
    assert hearts.view(game_id, answer["token"], b_seat)["seat"] == b_seat

    # The challenger reads the accepted challenge (no token in it) and resumes its seat.
    mine = call(client, "GET", f"/challenges/{sent['id']}", a_key).get_json()
    assert "token" not in mine and mine["game_id"] == game_id
    a_seat = mine["your_seat"]
    resumed = call(client, "POST", f"/games/{game_id}/seats/{a_seat}/resume", a_key, {})
    assert resumed.status_code == 200 and resumed.get_json()["view"]["hand"]

    view = hearts.view(game_id)
    assert view["rules"]["score_limit"] == 50
    names = [seat["name"] for seat in view["seats"]]
    assert names[a_seat] == alice and names[b_seat] == bob
    assert [seat["bot"] for seat in view["seats"] if seat.get("bot")] == [DEFAULT_LEVEL] * 2
    # Private: in no listing, and in both players' games.
    listed = {g["id"] for g in client.get("/api/v1/games?limit=100").get_json()["games"]}
    assert game_id not in listed
    for key in (a_key, b_key):
        games = call(client, "GET", "/players/me/games", key).get_json()["games"]
        assert [g["id"] for g in games] == [game_id]

    # Answered once.
    refused(
        call(client, "POST", f"/challenges/{sent['id']}/accept", b_key, {}),
        409,
        "challenge-answered",
    )
    refused(
        call(client, "POST", f"/challenges/{sent['id']}/cancel", a_key, {}),
        409,
        "challenge-answered",
    )


def test_decline_and_cancel_each_by_its_own_player_only(client):
    (_, a_key), (bob, b_key) = register(client), register(client)
    first = challenge(client, a_key, bob)
    refused(
        call(client, "POST", f"/challenges/{first['id']}/accept", a_key, {}),
        403,
        "challenge-not-yours",
    )
    refused(
        call(client, "POST", f"/challenges/{first['id']}/cancel", b_key, {}),
        403,
        "challenge-not-yours",
    )
    declined = call(client, "POST", f"/challenges/{first['id']}/decline", b_key, {})
    assert declined.status_code == 200 and declined.get_json()["state"] == "declined"
    assert declined.get_json()["game_id"] is None

    second = challenge(client, a_key, bob)
    cancelled = call(client, "POST", f"/challenges/{second['id']}/cancel", a_key, {})
    assert cancelled.status_code == 200 and cancelled.get_json()["state"] == "cancelled"
    refused(
        call(client, "POST", f"/challenges/{second['id']}/accept", b_key, {}),
        409,
        "challenge-answered",
    )
    states = {
        c["id"]: c["state"]
        for c in call(client, "GET", "/challenges", b_key).get_json()["challenges"]
    }
    assert states == {first["id"]: "declined", second["id"]: "cancelled"}


def test_a_challenge_not_answered_in_time_expires_and_its_record_goes(client, app):
    (_, a_key), (bob, b_key) = register(client), register(client)
    challenges = app.extensions["hearts.challenges"]
    sent = challenge(client, a_key, bob)
    real_now = challenges.now
    challenges.now = lambda: real_now() + challenges.ttl_seconds + 1  # the store's clock
    try:
        seen = call(client, "GET", f"/challenges/{sent['id']}", b_key).get_json()
        assert seen["state"] == "expired"
        refused(
            call(client, "POST", f"/challenges/{sent['id']}/accept", b_key, {}),
            409,
            "challenge-expired",
        )
        refused(
            call(client, "POST", f"/challenges/{sent['id']}/cancel", a_key, {}),
            409,
            "challenge-expired",
        )
        # An expired challenge no longer counts against the challenger's open ones.
        for _ in range(challenges.open_per_player):
            challenge(client, a_key, bob)
    finally:
        challenges.now = real_now
    # Redis forgets the record an hour after its expiry (retention).
    record = challenges.store.record_key(sent["id"])
    ttl = challenges.store.redis.pttl(record)
    assert 0 < ttl <= (challenges.ttl_seconds + 3600) * 1000


def test_refusals_are_problem_documents(client):
    (alice, a_key), (_, b_key) = register(client), register(client)
    refused(
        call(client, "POST", "/challenges", a_key, {"to": "nobody-here"}), 404, "player-not-found"
    )
    refused(call(client, "POST", "/challenges", a_key, {"to": alice}), 422, "invalid-challenge")
    refused(call(client, "POST", "/challenges", a_key, {"to": "random"}), 422, "invalid-challenge")
    refused(
        call(client, "POST", "/challenges", a_key, {"to": alice, "rules": {"players": 9}}),
        422,
        "invalid-rules",
    )
    no_key = client.post("/api/v1/challenges", json={"to": alice})
    assert no_key.status_code == 401 and no_key.mimetype == PROBLEM
    (carol, c_key) = register(client)
    sent = challenge(client, a_key, carol)
    # A third player cannot tell another's challenge from none.
    refused(call(client, "GET", f"/challenges/{sent['id']}", b_key), 404, "challenge-not-found")
    refused(
        call(client, "POST", f"/challenges/{sent['id']}/accept", b_key, {}),
        404,
        "challenge-not-found",
    )
    refused(
        call(client, "POST", "/challenges/ch_00/decline", c_key, {}), 404, "challenge-not-found"
    )


class TestBounds:
    """With at most 2 open challenges per player and 3 sent per key an hour."""

    @pytest.fixture
    def settings(self, key_prefix) -> Settings:
        return Settings(key_prefix=key_prefix, challenges_open=2, rate_limit_challenge="3/hour")

    def test_open_challenges_are_capped_and_sending_is_rate_limited_per_key(self, client):
        (_, a_key), (bob, _) = register(client), register(client)
        first = challenge(client, a_key, bob)
        challenge(client, a_key, bob)
        refused(call(client, "POST", "/challenges", a_key, {"to": bob}), 429, "too-many-challenges")
        call(client, "POST", f"/challenges/{first['id']}/cancel", a_key, {})
        # A place freed, but this key has sent its 3 this hour (the refused one counts too).
        limited = call(client, "POST", "/challenges", a_key, {"to": bob})
        refused(limited, 429, "rate-limited")
        assert int(limited.headers["Retry-After"]) >= 1
        # The limit is the key's: another player's key still sends.
        (_, c_key) = register(client)
        challenge(client, c_key, bob)


def notices(client, key: str, after: str) -> list[dict[str, Any]]:
    """The player's notices after ``after`` (its own stream, as a JSON page)."""
    page = call(client, "GET", f"/players/me/events?after={after}", key)
    assert page.status_code == 200, page.get_json()
    return [n for n in page.get_json()["events"] if n["type"].startswith("challenge")]


def test_a_challenge_and_its_answer_are_told_on_the_players_own_streams(client):
    (alice, a_key), (bob, b_key) = register(client), register(client)
    start = {
        key: call(client, "GET", "/players/me/events", key).get_json()["last_id"]
        for key in (a_key, b_key)
    }
    sent = challenge(client, a_key, bob)
    told = notices(client, b_key, start[b_key])
    assert [(n["type"], n["challenge_id"], n["challenger"]) for n in told] == [
        ("challenge", sent["id"], alice)
    ]
    assert told[0]["expires"] == sent["expires"] and told[0]["id"]
    assert notices(client, a_key, start[a_key]) == []  # the sender is not told its own

    declined = call(client, "POST", f"/challenges/{sent['id']}/decline", b_key, {})
    assert declined.status_code == 200
    for key in (a_key, b_key):  # both: the other's page, and the answerer's other tabs
        answered = [n for n in notices(client, key, start[key]) if n["type"] != "challenge"]
        told = [(n["type"], n["challenge_id"], n["state"], n["game_id"]) for n in answered]
        assert told == [("challengeAnswered", sent["id"], "declined", None)]
        assert answered[0]["challenger"] == alice

    again = challenge(client, a_key, bob)
    accepted = call(client, "POST", f"/challenges/{again['id']}/accept", b_key, {}).get_json()
    last = notices(client, a_key, start[a_key])[-1]
    assert (last["state"], last["game_id"]) == ("accepted", accepted["challenge"]["game_id"])


def test_a_lost_notice_fails_no_challenge(client, monkeypatch):
    (_, a_key), (bob, b_key) = register(client), register(client)
    service = client.application.extensions["hearts.challenges"]

    def broken(notices):
        raise ConnectionError("redis went away")

    monkeypatch.setattr(service, "notify", broken)
    sent = challenge(client, a_key, bob)
    accepted = call(client, "POST", f"/challenges/{sent['id']}/accept", b_key, {})
    assert accepted.status_code == 200, accepted.get_json()
