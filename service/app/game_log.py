"""The game log: the one reader that turns a game's stored envelopes into typed records.

Every use of a game's or a partition's past goes through here: the game fold
(:mod:`service.app.game`), hand records, the replay endpoints, the audit, export, the live stream
and the projector. The store returns events as written (:class:`RecordedEvent`, never upcast);
an entry carries what the envelope has (seq, time, command id, hash) and one typed record: a
domain event (``domain.events``) or a service record (the
:class:`~service.app.deal_plan.DealPlan`). Old schema versions are upcast here, and only here,
with the upcasters of :mod:`service.store.upcasting`; callers compare records by class
(``isinstance(entry.record, HandDealt)``), never by type name.

A log that cannot be read (an event missing from the seq order, a payload that does not decode,
a type nobody knows) raises :class:`~service.app.errors.CorruptGame`; only the audit reads such
a log to the end, and it uses :func:`decode` event by event to report each defect instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from domain.decider import SUPERSEDED_BY_DEAL
from domain.events import EVENT_TYPES, Event, event_decoder, event_to_dict
from projections.scoreboard import RELEVANT, SourceEvent
from service.app.deal_plan import (
    DEAL_PLAN,
    DEAL_PLAN_SCHEMA_VERSION,
    SEED_COMMITTED,
    SEED_COMMITTED_SCHEMA_VERSION,
    SERVICE_RECORDS,
    DealPlan,
    SeedCommitted,
)
from service.app.errors import CorruptGame
from service.app.typed_envelopes import LazyEnvelope, decode_page, record_of, stored_payload
from service.store.envelope import RecordedEvent
from service.store.event_store import RedisEventStore
from service.store.stream_entries import LogEntry
from service.store.upcasting import UpcasterRegistry, default_registry

# An imported game's events are appended under this command id prefix (service/app/export.py):
# its folded game and its scoreboard say so (service/app/game.py, projections.scoreboard).
IMPORTED = "import:"

Record = Event | DealPlan | SeedCommitted
# An envelope as the store read it: as stored, or decoded straight into its record.
Stored = RecordedEvent | LazyEnvelope


class Undecodable(ValueError):
    """One stored event that cannot become a typed record (unknown type, bad payload)."""


class Entry(NamedTuple):
    """One entry of a game's log: the envelope's facts and the typed record it holds.

    A named tuple rather than a frozen dataclass: one is made per event read, on every load.
    """

    seq: int
    time: str
    command_id: str
    hash: str
    record: Record

    @property
    def event(self) -> Event | None:
        """The domain event, or None for a service record."""
        return None if isinstance(self.record, SERVICE_RECORDS) else self.record


# Per stored type: its current schema version and the reader of a payload at that version.
_READERS: dict[str, tuple[int, Callable[[dict[str, Any]], Record]]] = {
    **{name: (cls.schema_version, event_decoder(name)) for name, cls in EVENT_TYPES.items()},
    DEAL_PLAN: (DEAL_PLAN_SCHEMA_VERSION, DealPlan.from_payload),
    SEED_COMMITTED: (SEED_COMMITTED_SCHEMA_VERSION, SeedCommitted.from_payload),
}


def decode(recorded: RecordedEvent, upcasters: UpcasterRegistry | None = None) -> Record:
    """The typed record of one envelope (as stored or already upcast); Undecodable if none."""
    return _decode(recorded.type, recorded.schema_version, recorded.payload, upcasters)


def _decode(
    kind: str, version: int, payload: Any, upcasters: UpcasterRegistry | None = None
) -> Record:
    reader = _READERS.get(kind)
    if reader is None:
        raise Undecodable(f"unknown event type {kind!r}")
    current, read = reader
    try:
        if version != current:  # stored by an older version: upcast it
            registry = upcasters if upcasters is not None else default_registry
            version, payload = registry.upcast(kind, version, payload)
            if version != current:
                raise Undecodable(f"schema version {version}, current is {current}")
        return read(payload)
    except Undecodable:
        raise
    except Exception as exc:  # any malformed payload: one error type for every reader
        raise Undecodable(f"undecodable {kind} event: {exc}") from exc


def typed(
    recorded: Sequence[Stored],
    game_id: str | None = None,
    after: int | None = None,
    upcasters: UpcasterRegistry | None = None,
    superseded: int = 0,
    consecutive: bool = False,
) -> Iterator[tuple[Stored, Record]]:
    """Each envelope of ``recorded`` with its typed record: one game's events from seq
    ``after + 1`` on, in order (by default from the first one given, of the game it names).
    An envelope read by :func:`~service.app.typed_envelopes.decode_page` has its payload read
    by msgspec where it can be, else as stored.

    Of the first ``superseded`` envelopes, those of an event a later deal supersedes
    (``domain.decider.SUPERSEDED_BY_DEAL``) are checked for their seq and nothing more: neither
    read nor yielded (a fold from a last deal among the ``superseded`` first passes its index).

    CorruptGame if a seq is missing (or repeated), unless the caller has checked them
    (``consecutive``), or an event cannot be decoded. The lean form of :func:`entries`, for the
    fold every load does.
    """
    if not recorded:
        return
    gap = None if consecutive else _first_gap(recorded, after)
    todo = recorded if gap is None else recorded[:gap]  # the entries before a gap are yielded
    if superseded:
        skipped = _SUPERSEDED
        todo = [r for r in todo[:superseded] if r.type not in skipped] + list(todo[superseded:])
    for r in todo:
        kind = r.type
        if type(r) is LazyEnvelope:
            record = record_of(r)
            if record is not None:
                yield r, record
                continue
        try:
            payload = r.payload if type(r) is RecordedEvent else stored_payload(r)
            reader = _READERS.get(kind)
            # The common case inline (a current-version event): this runs on every load.
            if reader is not None and r.schema_version == reader[0]:
                record = reader[1](payload)
            else:
                record = _decode(kind, r.schema_version, payload, upcasters)
        except Exception as exc:
            why = exc if isinstance(exc, Undecodable) else f"undecodable {kind} event: {exc}"
            raise CorruptGame(game_id or r.game_id, f"seq {r.seq}: {why}") from None
        yield r, record
    if gap is not None:
        r = recorded[gap]
        due = "a number" if type(r.seq) is not int else _first(recorded, after) + gap
        raise CorruptGame(game_id or r.game_id, f"seq {r.seq!r} where {due} was due")


def _first(recorded: Sequence[Stored], after: int | None) -> int:
    return recorded[0].seq if after is None else after + 1


def _first_gap(recorded: Sequence[Stored], after: int | None) -> int | None:
    """The index of the first envelope of ``recorded`` whose seq does not follow the one before
    it (from ``after + 1`` if given), or None if they all do."""
    first = _first(recorded, after)
    seqs = [r.seq for r in recorded]  # one comparison of lists: this runs on every load
    if type(first) is not int:
        return 0
    if seqs == list(range(first, first + len(seqs))):
        return None
    return next(i for i, seq in enumerate(seqs) if type(seq) is not int or seq != first + i)


def entries(
    recorded: Sequence[Stored],
    game_id: str | None = None,
    after: int | None = None,
    upcasters: UpcasterRegistry | None = None,
) -> Iterator[Entry]:
    """The typed entries of ``recorded`` (see :func:`typed`)."""
    for r, record in typed(recorded, game_id, after, upcasters):
        yield Entry(r.seq, r.time, r.command_id, r.hash, record)


def stored(
    store: RedisEventStore, game_id: str, after: int = 0, limit: int | None = None
) -> list[RecordedEvent]:
    """The game's envelopes after seq ``after`` (at most ``limit``) as stored, not decoded:
    for the audit and export (the hash chain covers that form) and the fold, which decodes
    them with :func:`typed`."""
    return store.read(game_id, after, limit)


def read(
    store: RedisEventStore,
    game_id: str,
    after: int = 0,
    limit: int | None = None,
    upcasters: UpcasterRegistry | None = None,
) -> list[Entry]:
    """The game's entries after seq ``after`` (at most ``limit``)."""
    events = store.read(game_id, after, limit, fast=decode_page)
    return list(entries(events, game_id, after, upcasters))


