"""A page of stored envelopes decoded in C, each payload read only when asked: the loads' decoder.

Every cache miss, replay and analysis reads a whole game. Here msgspec reads each envelope of a
page in one pass into a :class:`LazyEnvelope`, its payload kept as the raw JSON it was stored as
(checked to be JSON, not yet read); :func:`record_of` then reads a payload straight into its
domain event, in C but for the card hook. A fold reads only the payloads it needs: a load skips
the plays of every hand before the last (``domain.decider.needed``), most of a long game's log
(bench/README.md, "cold load").

Anything msgspec refuses in an envelope (a missing field, a value of the wrong JSON type,
malformed text) fails the whole page, and the store decodes that page the reference way
(``RecordedEvent``). A payload it does not read (an old schema version, a type without a
decoder here, or one msgspec refuses: a card that is no card) is read by the game log's own
readers, with their upcasting and their errors (:func:`service.app.game_log.typed`). Where this
decoder reads a record it is the record those readers give (tests/replay/test_typed_envelopes.py).
The options of ``GameCreated`` and the service's own records are few per game and have their
own readers: they are left to them.

A lazy envelope carries what the stored one does, but its payload is not the JSON text the hash
chain covers (it is the stored bytes, not re-serialized): it is never hashed or exported (those
read ``RecordedEvent``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import msgspec

from domain.cards import Card
from domain.events import EVENT_TYPES, Event, GameCreated, card_from_json, event_decoder
from domain.rules import RuleOptions
from service.app.deal_plan import DEAL_PLAN, SEED_COMMITTED

# Every type a game's log may hold: read as a Literal, each envelope's ``type`` is the one string
# object below (its hash computed once), not a new string per envelope; an unknown type refuses
# the page, and the reference path says what it is.
_StoredType = Literal[tuple([*EVENT_TYPES, DEAL_PLAN, SEED_COMMITTED])]  # type: ignore[valid-type]


class LazyEnvelope(msgspec.Struct, frozen=True, gc=False):
    """A stored envelope, its payload still the stored JSON (:func:`record_of` reads it).

    ``gc=False``: an envelope holds strings and bytes, never itself, so it cannot be part of a
    cycle; left untracked, a load's hundreds of envelopes do not trigger collections."""

    # In the stored order (sorted, as the canonical form writes them): msgspec matches each key
    # against the field after the last one first, so this order is one comparison a key.
    command_id: str
    game_id: str
    hash: str
    payload: msgspec.Raw
    prev_hash: str
    schema_version: int
    seq: int
    time: str
    type: _StoredType


def _decode_hook(tp: type, value: Any, _interned: dict[str, Card] = Card._interned) -> Any:
    # Called for every card read: the stored, canonical spelling is one dict lookup; anything
    # else is judged by card_from_json (InvalidCard: the payload goes to the reference reader).
    try:
        return _interned[value]
    except (KeyError, TypeError):
        if tp is Card:
            return card_from_json(value)
        raise NotImplementedError(f"no decoder for {tp!r}") from None


_ENVELOPES = msgspec.json.Decoder(LazyEnvelope)

_read_game_created = event_decoder(GameCreated.__name__)
# The options read per JSON text of them (as stored: the same options, the same text). Reading
# them checks every option (~30 us, a tenth of a cold load's decoding); most games share a few.
_RULES_READ: dict[bytes, RuleOptions] = {}
_RULES_KEPT = 256


def _game_created(payload: msgspec.Raw) -> GameCreated:
    # RuleOptions has a JSON form of its own (presets, named cycles): its own reader reads it.
    data = msgspec.json.decode(payload)
    text = msgspec.json.encode(data["rules"])
    rules = _RULES_READ.get(text)
    if rules is None:
        rules = RuleOptions.from_dict(data["rules"], recorded=True)  # as events.py reads it
        if len(_RULES_READ) >= _RULES_KEPT:
            _RULES_READ.clear()
        _RULES_READ[text] = rules
    data["rules"] = rules
    return _read_game_created(data)


# Per domain event type: its current schema version and the reader of such a payload (msgspec's,
# straight into the event, but for GameCreated).
_PAYLOADS: dict[str, tuple[int, Callable[[msgspec.Raw], Event]]] = {
    name: (
        cls.schema_version,
        _game_created
        if cls is GameCreated
        else msgspec.json.Decoder(cls, dec_hook=_decode_hook).decode,
    )
    for name, cls in EVENT_TYPES.items()
}


def decode_page(data: list[bytes]) -> list[LazyEnvelope]:
    """Each stored envelope of ``data`` as a lazy envelope, in one pass; any error (whatever
    msgspec refuses) and the caller decodes the page the reference way."""
    return list(map(_ENVELOPES.decode, data))


def record_of(envelope: LazyEnvelope) -> Event | None:
    """The envelope's domain event read by msgspec, or None if this reader does not take it (an
    old schema version, a type it has no reader for, a payload it refuses): the game log's own
    readers decide those."""
    reader = _PAYLOADS.get(envelope.type)
    if reader is None or envelope.schema_version != reader[0]:
        return None
    try:
        return reader[1](envelope.payload)
    except Exception:  # refused (a card that is no card, a bad enum, a missing field)
        return None


def stored_payload(envelope: LazyEnvelope) -> Any:
    """The envelope's payload as the stored JSON reads (a dict, for a well-formed one)."""
    return msgspec.json.decode(envelope.payload)
