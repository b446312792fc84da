"""The archive's object format: a finished game in, the same RecordedEvents out (pure)."""

from __future__ import annotations

import dataclasses
import json

import fakeredis
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.rules import RuleOptions
from service.store import archive_format
from service.store.archive_format import ArchiveCorrupt, decode, encode
from service.store.envelope import NewEvent, canonical_json, seal
from service.store.event_store import RedisEventStore
from tests.replay.helpers import play_game

T0 = "2024-05-01T12:00:00.000000Z"


@pytest.fixture(scope="module")
def finished() -> tuple[list, list[str]]:
    """A standard game to 100 played by random bots: its events and partition-log ids."""
    store = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), prefix="t")
    play_game(store, "g-archive", rules=RuleOptions(score_limit=100), seed="archive")
    events = store.read("g-archive")
    log = store.read_log(store.partition_of("g-archive"), "0-0", 100_000)
    ids = {entry.seq: entry.id for entry in log if entry.game_id == "g-archive"}
    return events, [ids[event.seq] for event in events]


def test_a_game_decodes_to_the_events_the_store_returned(finished):
    events, ids = finished
    game = decode(encode(events, ids), "g-archive")
    assert list(game.events) == events  # every field, the hashes recomputed
    assert list(game.log_ids) == ids
    assert game.head == events[-1].hash and game.version == len(events)


def test_the_same_game_makes_the_same_bytes(finished):
    events, ids = finished
    blob = encode(events, ids)
    assert encode(list(decode(blob).events), ids) == blob


def test_a_finished_standard_game_fits_in_12_kb(finished):
    events, ids = finished
    assert events[-1].type == "GameEnded"
    assert len(encode(events, ids)) <= 12 * 1024


def _document(blob: bytes) -> dict:
    return json.loads(zstandard.ZstdDecompressor().decompress(blob))


def _pack(document: dict) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(canonical_json(document).encode())


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d["payloads"][3].update(card="AS"),
        lambda d: d.update(head="0" * 64),
        lambda d: d["times"][0].__setitem__(0, "2024-01-01T00:00:00.000000Z"),
        lambda d: d["commands"].append(["extra", 1]),
        lambda d: d["types"].__setitem__(0, ["GameCreated", 1, 0]),
        lambda d: d["log"].pop(),
        lambda d: d["log"].__setitem__(0, [-1, 0]),
        lambda d: d.update(format=2),
        lambda d: d.update(version="7"),
    ],
)
def test_a_damaged_object_is_refused(finished, damage):
    events, ids = finished
    document = _document(encode(events, ids))
    damage(document)
    with pytest.raises(ArchiveCorrupt):
        decode(_pack(document))


@pytest.mark.parametrize("data", [b"", b"not zstd", zstandard.ZstdCompressor().compress(b"[1]")])
def test_bytes_that_are_not_an_archived_game_are_refused(data):
    with pytest.raises(ArchiveCorrupt):
        decode(data)


def test_another_games_object_is_refused(finished):
    events, ids = finished
    with pytest.raises(ArchiveCorrupt, match="not 'g-other'"):
        decode(encode(events, ids), "g-other")


def test_only_an_unbroken_chain_is_encoded(finished):
    events, ids = finished
    with pytest.raises(ValueError):
        encode(events[1:], ids[1:])
    with pytest.raises(ValueError):
        encode([events[0], dataclasses.replace(events[1], prev_hash="f" * 64)], ids[:2])
    with pytest.raises(ValueError):
        encode(events, ids[:-1])


def test_decompression_is_bounded(monkeypatch):
    monkeypatch.setattr(archive_format, "MAX_DOCUMENT", 100)
    big = zstandard.ZstdCompressor().compress(b" " * 1000)
    with pytest.raises(ArchiveCorrupt):
        decode(big)


_payload = st.dictionaries(
    st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=8), st.booleans()), max_size=4
)


@settings(max_examples=50)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["A", "B"]),
            st.sampled_from([T0, "2024-05-01T12:00:01.000000Z"]),
            _payload,
        ),
        min_size=1,
        max_size=20,
    )
)
def test_any_chain_round_trips(rows):
    events, prev = [], "0" * 64
    for seq, (kind, time, payload) in enumerate(rows, start=1):
        event = seal(
            NewEvent(kind, 1, payload),
            game_id="g\u00e9",
            seq=seq,
            time=time,
            command_id=f"c{seq // 3}",
            prev_hash=prev,
        )
        events.append(event)
        prev = event.hash
    ids = [f"{1700000000000 + seq // 2}-{seq % 2}" for seq in range(len(events))]
    game = decode(encode(events, ids))
    assert list(game.events) == events and list(game.log_ids) == ids
