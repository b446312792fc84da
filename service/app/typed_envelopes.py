"""A page of stored envelopes decoded straight into typed records, in C: the cold load's decoder.

Every cache miss, replay and analysis folds a whole game, so each of its envelopes is decoded
and its payload turned into a domain event. Done as JSON -> ``RecordedEvent`` (payload a dict)
-> event, that is two passes and a Python call per event; here msgspec reads each envelope into
a struct whose ``payload`` is already the event (a tagged union on the envelope's ``type``), so
the only Python left per event is the card hook (bench/README.md, "cold load").

Only envelopes of the current schema versions qualify (``schema_version`` is a ``Literal``):
anything else, or anything msgspec refuses (a value of the wrong JSON type, a card that is no
card, a malformed text), fails the whole page, and the store decodes that page the reference way
(``RecordedEvent``, then :func:`service.app.game_log.decode` with its upcasting), which decides
as it always did. Where this decoder succeeds it gives what that path gives
(tests/app/test_typed_envelopes.py). The options of ``GameCreated`` and the service's own
records are few per game and have their own readers: their payloads stay dicts here, and
:func:`service.app.game_log.typed` reads them.

A typed envelope carries what a load uses (type, schema version, game id, seq, time, command
id, hash) but not ``prev_hash``, and its payload is not the stored JSON: it is never hashed or
exported (those read ``RecordedEvent``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Union

import msgspec

from domain.cards import Card
from domain.events import EVENT_TYPES, GameCreated, card_from_json
from service.app.deal_plan import (
    DEAL_PLAN,
    DEAL_PLAN_SCHEMA_VERSION,
    SEED_COMMITTED,
    SEED_COMMITTED_SCHEMA_VERSION,
)

# Payloads read by their own readers (game_log._READERS), not decoded here.
_DICT_PAYLOADS: dict[str, int] = {
    GameCreated.__name__: GameCreated.schema_version,  # RuleOptions has a JSON form of its own
    DEAL_PLAN: DEAL_PLAN_SCHEMA_VERSION,
    SEED_COMMITTED: SEED_COMMITTED_SCHEMA_VERSION,
}


class TypedEnvelope(msgspec.Struct, frozen=True, gc=False):
    """What every typed envelope has; each stored type's subclass adds its ``schema_version``
    (the current one, or the page fails) and its ``payload``, and names its ``type``.

    ``gc=False``: an envelope holds strings and its payload, never itself, so it cannot be part
    of a cycle; left untracked, a load's hundreds of envelopes do not trigger collections."""

    type: ClassVar[str]
    game_id: str
    seq: int
    time: str
    command_id: str
    hash: str


def _envelope_class(name: str, payload: Any, version: int) -> type[TypedEnvelope]:
    return msgspec.defstruct(
        f"{name}Envelope",
        [("schema_version", Literal[version]), ("payload", payload)],  # type: ignore[valid-type]
        bases=(TypedEnvelope,),
        tag_field="type",
        tag=name,
        namespace={"type": name},  # the tag, readable as on a RecordedEvent
        frozen=True,
        gc=False,
    )


def _decode_hook(tp: type, value: Any, _interned: dict[str, Card] = Card._interned) -> Any:
    # Called for every card (about 1,700 in a 10-hand game): the stored, canonical spelling is
    # one dict lookup; anything else is judged by card_from_json (InvalidCard refuses the page).
    try:
        return _interned[value]
    except (KeyError, TypeError):
        if tp is Card:
            return card_from_json(value)
        raise NotImplementedError(f"no decoder for {tp!r}") from None


_CLASSES = [
    _envelope_class(name, cls, cls.schema_version)
    for name, cls in EVENT_TYPES.items()
    if name not in _DICT_PAYLOADS
] + [_envelope_class(name, dict[str, Any], v) for name, v in _DICT_PAYLOADS.items()]

_DECODER = msgspec.json.Decoder(Union[tuple(_CLASSES)], dec_hook=_decode_hook)  # noqa: UP007


def decode_page(data: list[bytes]) -> list[Any]:
    """Each stored envelope of ``data`` as a typed envelope, in one pass; any error (whatever
    msgspec refuses) and the caller decodes the page the reference way."""
    return list(map(_DECODER.decode, data))
