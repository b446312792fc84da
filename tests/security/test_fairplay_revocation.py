"""Issue 32, item 5: a resume did not cut a stolen token off.

The attack: a stream opened with a seat token kept receiving that seat's cards after ``resume``
made the token answer 401 everywhere else, for up to ``sse_max_seconds`` (an hour). Now a resume
ends every open stream opened with the old token within a second (``event: revoked``: the
stream sees the seat's credential change in the game's own log), and a key rotation or
revocation ends every player stream (``GET /players/me/events``) opened with the old key within
a second (a rotation or revocation wakes the player's streams in every process through
Redis pub/sub, and each then asks whether its key still works). Against two real
``hearts serve`` (gunicorn, gevent) on one redis-server: the stream is on one, the resume or
rotation on the other."""

from __future__ import annotations

import time
from collections.abc import Iterator

import fakeredis
import pytest

from service.api.factory import create_app
from service.app import game_log
from service.app.auth import credential_of
from service.app.replay import Follower
from service.settings import Settings
from tests.api.helpers import auth
from tests.redis_helpers import RedisServerMissing, start_redis_server, stop_redis_server
from tests.replay.live import SSEStream, request, start_server, stop_server

BOTS = [{"bot": "random"}] * 3
WITHIN = 1.0  # seconds: what the issue asks
SLACK = 1.0  # a loaded test machine's scheduling, on top
ENV = {"HEARTS_SSE_KEEPALIVE": "0.3", "HEARTS_SSE_MAX_SECONDS": "30"}


@pytest.fixture(scope="module")
def servers(tmp_path_factory) -> Iterator[tuple[int, int]]:
    """Two servers (two processes) on one redis-server and one key prefix."""
    try:
        redis_process, url = start_redis_server(tmp_path_factory.mktemp("revocation-redis"))
    except RedisServerMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    prefix = f"revocation-{time.monotonic_ns()}"
    started = []
    try:
        for _ in range(2):
            process, port = start_server(url, prefix, tmp_path_factory.mktemp("gunicorn"), **ENV)
            started.append((process, port))
        yield started[0][1], started[1][1]
    finally:
        for process, _ in started:
            stop_server(process)
        stop_redis_server(redis_process)


def register(port: int, name: str) -> str:
    status, _, body = request(port, "POST", "/api/v1/players", {"name": name})
    assert status == 201, body
    return body["key"]


def seated_game(port: int, key: str) -> tuple[str, int, str, int]:
    """A game with the player seated (and three bots): (game id, seat, token, version)."""
    status, _, game = request(port, "POST", "/api/v1/games", {"seats": [None, *BOTS]})
    assert status == 201, game
    status, _, joined = request(port, "POST", f"/api/v1/games/{game['id']}/seats", {}, auth(key))
    assert status == 201, joined
    return game["id"], joined["seat"], joined["token"], joined["version"]


def until_end(stream: SSEStream, limit: float) -> tuple[list[str], float | None]:
    """The events a stream sends until it ends (or ``limit`` seconds pass); and when it ended."""
    kinds: list[str] = []
    started = time.monotonic()
    while time.monotonic() - started < limit:
        message = stream.next()
        if message is None:
            return kinds, time.monotonic()
        if message.event != "message" or message.data is not None:
            kinds.append(message.event if message.event != "message" else message.data["type"])
    return kinds, None


