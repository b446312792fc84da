"""Issue 22 item 8: no client floods the service. Each limited operation answers 429
``rate-limited`` (problem+json, Retry-After) at its limit: per client address for games created,
joins, imports, live streams opened, players registered, requests with a player's key and
analyses asked for; per token for commands. Addresses count apart, a forged
X-Forwarded-For changes nothing unless a proxy is trusted, and the counters are shared by every
app (worker) on one Redis."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest

from service.api.factory import create_app
from service.settings import Settings
from tests.api.helpers import PROBLEM, Hearts

GAMES = "/api/v1/games"
STREAM = {"Accept": "text/event-stream"}


def limited_app(key_prefix: str, redis: Any = None, **limits: Any):
    """An app with rate limits on, every limit high but the ones given."""
    kinds = ("create", "join", "import", "stream", "command", "register", "account", "analysis")
    kinds += ("bot_games", "long_reads", "preset_deals")
    values = {f"rate_limit_{k}": "1000/minute" for k in kinds}
    values["rate_limit_storage"] = "1000000/minute"  # KiB: high as well
    values.update(limits)
    settings = Settings(key_prefix=key_prefix, rate_limits=True, **values)
    if redis is None:
        return create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    return create_app(settings, redis=redis)


def assert_limited(response) -> None:
    assert response.status_code == 429, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM
    body = response.get_json()
    assert body["type"] == "/problems/rate-limited"
    assert body["code"] == "rate-limited"
    assert body["status"] == 429
    assert int(response.headers["Retry-After"]) >= 1


def test_creating_games_is_limited_per_address(key_prefix):
    client = limited_app(key_prefix, rate_limit_create="2/minute").test_client()
    assert [client.post(GAMES, json={}).status_code for _ in range(2)] == [201, 201]
    assert_limited(client.post(GAMES, json={}))
    # Another address has its own budget.
    other = client.post(GAMES, json={}, environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert other.status_code == 201


def test_joins_are_limited_per_address(key_prefix):
    client = limited_app(key_prefix, rate_limit_join="2/minute").test_client()
    hearts = Hearts(client)
    game = hearts.create()["id"]
    hearts.join(game, "ann")
    hearts.join(game, "bob")
    assert_limited(client.post(f"{GAMES}/{game}/seats", json={"name": "cyd"}))
    there = client.post(
        f"{GAMES}/{game}/seats", json={"name": "cyd"}, environ_base={"REMOTE_ADDR": "10.1.2.3"}
    )
    assert there.status_code == 201


def test_imports_are_limited_per_address(key_prefix):
    client = limited_app(key_prefix, rate_limit_import="2/minute").test_client()
    # A refused import counts too: the limit is on the work asked for, not on its success.
    for _ in range(2):
        assert client.post(f"{GAMES}/import", json={}).status_code == 422
    assert_limited(client.post(f"{GAMES}/import", json={}))


def test_registrations_are_limited_per_address(key_prefix):
    # A name is held for good: no address may hold them by the thousand.
    client = limited_app(key_prefix, rate_limit_register="2/minute").test_client()
    for name in ("ann", "bob"):
        assert client.post("/api/v1/players", json={"name": name}).status_code == 201
    assert_limited(client.post("/api/v1/players", json={"name": "cyd"}))
    other = client.post(
        "/api/v1/players", json={"name": "cyd"}, environ_base={"REMOTE_ADDR": "10.9.9.9"}
    )
    assert other.status_code == 201


def test_requests_with_a_player_key_are_limited_per_address(key_prefix):
    # Each checks a key: a wrong key counts too, so no address tries keys at speed.
    client = limited_app(key_prefix, rate_limit_account="3/minute").test_client()
    key = client.post("/api/v1/players", json={"name": "ann"}).get_json()["key"]
    me = {"Authorization": f"Bearer {key}"}
    wrong = {"Authorization": "Bearer hp_" + "x" * 43}
    assert client.get("/api/v1/players/me", headers=me).status_code == 200
    assert client.get("/api/v1/players/me", headers=wrong).status_code == 401
    assert client.get("/api/v1/players/me/games", headers=me).status_code == 200
    assert_limited(client.get("/api/v1/players/me", headers=me))
    assert_limited(client.post(f"{GAMES}/gabc/seats/0/resume", json={}, headers=me))


def test_analyses_asked_for_are_limited_per_address_and_status_reads_are_not(key_prefix):
    client = limited_app(key_prefix, rate_limit_analysis="2/minute").test_client()
    game = Hearts(client).create()["id"]
    path = f"{GAMES}/{game}/hands/1/analysis"
    # Refused (no hand dealt yet) but asked for: each counts.
    assert [client.post(path, json={}).status_code for _ in range(2)] == [404, 404]
    assert_limited(client.post(path, json={}))
    assert all(client.get(path).status_code != 429 for _ in range(5))


def test_streams_opened_are_limited_per_address_and_pages_are_not(key_prefix):
    client = limited_app(key_prefix, rate_limit_stream="2/minute").test_client()
    game = Hearts(client).create()["id"]
    for _ in range(5):  # pages of the log are plain reads, not streams
        assert client.get(f"{GAMES}/{game}/events").status_code == 200
    for _ in range(2):
        response = client.get(f"{GAMES}/{game}/events", headers=STREAM, buffered=False)
        assert response.status_code == 200
        assert response.mimetype == "text/event-stream"
        response.close()
    assert_limited(client.get(f"{GAMES}/{game}/events", headers=STREAM))


def test_commands_are_limited_per_token(key_prefix):
    client = limited_app(key_prefix, rate_limit_command="2/minute").test_client()
    hearts = Hearts(client)
    game, tokens = hearts.new_game()
    view = hearts.view(game, tokens[0])
    assert view["phase"] == "passing"
    cards = view["legal_cards"][: view["cards_to_pass"]]
    passed = hearts.post(f"{GAMES}/{game}/pass", {"cards": cards}, tokens[0])
    assert passed.status_code == 200
    again = hearts.post(f"{GAMES}/{game}/pass", {"cards": cards}, tokens[0])
    assert again.status_code == 409  # refused by the rules, and counted
    assert_limited(hearts.post(f"{GAMES}/{game}/play", {"card": "2C"}, tokens[0]))
    # The same address with another seat's token still plays.
    seat1 = hearts.view(game, tokens[1])
    body = {"cards": seat1["legal_cards"][: seat1["cards_to_pass"]]}
    assert hearts.post(f"{GAMES}/{game}/pass", body, tokens[1]).status_code == 200


def test_the_token_is_never_a_key(key_prefix):
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    client = limited_app(key_prefix, redis, rate_limit_command="5/minute").test_client()
    hearts = Hearts(client)
    game, tokens = hearts.new_game()
    hearts.act(game, 0, tokens[0])
    keys = [key.decode() for key in redis.scan_iter(f"{key_prefix}:limits:*")]
    assert any("token:" in key for key in keys), keys
    assert not any(tok in key for key in keys for tok in tokens.values())


def test_a_forged_forwarded_for_is_ignored_unless_a_proxy_is_trusted(key_prefix):
    client = limited_app(key_prefix, rate_limit_create="1/minute").test_client()
    assert client.post(GAMES, json={}).status_code == 201
    forged = client.post(GAMES, json={}, headers={"X-Forwarded-For": "10.9.9.9"})
    assert_limited(forged)

    behind = create_app(
        Settings(
            key_prefix=key_prefix + "-proxy",
            rate_limits=True,
            rate_limit_create="1/minute",
            trusted_proxies=1,
        ),
        redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()),
    ).test_client()
    proxy = {"REMOTE_ADDR": "127.0.0.1"}
    first = behind.post(GAMES, json={}, headers={"X-Forwarded-For": "10.0.0.1"}, environ_base=proxy)
    assert first.status_code == 201
    assert_limited(
        behind.post(GAMES, json={}, headers={"X-Forwarded-For": "10.0.0.1"}, environ_base=proxy)
    )
    # Two clients behind the one proxy count apart: the proxy's own address is not the key.
    other = behind.post(GAMES, json={}, headers={"X-Forwarded-For": "10.0.0.2"}, environ_base=proxy)
    assert other.status_code == 201


def test_an_operation_set_off_is_not_limited(key_prefix):
    client = limited_app(key_prefix, rate_limit_create="off").test_client()
    assert {client.post(GAMES, json={}).status_code for _ in range(30)} == {201}


def test_an_app_built_from_settings_is_limited_as_hearts_serve_is(key_prefix):
    # Issue 34: the limits a user meets are the ones the tests run (tests/conftest.py).
    app = create_app(
        Settings(key_prefix=key_prefix), redis=fakeredis.FakeRedis(server=fakeredis.FakeServer())
    )
    client = app.test_client()
    assert {client.post(GAMES, json={}).status_code for _ in range(40)} == {201, 429}
    unlimited = create_app(
        Settings(key_prefix=key_prefix, rate_limits=False),
        redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()),
    )
    client = unlimited.test_client()
    assert {client.post(GAMES, json={}).status_code for _ in range(40)} == {201}


def test_every_limited_operation_documents_its_429(key_prefix):
    document = limited_app(key_prefix).test_client().get("/api/v1/openapi.json").get_json()
    limited = {
        ("post", "/api/v1/games"),
        ("post", "/api/v1/games/{game_id}/seats"),
        ("post", "/api/v1/games/import"),
        ("get", "/api/v1/games/{game_id}/events"),
        ("post", "/api/v1/games/{game_id}/pass"),
        ("post", "/api/v1/games/{game_id}/play"),
        ("post", "/api/v1/games/{game_id}/moon"),
        ("post", "/api/v1/games/{game_id}/seats/{seat}/bot"),
    }
    for method, path in limited:
        response = document["paths"][path][method]["responses"]["429"]
        assert PROBLEM in response["content"], (method, path)
        assert "Retry-After" in response["headers"], (method, path)
    # Reads are not limited, and do not say they are.
    assert "429" not in document["paths"]["/api/v1/games/{game_id}"]["get"]["responses"]


@pytest.mark.parametrize("backend", ["real", "cluster"])
def test_limits_hold_across_apps_on_one_redis(request, backend, key_prefix):
    """Two apps (two workers, or two machines) on one Redis share the counters: the address's
    third game is refused whichever app it asks."""
    if backend == "real":
        url = request.getfixturevalue("redis_server")
    else:
        url = request.getfixturevalue("redis_cluster").url
    settings = Settings(
        redis_url=url, key_prefix=key_prefix, rate_limits=True, rate_limit_create="2/minute"
    )
    one, two = create_app(settings).test_client(), create_app(settings).test_client()
    assert one.post(GAMES, json={}).status_code == 201
    assert two.post(GAMES, json={}).status_code == 201
    assert_limited(one.post(GAMES, json={}))
    assert_limited(two.post(GAMES, json={}))


def test_a_limit_setting_is_checked_when_read():
    from service.settings import ConfigError

    with pytest.raises(ConfigError):
        Settings.from_env({"HEARTS_RATE_LIMIT_JOIN": "lots"})
    settings = Settings.from_env({"HEARTS_RATE_LIMIT_JOIN": "5/second;100/hour"})
    assert settings.rate_limit_join == "5/second;100/hour"


def test_hearts_serve_limits_by_default(redis_server, key_prefix, tmp_path):
    """The real server (gunicorn, its own settings from the environment) limits rates unless
    told not to; the suite turns them off for its other servers (tests/conftest.py)."""
    from tests.replay.live import request, start_server, stop_server

    process, port = start_server(
        redis_server, key_prefix, tmp_path, HEARTS_RATE_LIMITS="", HEARTS_RATE_LIMIT_CREATE="2/hour"
    )
    try:
        statuses = [request(port, "POST", GAMES, {})[0] for _ in range(3)]
        assert statuses == [201, 201, 429]
        status, headers, body = request(port, "POST", GAMES, {})
        assert status == 429
        assert body["code"] == "rate-limited"
        assert int(headers["Retry-After"]) >= 1
    finally:
        stop_server(process)
