"""The loads' page decoder gives what the reference path gives, or refuses the page.

``decode_page`` reads envelopes with their payloads left as stored JSON, which the game log reads
(msgspec straight into the event, else its own readers); the reference is the store's
``decode_envelope`` (a ``RecordedEvent``) typed by ``game_log.decode``. Whatever it accepts must
type to the same record (or the same error) with the same envelope facts; whatever it refuses is
decoded the reference way by the store, page by page, so a log with an old schema version or a
damaged payload loads (or fails) exactly as before.

A load's fold reads only what the state needs: before a game's last deal it skips the events that
deal supersedes (``domain.decider.needed``), unless the game has a turn clock.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bench.randomplay import random_game
from domain.decider import fold
from domain.events import GameCreated, PlayerJoined, event_to_dict, event_type
from domain.rules import PRESETS
from service.app import game_log
from service.app.deal_plan import DealPlan, SeedCommitted
from service.app.errors import CorruptGame
from service.app.game import StoredGame, fold_records, game_cache
from service.app.typed_envelopes import LazyEnvelope, decode_page
from service.store.envelope import GENESIS_HASH, NewEvent, decode_envelope, envelope_json, seal
from tests.replay.tamper import find, tamper
from tests.store.test_fast_decode import EXAMPLES, damaged, json_values

T0 = "2026-01-01T00:00:00.000000Z"
FACTS = ("type", "schema_version", "game_id", "seq", "time", "command_id", "hash")


def envelope(new: NewEvent, seq: int = 1, prev_hash: str = GENESIS_HASH) -> bytes:
    recorded = seal(new, game_id="g", seq=seq, time=T0, command_id=f"c{seq}", prev_hash=prev_hash)
    return envelope_json(recorded).encode("utf-8")


def of(record: Any) -> NewEvent:
    if isinstance(record, DealPlan | SeedCommitted):
        name = type(record).__name__
        return NewEvent(name, game_log._READERS[name][0], record.to_payload())
    return NewEvent(event_type(record), type(record).schema_version, event_to_dict(record))


RECORDS = [
    *EXAMPLES,
    DealPlan("seed", ()),
    SeedCommitted(2, "c" * 64, "s", "salt"),
]


def typed_by(decode: Any, data: bytes) -> tuple[str, Any]:
    """The typed record of one envelope decoded by ``decode``, or the error that stopped it."""
    try:
        ((stored, record),) = game_log.typed([decode(data)])
        return "value", (stored, record)
    except Exception as exc:  # noqa: BLE001 - the outcome is compared, whatever it is
        return "error", (type(exc), str(exc))


def fast(data: bytes) -> Any:
    (typed,) = decode_page([data])
    assert isinstance(typed, LazyEnvelope)
    return typed


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_each_record_reads_as_the_reference_reads_it(record):
    data = envelope(of(record))
    kind, (typed, got) = typed_by(fast, data)
    assert kind == "value"
    kind, (recorded, expected) = typed_by(decode_envelope, data)
    assert got == expected == record
    assert type(got) is type(expected)
    assert [getattr(typed, f) for f in FACTS] == [getattr(recorded, f) for f in FACTS]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    record=st.sampled_from(RECORDS),
    damage=st.lists(
        st.tuples(st.sampled_from(["drop", "set"]), st.integers(0, 20), json_values), max_size=3
    ),
    version=st.sampled_from([None, 0, 1, 2, 3]),
)
def test_a_damaged_or_old_envelope_is_refused_or_read_as_the_reference_reads_it(
    record, damage, version
):
    new = of(record)
    payload = damaged(new.payload, damage)
    try:
        data = envelope(
            NewEvent(new.type, new.schema_version if version is None else version, payload)
        )
    except ValueError:  # not JSON (a NaN): no such envelope is ever stored
        assume(False)
    try:
        decode_page([data])
    except Exception:  # noqa: BLE001 - refused: the store decodes the page the reference way
        return
    got, expected = typed_by(fast, data), typed_by(decode_envelope, data)
    assert got[0] == expected[0], "one path accepted what the other refused"
    if got[0] == "value":
        assert got[1][1] == expected[1][1] and type(got[1][1]) is type(expected[1][1])
    else:
        assert got[1] == expected[1]


def test_an_envelope_of_an_older_schema_version_is_upcast_as_the_reference_does():
    old = NewEvent("PlayerJoined", 1, {"seat": 0, "name": "Ann", "credential": None})
    kind, (_, got) = typed_by(fast, envelope(old))
    assert kind == "value" and got == typed_by(decode_envelope, envelope(old))[1][1]
    assert got.player_id is None


def test_a_card_that_is_no_card_is_judged_by_the_reference_reader():
    bad = envelope(NewEvent("CardPlayed", 1, {"seat": 0, "card": "1X"}))
    got = typed_by(fast, bad)
    assert got[0] == "error" and got == typed_by(decode_envelope, bad)


@pytest.mark.parametrize("field", ["prev_hash", "hash", "time", "payload"])
def test_an_envelope_missing_a_field_refuses_the_page(field):
    data = json.loads(envelope(NewEvent("CardPlayed", 1, {"seat": 1, "card": "2C"})))
    del data[field]
    good = envelope(NewEvent("CardPlayed", 1, {"seat": 0, "card": "3C"}))
    with pytest.raises(Exception):  # noqa: B017 - any refusal sends the page the reference way
        decode_page([good, json.dumps(data).encode()])


def test_an_unknown_type_refuses_the_page():
    with pytest.raises(Exception):  # noqa: B017
        decode_page([envelope(NewEvent("CardRevoked", 1, {"seat": 0}))])


# -- through the store ------------------------------------------------------------------------


def play_log(store: Any, game_id: str, records: list[Any]) -> None:
    for seq, record in enumerate(records):
        store.append(game_id, seq, [of(record)], f"c{seq}", T0)


def test_a_cache_miss_reads_lazy_envelopes_and_folds_the_same_game(event_store):
    records = [
        GameCreated("g1", PRESETS["standard"], (None, "random", "random", "random")),
        PlayerJoined(0, "Ann", "x" * 8),
    ]
    play_log(event_store, "g1", records)
    typed = event_store.read("g1", fast=decode_page)
    assert all(isinstance(e, LazyEnvelope) for e in typed)
    as_stored = event_store.read("g1")
    assert fold_records(StoredGame(), typed) == fold_records(StoredGame(), as_stored)
    assert game_cache(event_store).get("g1").state == fold_records(StoredGame(), as_stored)


def test_a_log_with_an_old_version_loads_through_the_reference_readers(event_store):
    created = GameCreated("g2", PRESETS["standard"], (None, "random", "random", "random"))
    event_store.append("g2", 0, [of(created)], "c0", T0)
    v1 = NewEvent("PlayerJoined", 1, {"seat": 0, "name": "Ann", "credential": "x" * 8})
    event_store.append("g2", 1, [v1], "c1", T0)
    game = game_cache(event_store).get("g2").state
    assert game.state.seats[0].name == "Ann" and game.state.seats[0].player_id is None


def played(store: Any, game_id: str, rules: Any, hands: int) -> list[Any]:
    """A game of ``hands`` random hands appended to ``store``; its events."""
    events = random_game(game_id, rules, random.Random(game_id), max_hands=hands)
    play_log(store, game_id, events)
    return events


@pytest.mark.parametrize("hands", [1, 3])
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_load_folds_what_a_fold_of_every_event_gives(event_store, hands, preset):
    rules = PRESETS[preset]
    events = played(event_store, f"{preset}-{hands}", rules, hands)
    loaded = game_cache(event_store).get(f"{preset}-{hands}")
    assert loaded.version == len(events)
    assert loaded.state.state == fold(events)
    # and from a cached state part-way, as a cache hit catches up
    part = fold_records(StoredGame(), event_store.read(f"{preset}-{hands}", limit=len(events) // 2))
    rest = event_store.read(f"{preset}-{hands}", after=len(events) // 2, fast=decode_page)
    assert fold_records(part, rest).state == fold(events)


def damage_a_play_of_the_first_hand(store: Any, game_id: str) -> int:
    """Make the first CardPlayed's card one that is no card, as a tamperer would; its seq."""
    seq = 0

    def edit(envelopes: list[dict]) -> list[dict]:
        nonlocal seq
        first = envelopes[find(envelopes, "CardPlayed")]
        first["payload"]["card"] = "1X"
        seq = first["seq"]
        return envelopes

    tamper(store, game_id, edit, rehash_chain=False)
    return seq


