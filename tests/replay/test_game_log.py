"""The game log is the one decoder of stored events: the store hands them back as written, the
game log upcasts and types them (a game's stream and a partition's log alike)."""

from __future__ import annotations

from functools import partial

import pytest

from domain.events import PlayerJoined, event_from_dict
from service.app import game_log
from service.app.errors import CorruptGame
from service.store.envelope import NewEvent, verify_chain
from service.store.upcasting import UpcasterRegistry

T0 = "2026-01-01T00:00:00.000000Z"


@pytest.fixture
def joined_v2(monkeypatch) -> UpcasterRegistry:
    """As if PlayerJoined were at schema 2 (``nickname`` renamed ``name``): its reader expects
    version 2, and a registry of the test's own upcasts version 1."""
    monkeypatch.setitem(
        game_log._READERS, "PlayerJoined", (2, partial(event_from_dict, "PlayerJoined"))
    )
    registry = UpcasterRegistry()
    registry.register(
        "PlayerJoined",
        1,
        lambda p: {
            "seat": p["seat"],
            "name": p["nickname"],
            "credential": p["credential"],
            "player_id": None,
        },
    )
    return registry


def test_the_store_reads_as_stored_and_only_the_game_log_upcasts(event_store, joined_v2):
    old = NewEvent("PlayerJoined", 1, {"seat": 2, "nickname": "ann", "credential": None})
    event_store.append("g", 0, [old], "c", T0)

    (stored,) = event_store.read("g")
    assert (stored.schema_version, stored.payload) == (1, old.payload)
    assert verify_chain([stored]) == []
    assert event_store.read_log(event_store.partition_of("g"))[0].event == stored
    assert game_log.stored(event_store, "g") == [stored]

    (entry,) = game_log.read(event_store, "g", upcasters=joined_v2)
    assert entry.record == PlayerJoined(2, "ann") and (entry.seq, entry.hash) == (1, stored.hash)
    (source,) = game_log.read_partition(
        event_store, event_store.partition_of("g"), upcasters=joined_v2
    )
    assert (source.game_id, source.seq, source.event) == ("g", 1, PlayerJoined(2, "ann"))
    assert [e.record for e in game_log.follow(event_store, "g", 0, 1, joined_v2)] == [entry.record]
    # Without an upcaster for version 1 the event cannot be read: the game is corrupt.
    with pytest.raises(CorruptGame):
        game_log.read(event_store, "g")


def test_a_seq_gap_is_a_corrupt_game(event_store):
    events = [
        NewEvent("PlayerJoined", 1, {"seat": s, "name": f"p{s}", "credential": None})
        for s in range(3)
    ]
    event_store.append("g", 0, events, "c", T0)
    first, _, third = event_store.read("g")
    log = game_log.entries([first, third])
    assert next(log).seq == 1
    with pytest.raises(CorruptGame, match="seq 3 where 2 was due"):
        next(log)
