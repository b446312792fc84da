"""The fast decoders agree with the reference ones on everything, malformed input included.

A load decodes every envelope with msgspec (``decode_envelope``) and every payload with a decoder
written per event class (``domain.events``). Both replaced slower code whose behaviour is the
reference: the standard library's ``json.loads`` into a ``RecordedEvent``, and a loop over the
event's fields. Whatever the input, the fast path must give the same value or raise the same
error (type and message) as the reference: the audit reports those errors, and the hash chain is
recomputed from the decoded values.
"""

from __future__ import annotations

import json
import math
import typing
from dataclasses import MISSING, fields
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.cards import Card
from domain.events import (
    EVENT_TYPES,
    CardPlayed,
    CardsPassed,
    GameAbandoned,
    GameCreated,
    GameEnded,
    GameExpired,
    HandDealt,
    HandScored,
    MoonScoringChosen,
    PassesExchanged,
    PlayerJoined,
    SeatControlChanged,
    SeatResumed,
    SeatTimedOut,
    SeedContributed,
    TrickTaken,
    _converter,
    event_decoder,
    event_from_dict,
    event_to_dict,
)
from domain.rules import PRESETS, MoonScoring, PassDirection
from service.store.envelope import (
    GENESIS_HASH,
    NewEvent,
    _decode_envelope_reference,
    canonical_json,
    decode_envelope,
    envelope_json,
    seal,
)

T0 = "2024-05-01T12:00:00.000000Z"


def outcome(decode: Any, *args: Any) -> tuple[str, Any]:
    """What a decoder did: its value, or its error's type and message."""
    try:
        return ("value", decode(*args))
    except Exception as exc:  # the comparison is the point: any error, compared exactly
        return ("error", (type(exc), str(exc)))


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to itself and ints told apart from floats and bools."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and repr(a) == repr(b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "__dataclass_fields__"):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in fields(a))
    return a == b


# -- envelopes ------------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**200), max_value=2**200)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # lone surrogates included: json.loads reads "\ud800", msgspec does not
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def envelope_text(payload: Any, /, **overrides: Any) -> str:
    members = {
        "type": "CardPlayed",
        "schema_version": 1,
        "game_id": "g",
        "seq": 1,
        "time": T0,
        "command_id": "c",
        "payload": payload,
        "prev_hash": GENESIS_HASH,
        "hash": "f" * 64,
        **overrides,
    }
    # Not canonical on purpose (NaN allowed, ASCII escapes): a damaged store can hold anything.
    return json.dumps(members, allow_nan=True)


@given(payload=json_values)
def test_a_stored_envelope_decodes_as_the_reference_does(payload):
    event = seal(
        NewEvent("E", 1, {"v": payload}) if _hashable(payload) else NewEvent("E", 1, {}),
        game_id="g",
        seq=1,
        time=T0,
        command_id="c",
        prev_hash=GENESIS_HASH,
    )
    data = envelope_json(event).encode("utf-8")
    fast, reference = decode_envelope(data), _decode_envelope_reference(data)
    assert same(fast, reference) and fast == event
    # the canonical bytes the chain covers come back exactly from the decoded event
    assert envelope_json(fast) == envelope_json(reference) == data.decode("utf-8")


def _hashable(value: Any) -> bool:
    try:
        canonical_json(value).encode("utf-8")
    except (ValueError, UnicodeError):
        return False
    return True


@given(
    payload=json_values,
    member=st.sampled_from(
        [
            "type",
            "schema_version",
            "game_id",
            "seq",
            "time",
            "command_id",
            "payload",
            "prev_hash",
            "hash",
            None,
        ]
    ),
    value=json_values,
    as_bytes=st.booleans(),
)
def test_any_envelope_text_decodes_or_fails_as_the_reference_does(payload, member, value, as_bytes):
    overrides = {} if member is None else {member: value}
    text = envelope_text(payload, **overrides)
    data: str | bytes = text.encode("utf-8", "surrogatepass") if as_bytes else text
    fast, reference = outcome(decode_envelope, data), outcome(_decode_envelope_reference, data)
    assert fast[0] == reference[0]
    assert same(fast[1], reference[1])


@given(data=st.data())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_a_damaged_envelope_fails_or_decodes_as_the_reference_does(data):
    text = envelope_text({"card": "QS", "seat": 2}).encode("utf-8")
    cut = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(cut, len(text)))
    insert = data.draw(
        st.binary(max_size=6) | st.sampled_from([b"NaN", b"\\ud800", b'"', b",", b"}"])
    )
    damaged = text[:cut] + insert + text[end:]
    fast, reference = (
        outcome(decode_envelope, damaged),
        outcome(_decode_envelope_reference, damaged),
    )
    assert fast[0] == reference[0]
    assert same(fast[1], reference[1])


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN}',
        '{"a": 1e400}',
        '{"a": "\\ud800"}',
        '{"a": 123456789012345678901234567890}',
        '{"a": 1, "a": 2}',
        "[1, 2]",
        '"payload"',
    ],
)
def test_what_msgspec_refuses_is_decided_by_the_reference(text):
    data = envelope_text(None).replace("null", text, 1)
    fast, reference = outcome(decode_envelope, data), outcome(_decode_envelope_reference, data)
    assert fast[0] == reference[0] == "value"
    assert same(fast[1], reference[1])