def follow(
    store: RedisEventStore,
    game_id: str,
    after: int,
    block_ms: int,
    upcasters: UpcasterRegistry | None = None,
) -> list[Entry]:
    """The game's entries after seq ``after``, waiting up to ``block_ms`` for the first one
    (the store's ``follow``); empty if none came in time."""
    return list(entries(store.follow(game_id, after, block_ms), game_id, after, upcasters))


def payload_of(record: Record) -> tuple[str, int, dict[str, Any]]:
    """(type name, schema version, payload) of a typed record, in its current JSON form."""
    if isinstance(record, DealPlan):
        return DEAL_PLAN, DEAL_PLAN_SCHEMA_VERSION, record.to_payload()
    if isinstance(record, SeedCommitted):
        return SEED_COMMITTED, SEED_COMMITTED_SCHEMA_VERSION, record.to_payload()
    cls = type(record)
    return cls.__name__, getattr(cls, "schema_version", 1), event_to_dict(record)


def events(log: Iterable[Entry]) -> Iterator[tuple[int, Event]]:
    """(seq, domain event) of the entries that hold one; service records are skipped."""
    for entry in log:
        if not isinstance(entry.record, SERVICE_RECORDS):
            yield entry.seq, entry.record


def read_partition(
    store: RedisEventStore,
    partition: int,
    after_id: str = "0-0",
    count: int = 100,
    upcasters: UpcasterRegistry | None = None,
) -> list[SourceEvent]:
    """The entries of a partition log after stream id ``after_id`` (at most ``count``), as the
    projections take them (see :func:`sources`)."""
    return sources(store.read_log(partition, after_id, count), upcasters)