def test_a_resume_ends_the_old_tokens_game_stream_within_a_second(servers):
    here, there = servers
    key = register(here, "Rhea")
    game_id, seat, old, version = seated_game(here, key)
    path = f"/api/v1/games/{game_id}/events?after={version}"
    stream = SSEStream(here, path, auth(old), timeout=5)
    assert stream.status == 200
    assert stream.next() is not None  # the stream's opening lines: it is live
    resumed_at = time.monotonic()
    status, _, resumed = request(
        there, "POST", f"/api/v1/games/{game_id}/seats/{seat}/resume", {}, auth(key)
    )
    assert status == 200, resumed
    kinds, ended = until_end(stream, limit=WITHIN + SLACK + 3)
    stream.close()
    assert "revoked" in kinds, f"the old token's stream carried on: {kinds}"
    assert ended is not None and ended - resumed_at < WITHIN + SLACK
    assert kinds[-1] == "revoked" and "SeatResumed" not in kinds  # nothing after the resume
    # Reconnecting with the old token is refused; the new token's stream, from the start of
    # the log (the old credential and the resume in its backlog), carries on.
    assert (
        request(here, "GET", path, headers={"Accept": "text/event-stream", **auth(old)})[0] == 401
    )
    fresh = SSEStream(here, f"/api/v1/games/{game_id}/events?after=0", auth(resumed["token"]))
    kinds, ended = until_end(fresh, limit=1.5)
    fresh.close()
    assert ended is None and "revoked" not in kinds and "SeatResumed" in kinds


@pytest.mark.parametrize("how", ["rotate", "revoke"])
def test_a_new_or_no_key_ends_the_old_keys_player_stream_within_a_second(servers, how):
    here, there = servers
    key = register(here, f"Kit {how}")
    stream = SSEStream(here, "/api/v1/players/me/events", auth(key), timeout=5)
    assert stream.status == 200
    assert stream.next() is not None  # the opening lines
    time.sleep(0.6)  # idle: nothing to send, past the first key check
    changed_at = time.monotonic()
    method = "POST" if how == "rotate" else "DELETE"
    status, _, body = request(
        there, method, "/api/v1/players/me/key", {} if how == "rotate" else None, auth(key)
    )
    assert status == 200, body
    kinds, ended = until_end(stream, limit=WITHIN + SLACK + 3)
    stream.close()
    assert "revoked" in kinds, f"the old key's stream carried on: {kinds}"
    assert ended is not None and ended - changed_at < WITHIN + SLACK
    status, _, _ = request(
        here,
        "GET",
        "/api/v1/players/me/events",
        headers={"Accept": "text/event-stream", **auth(key)},
    )
    assert status == 401
    if how == "rotate":  # the new key's stream is not cut
        fresh = SSEStream(here, "/api/v1/players/me/events", auth(body["key"]), timeout=5)
        kinds, ended = until_end(fresh, limit=1.5)
        fresh.close()
        assert ended is None and "revoked" not in kinds


def test_only_a_credential_change_after_the_stream_was_authorized_cuts_it():
    # Resumed twice: a stream opened with the latest token from seq 0 has both earlier
    # credentials in its backlog, and is not cut by them.
    app = create_app(Settings(key_prefix="revoke"), redis=fakeredis.FakeRedis())
    client = app.test_client()
    key = client.post("/api/v1/players", json={"name": "Ola"}).get_json()["key"]
    game = client.post("/api/v1/games", json={"seats": [None, *BOTS]}).get_json()
    seat = client.post(f"/api/v1/games/{game['id']}/seats", json={}, headers=auth(key)).get_json()
    tokens = [seat["token"]]
    for _ in range(2):
        resumed = client.post(
            f"/api/v1/games/{game['id']}/seats/{seat['seat']}/resume", json={}, headers=auth(key)
        )
        tokens.append(resumed.get_json()["token"])
    service = app.extensions["hearts"]
    entries = game_log.read(service.store, game["id"])
    version = entries[-1].seq
    latest = Follower(seat["seat"], credential_of(tokens[-1]), since=version)
    assert latest.superseded_at(entries) is None
    first = Follower(seat["seat"], credential_of(tokens[0]), since=seat["version"])
    cut = first.superseded_at(entries)
    assert cut is not None and type(entries[cut].event).__name__ == "SeatResumed"
    assert Follower(None).superseded_at(entries) is None  # a spectator has nothing to lose
    app.extensions["hearts.stop"]()
