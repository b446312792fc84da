"""The account store's scripts (issue 35: one JSON argument each): what a registration and a
key change write, byte for byte, including a name that is not ASCII (JSON carries it as UTF-8,
which cjson passes through), and what they refuse without writing."""

from __future__ import annotations

import pytest

from service.store.accounts import AccountStore, NameClaimed, NameLookalike, PlayerGone

NAME = "Zoë ♥ 東"  # stored as its UTF-8 bytes, as redis-py encodes any other text


def test_registration_stores_the_name_as_utf8(redis_client, key_prefix) -> None:
    store = AccountStore(redis_client, prefix=key_prefix)
    store.register("p1", NAME, "zoë ♥ 東", "a" * 64, "2026-11-27T13:00:00Z", ["s1", "s2"])
    record = redis_client.hgetall(store.player_key("p1"))
    assert record == {
        b"name": NAME.encode(),
        b"key": b"a" * 64,
        b"created": b"2026-11-27T13:00:00Z",
    }
    assert redis_client.get(store.name_key("zoë ♥ 東")) == b"p1"
    assert redis_client.get(store.key_index("a" * 64)) == b"p1"
    assert [redis_client.get(store.skeleton_key(s)) for s in ("s1", "s2")] == [b"p1", b"p1"]
    with pytest.raises(NameClaimed):
        store.register("p2", NAME, "zoë ♥ 東", "b" * 64, "2026-11-27T13:01:00Z")
    with pytest.raises(NameLookalike):
        store.register("p2", "Zoe", "zoe", "b" * 64, "2026-11-27T13:01:00Z", ["s2"])
    assert store.get("p2") is None and redis_client.get(store.key_index("b" * 64)) is None


def test_rekey_replaces_then_revokes_and_refuses_a_stale_key(redis_client, key_prefix) -> None:
    store = AccountStore(redis_client, prefix=key_prefix)
    store.register("p1", NAME, "zoë ♥ 東", "a" * 64, "2026-11-27T13:00:00Z")
    store.rekey("p1", "a" * 64, "b" * 64)
    assert store.key_hash("p1") == "b" * 64
    assert redis_client.get(store.key_index("a" * 64)) is None
    assert redis_client.get(store.key_index("b" * 64)) == b"p1"
    with pytest.raises(PlayerGone):
        store.rekey("p1", "a" * 64, "c" * 64)  # stale: nothing written
    assert store.key_hash("p1") == "b" * 64
    store.rekey("p1", "b" * 64, "")  # revoked
    assert store.key_hash("p1") == "" and redis_client.get(store.key_index("b" * 64)) is None
    with pytest.raises(PlayerGone):
        store.rekey("nobody", "", "d" * 64)
