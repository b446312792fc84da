"""Envelope encoding, the hash chain and upcasting (pure, no Redis)."""

from __future__ import annotations

import dataclasses
import hashlib
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.store.envelope import (
    GAME_ID_MISMATCH,
    GENESIS_HASH,
    HASH_MISMATCH,
    PREV_HASH_MISMATCH,
    SEQ_GAP,
    NewEvent,
    RecordedEvent,
    canonical_body,
    decode_envelope,
    envelope_json,
    seal,
    verify_chain,
)
from service.store.upcasting import UpcasterRegistry, default_registry

T0 = "2024-05-01T12:00:00.000000Z"


def chain(payloads, game_id="g", prev_hash=GENESIS_HASH, first_seq=1) -> list[RecordedEvent]:
    events = []
    for seq, payload in enumerate(payloads, start=first_seq):
        event = seal(
            NewEvent("E", 1, payload),
            game_id=game_id,
            seq=seq,
            time=T0,
            command_id="c",
            prev_hash=prev_hash,
        )
        events.append(event)
        prev_hash = event.hash
    return events


def test_canonical_body_bytes_are_exactly_specified():
    body = canonical_body(
        type="CardPlayed",
        schema_version=2,
        game_id="g-1",
        seq=7,
        time=T0,
        command_id="cmd",
        payload={"z": [1, True, None], "a": {"y": "é\n\u0001/", "b": -3}},
    )
    assert (
        body
        == (
            '{"command_id":"cmd","game_id":"g-1","payload":{"a":{"b":-3,"y":"é\\n\\u0001/"},'
            '"z":[1,true,null]},"schema_version":2,"seq":7,"time":"2024-05-01T12:00:00.000000Z",'
            '"type":"CardPlayed"}'
        ).encode()
    )


def test_hash_is_sha256_of_prev_hash_hex_then_body():
    (event,) = chain([{"k": "v"}])
    body = canonical_body(**event.body())
    assert event.prev_hash == "0" * 64
    assert event.hash == hashlib.sha256(b"0" * 64 + body).hexdigest()
    assert len(event.hash) == 64 and event.hash == event.hash.lower()


def test_envelope_round_trips():
    (event,) = chain([{"cards": ["QS", "2C"], "n": 3}])
    assert decode_envelope(envelope_json(event)) == event
    assert decode_envelope(envelope_json(event).encode()) == event
    with pytest.raises(ValueError):
        decode_envelope('{"type": "E"}')


def test_seal_copies_the_payload():
    payload = {"cards": ["QS"]}
    (event,) = chain([payload])
    payload["cards"].append("2C")
    assert event.payload == {"cards": ["QS"]}


def test_new_event_validation():
    with pytest.raises(ValueError):
        NewEvent("", 1, {})
    with pytest.raises(ValueError):
        NewEvent("E", 0, {})
    with pytest.raises(ValueError):
        NewEvent("E", True, {})
    with pytest.raises(ValueError):
        NewEvent("E", 1, [])  # type: ignore[arg-type]


def test_nan_is_refused():
    with pytest.raises(ValueError):
        chain([{"x": math.nan}])


def test_verify_chain_accepts_an_intact_chain_and_a_suffix():
    events = chain([{"n": n} for n in range(5)])
    assert verify_chain(events) == []
    assert verify_chain([]) == []
    assert verify_chain(events[2:], prev_hash=events[1].hash, prev_seq=2) == []
    assert verify_chain(events[2:])[0].seq == 3


def test_verify_chain_names_hash_mismatch():
    events = chain([{"n": n} for n in range(5)])
    events[2] = dataclasses.replace(events[2], payload={"n": 99})
    problems = verify_chain(events)
    assert [(p.seq, p.reason) for p in problems] == [(3, HASH_MISMATCH)]
    assert "seq 3: hash mismatch" in str(problems[0])


def test_verify_chain_names_seq_gap():
    events = chain([{"n": n} for n in range(5)])
    del events[1]
    problems = verify_chain(events)
    assert problems[0].seq == 3
    assert [p.reason for p in problems] == [SEQ_GAP, PREV_HASH_MISMATCH]


def test_verify_chain_names_prev_hash_mismatch():
    events = chain([{"n": n} for n in range(3)])
    # An event re-sealed on a wrong prev hash: its own hash is consistent, the link is not.
    events[1] = seal(
        NewEvent("E", 1, {"n": 1}), game_id="g", seq=2, time=T0, command_id="c", prev_hash="a" * 64
    )
    problems = verify_chain(events)
    assert [(p.seq, p.reason) for p in problems] == [
        (2, PREV_HASH_MISMATCH),
        (3, PREV_HASH_MISMATCH),
    ]


def test_verify_chain_names_game_id_mismatch():
    events = chain([{"n": 0}])
    events += chain([{"n": 1}], game_id="other", prev_hash=events[0].hash, first_seq=2)
    assert [(p.seq, p.reason) for p in verify_chain(events)] == [(2, GAME_ID_MISMATCH)]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
payloads = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


@given(st.lists(payloads, min_size=1, max_size=6), st.data())
def test_any_single_edit_is_found_at_its_seq(payload_list, data):
    events = chain(payload_list)
    assert verify_chain(events) == []
    assert [decode_envelope(envelope_json(e)) for e in events] == events
    index = data.draw(st.integers(0, len(events) - 1))
    field = data.draw(st.sampled_from(["payload", "time", "command_id", "type", "schema_version"]))
    original = events[index]
    replacement = {
        "payload": {**original.payload, "\x00edited": 1},
        "time": original.time + " ",
        "command_id": original.command_id + "x",
        "type": original.type + "x",
        "schema_version": original.schema_version + 1,
    }[field]
    events[index] = dataclasses.replace(original, **{field: replacement})
    problems = verify_chain(events)
    assert [(p.seq, p.reason) for p in problems] == [(index + 1, HASH_MISMATCH)]


# --- upcasting ------------------------------------------------------------------------


def test_upcasters_chain_and_leave_the_input_alone():
    registry = UpcasterRegistry()
    registry.register("Played", 1, lambda p: {"card": p["c"], "seat": p["s"]})

    @registry.register("Played", 2)
    def add_trick(payload):
        payload["trick"] = 0
        return payload

    stored = {"c": "QS", "s": 2}
    assert registry.upcast("Played", 1, stored) == (3, {"card": "QS", "seat": 2, "trick": 0})
    assert stored == {"c": "QS", "s": 2}
    assert registry.upcast("Played", 3, {"x": 1}) == (3, {"x": 1})
    assert registry.upcast("Other", 1, stored) == (1, stored)
    with pytest.raises(ValueError):
        registry.register("Played", 1, lambda p: p)
    assert ("Played", 1) not in default_registry


def test_decode_envelope_returns_the_stored_form():
    (event,) = chain([{"n": 1}])
    decoded = decode_envelope(envelope_json(event))
    assert decoded == event and verify_chain([decoded]) == []
