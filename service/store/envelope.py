"""Event envelopes and the per-game hash chain.

The domain hands the service plain ``(type, schema_version, payload)`` triples
(:class:`NewEvent`). The event store wraps each one in an envelope
(:class:`RecordedEvent`) that adds ``game_id``, ``seq``, ``time``, ``command_id``
and links it into a SHA-256 hash chain, one chain per game.

Hash chain (normative; enough to verify it in another language)
-----------------------------------------------------------------
For the event with sequence number ``seq`` (1, 2, 3, ... per game):

1. ``prev_hash`` is the ``hash`` of the event with sequence number ``seq - 1`` of
   the same game, or, for ``seq == 1``, the genesis value: 64 ASCII ``"0"``
   characters (:data:`GENESIS_HASH`).
2. The *canonical body* is the JSON text of an object with exactly these seven
   members, as stored in the envelope:

   - ``type``: string
   - ``schema_version``: integer
   - ``game_id``: string
   - ``seq``: integer
   - ``time``: string (ISO-8601 UTC, as given by the writer; kept verbatim)
   - ``command_id``: string
   - ``payload``: object

   serialized like Python's ``json.dumps(obj, sort_keys=True,
   separators=(",", ":"), ensure_ascii=False, allow_nan=False)``, then encoded
   as UTF-8. Precisely:

   - no whitespace anywhere outside strings;
   - object members sorted by key, comparing keys by Unicode code point
     (this applies recursively to every object inside ``payload`` too;
     note: not UTF-16 code units, which differs only for non-BMP characters);
   - strings: ``"`` and ``\\`` are escaped as ``\\"`` and ``\\\\``; the control
     characters U+0008, U+000C, U+000A, U+000D, U+0009 as ``\\b``, ``\\f``,
     ``\\n``, ``\\r``, ``\\t``; every other character below U+0020 as ``\\u00XX``
     with lowercase hex digits; every other character (including ``/``, U+007F
     and all non-ASCII characters) is written literally as UTF-8;
   - integers in plain decimal (``-12``), ``true``, ``false``, ``null``;
   - NaN and infinities are refused. Payloads should not use floating-point
     numbers: they are written with Python's shortest round-trip ``repr``
     (e.g. ``0.1``, ``1e-07``, ``1e+16``), which other languages may format
     differently, so keep payloads to integers.

3. ``hash = lowercase_hex(SHA-256(ASCII(prev_hash) || canonical_body))``, i.e. the
   digest of the 64 hex characters of ``prev_hash`` followed immediately by the
   UTF-8 bytes of the canonical body.

``prev_hash`` and ``hash`` themselves are not part of the canonical body.

Stored form
-----------
The store keeps each event as the *envelope JSON*: the seven body members plus
``prev_hash`` and ``hash``, serialized with the same rules (see
:func:`envelope_json`). The hash covers the event exactly as it was written, with
the schema version it was written with. The store reads events back in that form
(:func:`decode_envelope` parses the envelope and nothing more), which is what
:func:`verify_chain` needs; turning a payload into a typed record, upcasting an old schema
version on the way, is the game log's job (``service.app.game_log``), and only its.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from service.cooperative import paced

GENESIS_HASH = "0" * 64

BODY_FIELDS = ("type", "schema_version", "game_id", "seq", "time", "command_id", "payload")
ENVELOPE_FIELDS = (*BODY_FIELDS, "prev_hash", "hash")


def canonical_json(obj: Any) -> str:
    """JSON text in the canonical form described in the module docstring."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


@dataclass(frozen=True)
class NewEvent:
    """An event the service wants appended: what the domain produced."""

    type: str
    schema_version: int
    payload: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.type, str) or not self.type:
            raise ValueError("event type must be a non-empty string")
        if (
            not isinstance(self.schema_version, int)
            or isinstance(self.schema_version, bool)
            or self.schema_version < 1
        ):
            raise ValueError("schema_version must be an integer >= 1")
        if not isinstance(self.payload, dict):
            raise ValueError("payload must be a dict")