def test_a_well_formed_envelope_takes_the_fast_path(monkeypatch):
    import service.store.envelope as envelope

    def refuse(data: Any) -> Any:
        raise AssertionError("the reference path was used")

    monkeypatch.setattr(envelope, "_decode_envelope_reference", refuse)
    event = seal(
        NewEvent("CardPlayed", 1, {"card": "QS", "seat": 2}),
        game_id="g",
        seq=1,
        time=T0,
        command_id="c",
        prev_hash=GENESIS_HASH,
    )
    assert decode_envelope(envelope_json(event).encode("utf-8")) == event
    assert decode_envelope(envelope_json(event)) == event


def test_a_seq_of_the_wrong_type_is_kept_as_the_reference_keeps_it():
    for seq in (1.0, True, "1", None):
        data = envelope_text({}, seq=seq)
        assert same(decode_envelope(data), _decode_envelope_reference(data))


def test_an_envelope_lacking_a_member_fails_as_before():
    data = json.dumps({"type": "E", "seq": 1})
    fast, reference = outcome(decode_envelope, data), outcome(_decode_envelope_reference, data)
    assert fast == reference
    assert fast[0] == "error" and fast[1][0] is ValueError and "lacks" in fast[1][1]


# -- event payloads -------------------------------------------------------------------------------

QS, TWO_C, AH = Card("QS"), Card("2C"), Card("AH")
EXAMPLES = [
    GameCreated("g", PRESETS["standard"], (None, "random", None, "montecarlo")),
    PlayerJoined(0, "Ann", "x" * 8),
    PlayerJoined(1, "Bob"),
    PlayerJoined(2, "Cy", "y" * 8, "p1"),
    SeatResumed(2, "z" * 8),
    SeatControlChanged(2, "heuristic"),
    SeatControlChanged(2, None),
    HandDealt(1, 0, PassDirection.LEFT, ((QS,), (TWO_C,), (AH,), ()), (), "s", "c", False),
    CardsPassed(1, (QS, TWO_C, AH)),
    CardsPassed(1, ()),
    PassesExchanged(((QS,), (TWO_C,), (AH,), ()), ()),
    CardPlayed(3, QS),
    TrickTaken(1, 2, ((0, TWO_C), (1, QS), (2, AH), (3, Card("3C"))), 14, (Card("4C"),)),
    MoonScoringChosen(1, MoonScoring.ADD_TO_OTHERS),
    HandScored(
        1, (26, 0, 0, 0), 0, "moon", MoonScoring.ADD_TO_OTHERS, (0, 26, 26, 26), (), (0, 26, 26, 26)
    ),
    HandScored(2, (13, 13, 0, 0), None, None, None, (13, 13, 0, 0), (1,), (13, 39, 26, 26)),
    GameEnded((2, 3), (100, 52, 20, 20)),
    GameExpired("2026-11-23T21:08:00.000000Z"),
    SeatTimedOut(2, "2026-11-26T14:30:00.000000Z"),
    GameAbandoned(1, "2026-11-26T14:30:00.000000Z"),
    SeedContributed(2, 1, "c0ffee"),
]


def test_every_event_type_has_an_example():
    assert {type(e).__name__ for e in EXAMPLES} == set(EVENT_TYPES)


def reference_decoder(cls: type) -> Any:
    """The decoder the generated ones replaced: a loop over the fields (kept here as the
    reference)."""
    hints = typing.get_type_hints(cls)
    plan = [(f.name, _converter(hints[f.name]) or (lambda v: v), f.default) for f in fields(cls)]

    def decode(payload: dict[str, Any]) -> Any:
        try:
            # A field with a default may be left out (as the constructor allows).
            return cls(*[c(payload[n]) if d is MISSING or n in payload else d for n, c, d in plan])
        except KeyError as missing:
            raise ValueError(f"{cls.__name__} payload lacks {missing}") from None

    return decode


REFERENCE = {name: reference_decoder(cls) for name, cls in EVENT_TYPES.items()}


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_every_event_round_trips_through_its_decoder(event):
    name = type(event).__name__
    payload = json.loads(json.dumps(event_to_dict(event)))
    assert event_from_dict(name, payload) == event == event_decoder(name)(payload)
    assert same(event_decoder(name)(payload), REFERENCE[name](payload))


def damaged(payload: dict[str, Any], damage: list[tuple[str, int, Any]]) -> dict[str, Any]:
    """``payload`` with members dropped or set to other JSON values (a hypothesis draw)."""
    payload = dict(payload)
    keys = list(payload)
    for action, at, value in damage:
        key = keys[at % len(keys)]
        if action == "drop":
            payload.pop(key, None)
        else:
            payload[key] = value
    return payload


@given(
    event=st.sampled_from(EXAMPLES),
    damage=st.lists(
        st.tuples(st.sampled_from(["drop", "set"]), st.integers(0, 20), json_values), max_size=3
    ),
    extra=st.dictionaries(st.text(max_size=3), json_values, max_size=2),
)
def test_a_malformed_payload_fails_or_decodes_as_the_reference_does(event, damage, extra):
    name = type(event).__name__
    payload = damaged({**extra, **event_to_dict(event)}, damage)
    fast = outcome(event_from_dict, name, payload)
    reference = outcome(REFERENCE[name], payload)
    assert fast[0] == reference[0]
    assert same(fast[1], reference[1])


@pytest.mark.parametrize("payload", [None, [], "x", 3])
def test_a_payload_that_is_not_an_object_fails_as_before(payload):
    for name in EVENT_TYPES:
        fast, reference = outcome(event_from_dict, name, payload), outcome(REFERENCE[name], payload)
        assert fast == reference and fast[0] == "error"


def test_an_unknown_type_is_a_value_error():
    with pytest.raises(ValueError, match="unknown event type 'Nope'"):
        event_from_dict("Nope", {})
