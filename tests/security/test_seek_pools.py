"""Issue 32, item 4: a jammed seek pool. ``SeekStore.waiting()`` read the oldest 200 seeks, so
200 seeks with a rating range nobody has sat at the front of a pool for good and nobody behind
them was matched; every sweep read and compared them all. Now a table is looked for around a
seek among those whose ratings fit it (the pool's rating indexes, a bounded number), a sweep
reads a bounded number of seeks whatever the pool holds, and one client address has so many
seeks waiting at once (HEARTS_SEEKS_PER_ADDRESS)."""

from __future__ import annotations

from typing import Any

import pytest

from service.api.factory import create_app
from service.app import matchmaking
from service.app.matchmaking import SeekRequest
from service.app.players import Player
from service.settings import Settings
from service.store import seeks as seek_store
from tests.api.helpers import auth
from tests.api.test_matchmaking import register

JAMMERS = 200


@pytest.fixture
def client(redis_client, key_prefix):
    app = create_app(Settings(key_prefix=key_prefix, seeks_per_address=8), redis=redis_client)
    yield app.test_client()
    app.extensions["hearts.bots_stop"]()


def seek(client, key: str, address: str, **body: Any):
    return client.post(
        "/api/v1/seeks", json=body, headers=auth(key), environ_base={"REMOTE_ADDR": address}
    )


def jam(client, count: int = JAMMERS) -> None:
    """``count`` seeks nobody can accept, each from an account and address of its own (posted
    as the endpoint posts them, its authentication aside: registering is slow on purpose)."""
    matchmaker = client.application.extensions["hearts.matchmaker"]
    wanted = SeekRequest(players=4, rating_range=(900.0, 1000.0))
    for i in range(count):
        player = Player(f"pl_jam{i}", f"jam{i}", "", "")
        seek = matchmaker.post(player, wanted, f"addr:10.9.{i // 250}.{i % 250}")
        assert seek.state == "waiting"


def test_four_seekers_behind_two_hundred_jamming_seeks_are_matched_within_a_sweep(client):
    matchmaker = client.application.extensions["hearts.matchmaker"]
    jam(client)
    keys = [register(client) for _ in range(4)]
    posted = [seek(client, key, f"10.8.0.{i}", players=4).get_json() for i, key in enumerate(keys)]
    matchmaker.sweep()  # one sweep interval
    found = [
        client.get(f"/api/v1/seeks/{s['id']}", headers=auth(key)).get_json()
        for key, s in zip(keys, posted, strict=True)
    ]
    assert [s["state"] for s in found] == ["matched"] * 4
    assert len({s["game_id"] for s in found}) == 1


def test_a_sweeps_work_is_bounded_whatever_the_pool_holds(client, monkeypatch):
    matchmaker = client.application.extensions["hearts.matchmaker"]
    jam(client, 1000)
    keys = [register(client) for _ in range(3)]  # a table short: they wait too
    for i, key in enumerate(keys):
        assert seek(client, key, f"10.8.1.{i}", players=4).get_json()["state"] == "waiting"
    read, compared = [], []
    from_hash, accepts = seek_store.Seek.from_hash.__func__, matchmaking.accepts

    def counted_read(cls, raw):
        read.append(1)
        return from_hash(cls, raw)

    def counted_accepts(seek, other):
        compared.append(1)
        return accepts(seek, other)

    monkeypatch.setattr(seek_store.Seek, "from_hash", classmethod(counted_read))
    monkeypatch.setattr(matchmaking, "accepts", counted_accepts)
    matchmaker.sweep()
    looks = seek_store.SWEEP_ANCHORS + 2 * seek_store.SWEEP_BUDGET
    per_look = 2 * (seek_store.CANDIDATES + 1) + 2  # its candidates, the anchor read again
    assert 0 < len(read) <= looks * per_look
    assert len(compared) <= seek_store.SWEEP_ANCHORS * per_look * 2 * 3  # both ways, 3 seated


def test_seeks_per_address_are_bounded_and_one_per_account_per_pool(client):
    keys = [register(client) for _ in range(9)]
    picky = {"players": 3, "rating_range": {"min": 900, "max": 1000}}  # they all wait
    first = [seek(client, key, "192.0.2.7", **picky) for key in keys[:8]]
    assert all(r.status_code == 201 for r in first), [r.get_json() for r in first]
    refused = seek(client, keys[8], "192.0.2.7", **picky)
    assert refused.status_code == 429 and refused.get_json()["code"] == "too-many-seeks"
    assert seek(client, keys[8], "192.0.2.8", **picky).status_code == 201  # elsewhere: fine
    again = seek(client, keys[8], "192.0.2.9", **picky)  # one seek per account per pool
    assert again.status_code == 409 and again.get_json()["code"] == "already-seeking"
    client.delete(f"/api/v1/seeks/{first[0].get_json()['id']}", headers=auth(keys[0]))
    assert seek(client, keys[0], "192.0.2.7", players=6).status_code == 201  # a place freed