@dataclass(frozen=True)
class RecordedEvent:
    """An event as recorded in a game's stream."""

    type: str
    schema_version: int
    game_id: str
    seq: int
    time: str
    command_id: str
    payload: dict
    prev_hash: str
    hash: str

    def body(self) -> dict:
        """The members covered by the hash."""
        return {name: getattr(self, name) for name in BODY_FIELDS}

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in ENVELOPE_FIELDS}

    def to_json(self) -> str:
        return canonical_json(self.to_dict())


def canonical_body(
    *,
    type: str,
    schema_version: int,
    game_id: str,
    seq: int,
    time: str,
    command_id: str,
    payload: Mapping,
) -> bytes:
    """UTF-8 bytes of the canonical body (see the module docstring)."""
    return canonical_json(
        {
            "type": type,
            "schema_version": schema_version,
            "game_id": game_id,
            "seq": seq,
            "time": time,
            "command_id": command_id,
            "payload": payload,
        }
    ).encode("utf-8")


def chain_hash(prev_hash: str, body: bytes) -> str:
    """``sha256_hex(prev_hash_hex + canonical_body)``."""
    return hashlib.sha256(prev_hash.encode("ascii") + body).hexdigest()


def seal(
    event: NewEvent, *, game_id: str, seq: int, time: str, command_id: str, prev_hash: str
) -> RecordedEvent:
    """Wrap a new event in an envelope and link it to ``prev_hash``.

    The payload of the result is a fresh copy (decoded from its canonical JSON),
    so later changes to ``event.payload`` do not alter the recorded event.
    """
    body = canonical_body(
        type=event.type,
        schema_version=event.schema_version,
        game_id=game_id,
        seq=seq,
        time=time,
        command_id=command_id,
        payload=event.payload,
    )
    decoded = json.loads(body)
    return RecordedEvent(
        type=decoded["type"],
        schema_version=decoded["schema_version"],
        game_id=decoded["game_id"],
        seq=decoded["seq"],
        time=decoded["time"],
        command_id=decoded["command_id"],
        payload=decoded["payload"],
        prev_hash=prev_hash,
        hash=chain_hash(prev_hash, body),
    )


def envelope_json(event: RecordedEvent) -> str:
    """The stored form of an event."""
    return event.to_json()


_TYPE_MEMBER = b',"type":"'


