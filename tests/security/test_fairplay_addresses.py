"""Issue 32, item 10: one IPv6 /64 was unlimited.

The attack: rate limits and live-stream slots keyed on the whole client address, and an IPv6
client holds a whole /64 (2^64 addresses): a fresh address per request never met a limit. Now
one function (service/app/client_address.py ``client_key``) names the client both count: an IPv6
address counts as its network of ``HEARTS_IPV6_PREFIX`` bits (64 by default), an IPv4 address
(an IPv4-mapped one included) as itself. X-Forwarded-For behind a trusted proxy still works."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest

from service.api.factory import create_app
from service.app.client_address import client_key
from service.settings import Settings
from tests.api.helpers import Hearts
from tests.security.test_rate_limits import assert_limited, limited_app

GAMES = "/api/v1/games"
STREAM = {"Accept": "text/event-stream"}
ONE_NET = ["2001:db8:1:2::1", "2001:db8:1:2:8a2e:370:7334:1", "2001:db8:1:2:ffff:ffff:ffff:ffff"]
NEXT_NET = "2001:db8:1:3::1"


def from_address(address: str) -> dict[str, Any]:
    return {"environ_base": {"REMOTE_ADDR": address}}


def test_addresses_of_one_ipv6_64_share_a_rate_limit(key_prefix):
    client = limited_app(key_prefix, rate_limit_create="2/minute").test_client()
    first, second, third = ONE_NET
    assert client.post(GAMES, json={}, **from_address(first)).status_code == 201
    assert client.post(GAMES, json={}, **from_address(second)).status_code == 201
    assert_limited(client.post(GAMES, json={}, **from_address(third)))  # a fresh address: no escape
    # Another /64 has its own budget.
    assert client.post(GAMES, json={}, **from_address(NEXT_NET)).status_code == 201


def test_ipv4_addresses_still_count_one_by_one(key_prefix):
    client = limited_app(key_prefix, rate_limit_create="1/minute").test_client()
    assert client.post(GAMES, json={}, **from_address("192.0.2.1")).status_code == 201
    assert_limited(client.post(GAMES, json={}, **from_address("192.0.2.1")))
    # The same address as a dual-stack socket reports it is the same client.
    assert_limited(client.post(GAMES, json={}, **from_address("::ffff:192.0.2.1")))
    assert client.post(GAMES, json={}, **from_address("192.0.2.2")).status_code == 201


def test_the_prefix_is_a_setting(key_prefix):
    client = limited_app(key_prefix, rate_limit_create="1/minute", ipv6_prefix=48).test_client()
    assert client.post(GAMES, json={}, **from_address("2001:db8:1:2::1")).status_code == 201
    assert_limited(client.post(GAMES, json={}, **from_address("2001:db8:1:ff::1")))  # one /48
    assert client.post(GAMES, json={}, **from_address("2001:db8:2::1")).status_code == 201
    assert Settings.from_env({"HEARTS_IPV6_PREFIX": "56"}).ipv6_prefix == 56
    assert Settings.from_env({}).ipv6_prefix == 64
    for bad in ("0", "129", "x"):
        with pytest.raises(ValueError, match="HEARTS_IPV6_PREFIX"):
            Settings.from_env({"HEARTS_IPV6_PREFIX": bad})


def test_forwarded_for_behind_a_trusted_proxy_keys_by_the_clients_64(key_prefix):
    behind = create_app(
        Settings(
            key_prefix=key_prefix, rate_limits=True, rate_limit_create="1/minute", trusted_proxies=1
        ),
        redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()),
    ).test_client()

    def via_proxy(client_address: str):
        return behind.post(
            GAMES,
            json={},
            headers={"X-Forwarded-For": client_address},
            environ_base={"REMOTE_ADDR": "127.0.0.1"},
        )

    assert via_proxy(ONE_NET[0]).status_code == 201
    assert_limited(via_proxy(ONE_NET[1]))
    assert via_proxy(NEXT_NET).status_code == 201
    assert via_proxy("192.0.2.7").status_code == 201


def test_open_streams_of_one_ipv6_64_share_the_per_client_bound(key_prefix):
    settings = Settings(key_prefix=key_prefix, sse_max_streams=10, sse_max_streams_per_client=2)
    app = create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    client = app.test_client()
    game_id, _ = Hearts(client).new_game(1)
    path = f"{GAMES}/{game_id}/events"

    def open_from(address: str):
        return client.get(path, headers=STREAM, buffered=False, **from_address(address))

    held = [open_from(ONE_NET[0]), open_from(ONE_NET[1])]
    assert [r.status_code for r in held] == [200, 200]
    refused = open_from(ONE_NET[2])
    assert refused.status_code == 429 and refused.get_json()["code"] == "too-many-streams"
    other = open_from(NEXT_NET)
    assert other.status_code == 200
    v4 = [open_from("192.0.2.1"), open_from("192.0.2.2")]
    assert [r.status_code for r in v4] == [200, 200]
    for stream in (*reversed(v4), other, *reversed(held)):  # last opened first: see test_streams
        stream.close()
    app.extensions["hearts.stop"]()


@pytest.mark.parametrize(
    ("address", "prefix", "key"),
    [
        ("2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::9", 64, "2001:db8:1:2::/64"),  # one spelling per network
        ("2001:db8:1:2:3:4:5:6", 48, "2001:db8:1::/48"),
        ("2001:db8:1:2:3:4:5:6", 128, "2001:db8:1:2:3:4:5:6/128"),
        ("fe80::1%eth0", 64, "fe80::/64"),
        ("::ffff:198.51.100.4", 64, "198.51.100.4"),
        ("198.51.100.4", 64, "198.51.100.4"),
        ("unknown", 64, "unknown"),
        (None, 64, "unknown"),
    ],
)
def test_the_client_key(address, prefix, key):
    assert client_key(address, prefix) == key