def test_a_load_does_not_read_the_plays_of_hands_before_the_last(event_store):
    """The trade made for the load's speed: a damaged payload in an earlier hand's play does not
    stop the game being played on (the state never held it); every reader of the whole log
    (the replay, export, analysis, the audit) still refuses it."""
    events = played(event_store, "skips", PRESETS["standard"], 2)
    seq = damage_a_play_of_the_first_hand(event_store, "skips")
    assert game_cache(event_store).get("skips").state.state == fold(events)
    with pytest.raises(CorruptGame, match=f"seq {seq}"):
        game_log.read(event_store, "skips")


def test_a_clocked_game_reads_every_event(event_store):
    """A turn clock counts every move's time, so a clocked game's load reads every payload."""
    rules = replace(PRESETS["standard"], seconds_per_decision=30)
    played(event_store, "clocked", rules, 2)
    damage_a_play_of_the_first_hand(event_store, "clocked")
    with pytest.raises(CorruptGame):
        game_cache(event_store).get("clocked")


def test_a_payload_the_rules_cannot_apply_is_a_corrupt_game(event_store):
    created = GameCreated("g3", PRESETS["standard"], (None, None, None, None))
    play_log(event_store, "g3", [created])
    event_store.append("g3", 1, [NewEvent("CardPlayed", 1, {"seat": 0, "card": "2C"})], "c1", T0)
    with pytest.raises(CorruptGame, match="seq 2 does not apply"):
        game_cache(event_store).get("g3")
