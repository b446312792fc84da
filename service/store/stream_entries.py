"""Stream entries as Redis returns them, made into the store's records: envelopes decoded
(a page at a time where it can), entry ids read as seqs, XREAD replies in either protocol, a
partition log's entries, and the pages of the game list."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from service.store.envelope import (
    RecordedEvent,
    decode_envelope,
    decode_envelopes,
    envelope_type,
)
from service.store.errors import CorruptStore

READ_PAGE = 1000  # entries per XRANGE of a long read

# A reader's own decoder of a page of stored envelopes (their bytes, in order), tried before the
# store's: it may raise on anything it does not take, and the page is then decoded as stored.
PageDecoder = Callable[[list[bytes]], list[Any]]


def text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def field(fields: dict, name: str) -> Any:
    """A stream entry's field, whether the client decodes responses or not."""
    value = fields.get(name.encode())
    if value is None:
        value = fields.get(name)
    if value is None:
        raise CorruptStore(f"stream entry lacks the {name!r} field")
    return value


def seq_of(entry_id: Any) -> int:
    """The seq of a game stream's entry id (``<seq>-0``)."""
    entry = text(entry_id)
    seq, _, sub = entry.partition("-")
    if sub != "0" or not seq.isdigit():
        raise CorruptStore(f"unexpected game stream entry id {entry!r}")
    return int(seq)


def xread_entries(reply: Any) -> list:
    """The (id, fields) entries of an XREAD reply, RESP2 or RESP3."""
    entries: list = []
    if isinstance(reply, dict):  # RESP3
        for stream_entries in reply.values():
            entries += stream_entries[0] if stream_entries else []
    else:
        for _, stream_entries in reply or []:
            entries += stream_entries
    return entries


def xread_streams(reply: Any) -> list[tuple[str, list]]:
    """(stream key, its (id, fields) entries) of an XREAD reply, RESP2 or RESP3."""
    if isinstance(reply, dict):  # RESP3
        return [(text(key), entries[0] if entries else []) for key, entries in reply.items()]
    return [(text(key), entries) for key, entries in reply or []]


def decode_stored(data: Any) -> RecordedEvent:
    """One stored envelope, as stored; :class:`CorruptStore` if it does not decode."""
    try:
        return decode_envelope(data)
    except (ValueError, KeyError) as exc:
        raise CorruptStore(f"undecodable envelope: {exc}") from exc


def decode_page(entries: list[Any], fast: PageDecoder | None = None) -> list[Any]:
    """The events of a page of a game's stream entries: offered to ``fast`` first (a reader's
    own decoder), else decoded as stored."""
    try:  # the common case in one pass (a load's hot loop): bytes keys, envelopes msgspec reads
        data = [fields[b"event"] for _, fields in entries]
    except Exception:  # str keys, a missing field: one by one
        return [decode_stored(field(fields, "event")) for _, fields in entries]
    if fast is not None:
        try:
            return fast(data)
        except Exception:  # whatever it refuses is decoded as stored, and judged so
            pass
    try:
        return decode_envelopes(data)
    except Exception:  # an envelope msgspec refuses: one by one, as the reference decides
        return [decode_stored(item) for item in data]


class LogEntry:
    """One entry of a partition log: ``id``, ``game_id``, ``seq``, ``type`` and ``event``.

    Read from the log, the envelope is decoded (as stored) on the first use of ``event``; its
    ``type`` is read from the stored text without decoding it (see
    :func:`~service.store.envelope.envelope_type`), so a reader that skips the types it has no
    use for (the projector: most events change no read model) pays no JSON for them.
    """

    __slots__ = ("id", "game_id", "seq", "_event", "_raw", "_decode", "_type")

    def __init__(
        self,
        id: str,
        game_id: str,
        seq: int,
        event: RecordedEvent | None = None,
        *,
        raw: bytes | str | None = None,
        decode: Callable[[Any], RecordedEvent] | None = None,
    ) -> None:
        if event is None and (raw is None or decode is None):
            raise ValueError("a log entry needs its event, or its stored envelope and a decoder")
        self.id = id
        self.game_id = game_id
        self.seq = seq
        self._event = event
        self._raw = raw
        self._decode = decode
        self._type = event.type if event is not None else envelope_type(raw)  # type: ignore[arg-type]

    @property
    def event(self) -> RecordedEvent:
        if self._event is None:
            assert self._decode is not None
            self._event = self._decode(self._raw)
            self._raw = None
        return self._event

    @property
    def type(self) -> str:
        if self._type is None:
            self._type = self.event.type
        return self._type

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LogEntry):
            return NotImplemented
        return (self.id, self.game_id, self.seq, self.event) == (
            other.id,
            other.game_id,
            other.seq,
            other.event,
        )

    def __hash__(self) -> int:
        return hash((self.id, self.game_id, self.seq))

    def __repr__(self) -> str:
        where = f"id={self.id!r}, game_id={self.game_id!r}, seq={self.seq}"
        return f"LogEntry({where}, type={self.type!r})"


def log_entries(entries: Sequence[tuple[Any, dict]]) -> list[LogEntry]:
    """Log entries from a reply's ``(id, fields)`` pairs (XRANGE, XREAD, XREADGROUP); each
    envelope is decoded when its event is first used."""
    out = []
    for entry_id, fields in entries:
        game_id = fields.get(b"game_id") or field(fields, "game_id")
        seq = fields.get(b"seq") or field(fields, "seq")
        raw = fields.get(b"event") or field(fields, "event")
        out.append(LogEntry(text(entry_id), text(game_id), int(seq), raw=raw, decode=decode_stored))
    return out


@dataclass(frozen=True)
class GamePage:
    """A page of :meth:`RedisEventStore.list_games`; ``next_cursor`` is None on the last."""

    game_ids: list[str]
    next_cursor: str | None


def encode_cursor(score: int, game_id: str) -> str:
    raw = json.dumps([score, game_id], separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        score, game_id = json.loads(raw)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise ValueError("invalid cursor") from exc
    if not isinstance(score, int) or not isinstance(game_id, str):
        raise ValueError("invalid cursor")
    return score, game_id