def envelope_type(data: str | bytes) -> str | None:
    """The ``type`` of a stored envelope without decoding it, or None if it cannot tell.

    Stored envelopes are canonical JSON (members sorted), so ``type`` is the last member: the
    text ends with ``,"type":"<type>"}``. An unescaped ``,"type":"`` can only be structure (a
    quote inside a string is escaped), and nothing but the top level's last member can be
    followed by the closing brace alone. Upcasting never changes an event's type.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    at = data.rfind(_TYPE_MEMBER)
    if at < 0 or not data.endswith(b'"}'):
        return None
    name = data[at + len(_TYPE_MEMBER) : -2]
    if b'"' in name or b"\\" in name:
        return None
    return name.decode("utf-8")


# msgspec decodes an envelope straight into a RecordedEvent in C, about 4x faster than
# ``json.loads`` + the dataclass (bench/README.md, "cold load"): every load, audit, export and
# replay decodes every envelope of the game. It checks the members' types as it goes, so it
# refuses some envelopes the reference path below accepts (a float seq, a NaN, a lone surrogate,
# a number too large for a float): those, and anything malformed, go through the reference path,
# which decides as it always did (same value or same error). Where msgspec succeeds, its values
# equal ``json.loads``'s (tests/store/test_envelope.py checks it with hypothesis).
_FAST_ENVELOPE = msgspec.json.Decoder(RecordedEvent)


def decode_envelope(data: str | bytes) -> RecordedEvent:
    """Parse a stored envelope into the event as stored (its payload as written, never
    upcast: the hash covers that form)."""
    try:
        return _FAST_ENVELOPE.decode(data)
    except Exception:  # refused or malformed: the reference path decides (value or error)
        pass
    return _decode_envelope_reference(data)


def decode_envelopes(data: Iterable[str | bytes]) -> list[RecordedEvent]:
    """:func:`decode_envelope` of each, in one pass with no Python call per envelope: any
    error (whatever msgspec refuses) and the caller decodes them one by one instead, as the
    reference path decides."""
    return list(map(_FAST_ENVELOPE.decode, data))


def _decode_envelope_reference(data: str | bytes) -> RecordedEvent:
    """:func:`decode_envelope` with the standard library alone: the behaviour of reference."""
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    raw = json.loads(data)
    missing = [name for name in ENVELOPE_FIELDS if name not in raw]
    if missing:
        raise ValueError(f"envelope lacks {', '.join(missing)}")
    return RecordedEvent(
        type=raw["type"],
        schema_version=raw["schema_version"],
        game_id=raw["game_id"],
        seq=raw["seq"],
        time=raw["time"],
        command_id=raw["command_id"],
        payload=raw["payload"],
        prev_hash=raw["prev_hash"],
        hash=raw["hash"],
    )


@dataclass(frozen=True)
class ChainProblem:
    """One defect found by :func:`verify_chain`."""

    seq: int
    reason: str
    detail: str = ""

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.reason}" + (f" ({self.detail})" if self.detail else "")


SEQ_GAP = "seq gap"
PREV_HASH_MISMATCH = "prev_hash mismatch"
HASH_MISMATCH = "hash mismatch"
GAME_ID_MISMATCH = "game_id mismatch"
UNHASHABLE = "unhashable body"


def verify_chain(
    events: Iterable[RecordedEvent],
    *,
    prev_hash: str = GENESIS_HASH,
    prev_seq: int = 0,
) -> list[ChainProblem]:
    """Recompute the hash chain of one game's events, in stream order.

    ``events`` must be as stored (not upcast). By default the chain must start at
    seq 1 from the genesis hash; to check a suffix, pass the ``prev_hash`` and
    ``prev_seq`` of the event before it.

    Returns the problems found, in stream order (empty if the chain is intact):
    the first one names the first bad seq. Each event is checked for, in this
    order: its seq following the previous one (``seq gap``), its ``prev_hash``
    equalling the previous event's stored ``hash`` (``prev_hash mismatch``),
    the same ``game_id`` as the first event (``game_id mismatch``), and its
    stored ``hash`` equalling the recomputed one (``hash mismatch``). Because
    each event is compared with the *stored* hash of its predecessor, one
    edited event yields one problem, at its own seq.
    """
    problems: list[ChainProblem] = []
    expected_prev = prev_hash
    expected_seq = prev_seq + 1
    game_id: str | None = None
    for event in paced(events):  # a long game: let the worker's other requests in
        if event.seq != expected_seq:
            problems.append(
                ChainProblem(event.seq, SEQ_GAP, f"expected seq {expected_seq}, got {event.seq}")
            )
        if event.prev_hash != expected_prev:
            problems.append(
                ChainProblem(
                    event.seq,
                    PREV_HASH_MISMATCH,
                    f"expected {expected_prev}, stored {event.prev_hash}",
                )
            )
        if game_id is None:
            game_id = event.game_id
        elif event.game_id != game_id:
            problems.append(
                ChainProblem(event.seq, GAME_ID_MISMATCH, f"{event.game_id!r} != {game_id!r}")
            )
        try:
            recomputed = chain_hash(event.prev_hash, canonical_body(**event.body()))
        except (TypeError, ValueError, UnicodeError) as exc:
            problems.append(ChainProblem(event.seq, UNHASHABLE, str(exc)))
        else:
            if recomputed != event.hash:
                problems.append(
                    ChainProblem(
                        event.seq, HASH_MISMATCH, f"stored {event.hash}, recomputed {recomputed}"
                    )
                )
        expected_prev = event.hash
        expected_seq = event.seq + 1
    return problems