def sources(
    log_entries: Iterable[LogEntry], upcasters: UpcasterRegistry | None = None
) -> list[SourceEvent]:
    """Entries of a partition log as the projections take them: typed domain events (None for
    a service record). CorruptGame if one cannot be decoded.

    An event of a known type that no read model uses (most of a log: plays, passes) is passed
    on undecoded, as None with no time: the projections only move its game's seq on, and its
    envelope's JSON is the larger part of a rebuild's cost.
    """
    out = []
    for entry in log_entries:
        if entry.type in _UNPROJECTED:
            out.append(SourceEvent(entry.game_id, entry.seq, None, "", entry.id))
            continue
        r = entry.event
        if entry.type == DEAL_PLAN:  # written only when the creator chose the deals
            # Its payload is in the game's stream only (service.store.append's
            # STREAM_ONLY_PAYLOADS): its being there is all the projections use.
            out.append(SourceEvent(entry.game_id, entry.seq, None, r.time, entry.id, True))
            continue
        try:
            record = decode(r, upcasters)
        except Undecodable as exc:
            raise CorruptGame(entry.game_id, f"seq {entry.seq}: {exc}") from None
        if isinstance(record, SeedCommitted):  # a service record no read model uses
            out.append(SourceEvent(entry.game_id, entry.seq, None, r.time, entry.id))
            continue
        # An imported game's events carry the import's command id (service/app/game.py).
        imported = entry.seq == 1 and r.command_id.startswith(IMPORTED)
        out.append(SourceEvent(entry.game_id, entry.seq, record, r.time, entry.id, False, imported))
    return out


# The stored types of the events a later deal supersedes (``typed``'s ``superseded``).
_SUPERSEDED = frozenset(cls.__name__ for cls in SUPERSEDED_BY_DEAL)

# Stored types the projections never look into (see projections.scoreboard.RELEVANT).
_UNPROJECTED = frozenset(name for name, cls in EVENT_TYPES.items() if not issubclass(cls, RELEVANT))
