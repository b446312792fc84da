"""Replay, audit, export and import as application services: what the replay endpoints and the
CLI ask of a game's log. No HTTP here: callers say who looks (a seat, None for the public, ALL
for the server and the CLI), and errors are ``service.app.errors`` exceptions.

Everything reads the log through :mod:`service.app.game_log` and shows it as
:mod:`service.app.redaction` (from ``domain.secrecy``) allows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from domain.events import GameEnded, HandScored, PlayerJoined, SeatResumed
from domain.state import GameState, Phase
from service.app import game_log
from service.app.archiver import GAME_OVER_TYPES
from service.app.audit import AuditReport, audit_events
from service.app.deal_plan import seeded
from service.app.errors import (
    EventNotFound,
    GameAlreadyExists,
    GameInProgress,
    GameNotFound,
    HandNotFound,
    WritesUnavailable,
)
from service.app.export import export_events, export_text, parse_events, prepare_import
from service.app.game import StoredGame, fold_records
from service.app.game_log import IMPORTED
from service.app.game_service import Idempotency, game_id_for_key, new_game_id
from service.app.hand_records import HandRecord, HandTracker, Logged, Viewer, logged
from service.app.hand_records import hand_record as find_hand
from service.app.hand_records import hand_records as all_hands
from service.app.redaction import disclosure_for, redact_events
from service.store.append import DEFAULT_IDEMPOTENCY_TTL, IdempotencyRecord
from service.store.archive import mark_ended
from service.store.envelope import RecordedEvent, verify_chain
from service.store.errors import ConcurrencyConflict, IdempotencyKeyReused, WritesRefused
from service.store.event_store import RedisEventStore
from service.store.keys import utc_now_iso
from service.store.live import Watch
from service.store.upcasting import UpcasterRegistry


class Follower:
    """Follows one game's log for one viewer, holding only the folded state and the hand in
    play (a live stream runs for hours: it must not keep the whole log)."""

    def __init__(self, viewer: int | None, credential: str | None = None, since: int = 0) -> None:
        self.viewer = viewer
        self.tracker = HandTracker()
        self.seq = 0  # the last event folded
        self.seeded = False  # dealt from the creator's seed (its DealPlan was folded)
        # The seat's credential the viewer proved at seq ``since`` (its token's SHA-256).
        self.credential = credential
        self.since = since

    def superseded_at(self, entries: list[game_log.Entry]) -> int | None:
        """The index of the first of ``entries`` after ``since`` that gives the viewer's seat
        another credential than the one it proved (a resume: that token stops working, and a
        stream opened with it must stop too); None if none does."""
        if self.viewer is None or self.credential is None:
            return None
        for i, entry in enumerate(entries):
            event = entry.event
            if (
                entry.seq > self.since
                and isinstance(event, (PlayerJoined, SeatResumed))
                and event.seat == self.viewer
                and event.credential != self.credential
            ):
                return i
        return None

    @property
    def state(self) -> GameState:
        return self.tracker.state

    def skip(self, entries: list[game_log.Entry]) -> None:
        for _ in self._fold(entries):
            pass

    def items(self, entries: list[game_log.Entry], now: GameState | None = None) -> list[dict]:
        """``entries`` (the next ones) as the viewer may see them, given the game ``now`` (by
        default: as it stands after them). A HandScored carries the finished hand's record."""
        hand_before = self.state.hand_number
        reveals = {}
        for entry in self._fold(entries):
            if isinstance(entry.record, HandScored):
                reveals[entry.seq] = self.tracker.record()
        state = now if now is not None else self.state
        # A seeded game's hand seeds wait for its end (SEEDED_HAND_DEALT_SECRETS).
        hide_seeds = self.seeded and state.phase is not Phase.FINISHED
        for seq, record in reveals.items():
            if record is not None and hide_seeds:
                record = replace(record, seed=None, salt=None)
            reveals[seq] = record.to_dict() if record is not None else None
        disclosure = disclosure_for(state, self.viewer, self.seeded)
        items = redact_events(entries, disclosure, hand_before)
        for item in items:
            if item["seq"] in reveals:
                item["revealed_hand"] = reveals[item["seq"]]
        return items

    def _fold(self, entries: list[game_log.Entry]) -> Iterator[game_log.Entry]:
        """Feed the hand tracker the next ``entries``, yielding each as it is folded."""
        for entry in entries:  # a run without gaps: the game log checked it as it read
            if entry.event is not None:
                self.tracker.feed(Logged(entry.seq, entry.event))
            elif seeded([entry.record]):
                self.seeded = True
            self.seq = entry.seq
            yield entry


def _hide_seeds(entries: list[game_log.Entry]) -> bool:
    """A game dealt from its creator's seed and not over: its hand seeds stay hidden."""
    over = any(isinstance(e.record, GameEnded) for e in entries)
    return not over and seeded(e.record for e in entries)


@dataclass(frozen=True, slots=True)
class EventsPage:
    version: int  # the game's last seq
    phase: Phase
    items: list[dict[str, Any]]
    after: int

    @property
    def next_after(self) -> int:
        return self.items[-1]["seq"] if self.items else self.after

    @property
    def more(self) -> bool:
        return bool(self.items) and self.items[-1]["seq"] < self.version


@dataclass(frozen=True, slots=True)
class Stream:
    """A live stream about to start: the follower (past ``after``) and the backlog to send."""

    follower: Follower
    after: int
    backlog: list[game_log.Entry]


class Replay:
    """The log of the games in ``store`` as a product: events, hands, time travel, audit,
    export and import. ``upcasters``: the game log's (the global registry by default)."""

    def __init__(self, store: RedisEventStore, upcasters: UpcasterRegistry | None = None) -> None:
        self.store = store
        self.upcasters = upcasters

    def _read(self, game_id: str, limit: int | None = None) -> list[game_log.Entry]:
        entries = game_log.read(self.store, game_id, limit=limit, upcasters=self.upcasters)
        if not entries:
            raise GameNotFound(game_id)
        return entries

    def _stored(self, game_id: str, limit: int | None = None) -> list[RecordedEvent]:
        stored = game_log.stored(self.store, game_id, limit=limit)
        if not stored:
            raise GameNotFound(game_id)
        return stored

    def events(
        self,
        game_id: str,
        viewer: int | None,
        now: GameState,
        after: int,
        limit: int,
        version: int | None = None,
    ) -> EventsPage:
        """The events after seq ``after`` (at most ``limit``) as ``viewer`` may see them while
        the game stands at ``now`` (at ``version``, if the caller knows it). Reads the log up to
        ``after + limit`` only (the fold up to ``after`` decides what the page reveals)."""
        stored = self._read(game_id, after + limit)
        follower = Follower(viewer)
        follower.skip(stored[:after])
        items = follower.items(stored[after : after + limit], now)
        last = version if version is not None else self.store.version(game_id)
        return EventsPage(max(last, stored[-1].seq), now.phase, items, after)

    def stream(
        self,
        game_id: str,
        viewer: int | None,
        after: int,
        backlog: int | None = None,
        credential: str | None = None,
        since: int = 0,
    ) -> Stream | None:
        """Where a live stream after ``after`` starts; None if nothing more will ever come.
        ``backlog``: at most this many events of its backlog are read now (the stream reads
        the rest as it goes, a page at a time). ``credential``: what the viewer's token proved
        at seq ``since`` (see :meth:`Follower.superseded_at`)."""
        limit = after + backlog if backlog is not None else None
        stored = self._read(game_id, limit)
        follower = Follower(viewer, credential, since)
        follower.skip(stored[:after])
        if follower.state.phase in (Phase.FINISHED, Phase.EXPIRED):
            return None
        return Stream(follower, after, stored[after:])

    def next_page(self, game_id: str, after: int, limit: int) -> list[game_log.Entry]:
        """The game's entries after ``after``, at most ``limit`` (a stream's next page)."""
        return game_log.read(self.store, game_id, after, limit, upcasters=self.upcasters)

    def wait(self, watch: Watch, after: int, timeout: float) -> list[game_log.Entry]:
        """The entries of the watched game after ``after``, waiting up to ``timeout`` seconds
        for the first one (in the process's live hub: no Redis connection held)."""
        recorded = watch.wait(after, timeout)
        return list(game_log.entries(recorded, watch.game_id, after, self.upcasters))

    def hand(self, game_id: str, number: int, viewer: Viewer) -> tuple[int, HandRecord]:
        """(the game's version, hand ``number`` as ``viewer`` may see it)."""
        entries = self._read(game_id)
        record = find_hand(logged(entries), number, viewer, _hide_seeds(entries))
        if record is None:
            raise HandNotFound(game_id, number)
        return entries[-1].seq, record

    def hands(self, game_id: str, viewer: Viewer) -> list[HandRecord]:
        entries = self._read(game_id)
        return all_hands(logged(entries), viewer, _hide_seeds(entries))

    def state_at(self, game_id: str, at: int) -> StoredGame:
        """The game as it stood after event ``at`` (folded from the start: a game is short)."""
        stored = self._stored(game_id, limit=at)
        if stored[-1].seq < at:
            raise EventNotFound(game_id, stored[-1].seq, at)
        return fold_records(StoredGame(), stored, self.upcasters)

    def audit(self, game_id: str) -> AuditReport:
        """The audit of the log as stored. Never folds the game first: a damaged log is what
        the audit is for. An archived game's object is read and checked again, not taken from
        the copy this process decoded earlier: an object altered since is what it must find."""
        archive = self.store.archive
        if archive is not None:
            archive.forget_decoded(game_id)
        return audit_events(self._stored(game_id), game_id, self.upcasters)

    def export(self, game_id: str, *, finished_only: bool = True) -> dict[str, Any]:
        """The export document of a finished game, or of one that expired before it started
        (it holds no card); of any game for the server's operator, who sees every card anyway:
        ``finished_only=False``."""
        stored = self._stored(game_id)
        document = export_events(game_id, stored, utc_now_iso(), self.upcasters)
        over = (Phase.FINISHED.value, Phase.EXPIRED.value)
        if finished_only and document["phase"] not in over:
            raise GameInProgress(game_id)
        return document

    def export_text(self, document: dict[str, Any]) -> str:
        return export_text(document, self.upcasters)

    def import_(
        self,
        document: Any,
        game_id: str,
        idempotency: Idempotency | None = None,
        idempotency_ttl: int = DEFAULT_IDEMPOTENCY_TTL,
    ) -> Imported:
        """Import an export as the new game ``game_id``: ImportRefused unless it passes the
        audit, GameAlreadyExists if the id is taken. With an Idempotency-Key a retry gets the
        first answer and imports nothing. The API and CLI go through ``import_once``."""
        if idempotency is not None:
            stored = self.store.get_idempotent(game_id, idempotency.scope)
            if stored is not None:
                if stored[0] != idempotency.fingerprint:
                    raise IdempotencyKeyReused(idempotency.scope)
                return Imported(json.loads(stored[1]), replayed=True)
        prepared = prepare_import(document, game_id, self.upcasters)
        body = {
            "id": game_id,
            "version": len(prepared.events),
            "source_game_id": prepared.source_game_id,
        }
        record = None
        if idempotency is not None:
            record = IdempotencyRecord(
                idempotency.scope, idempotency.fingerprint, json.dumps(body), idempotency_ttl
            )
        try:
            result = self.store.append(
                game_id, 0, prepared.events, prepared.command_id, idempotency=record
            )
        except ConcurrencyConflict:
            raise GameAlreadyExists(game_id) from None
        except WritesRefused as exc:  # nothing written: the import may be retried as it is
            raise WritesUnavailable(exc.reason) from exc
        if result.replayed:
            return Imported(json.loads(result.response or "{}"), replayed=True)
        if prepared.events[-1].type in GAME_OVER_TYPES:
            # Nobody plays an imported game: it goes to the archive at the archiver's next
            # pass (its end marked as of the epoch; the projector's later mark keeps it),
            # not after HEARTS_ARCHIVE_AFTER in Redis (issue 42).
            mark_ended(self.store, [(game_id, _EPOCH)])
        return Imported(body, report=prepared.report)

    def import_once(
        self,
        document: Any,
        idempotency_for: Callable[[str], Idempotency | None],
        idempotency_ttl: int = DEFAULT_IDEMPOTENCY_TTL,
    ) -> Imported:
        """Import an export as the game whose id follows from its content (issue 18 item 6):
        importing an export already imported answers with that game (``existing``), appending
        nothing and without auditing it again, so the same game is never imported (nor counted
        in the statistics) twice. ``idempotency_for(game_id)``: the request's Idempotency-Key
        for that game, if any (a retry with it gets the first answer, another body 422)."""
        game_id = import_id_for_content(document)
        idempotency = idempotency_for(game_id)
        # A retry with its key answers as the first time (import_ replays its receipt).
        retry = idempotency is not None and self.store.get_idempotent(game_id, idempotency.scope)
        # The same content, if its hash chain holds (an altered copy goes on to the audit,
        # which refuses it); or imported before content named games, by its source and head.
        for known in (game_id, legacy_import_id(document)):
            if retry or known is None or not self.store.exists(known):
                continue
            if not verify_chain(parse_events(document)):
                return self._existing(known)
        try:
            return self.import_(document, game_id, idempotency, idempotency_ttl)
        except GameAlreadyExists:  # imported meanwhile by another request
            return self._existing(game_id)

    def _existing(self, game_id: str) -> Imported:
        first = self._stored(game_id, limit=1)[0]
        source = first.command_id.removeprefix(IMPORTED)
        body = {"id": game_id, "version": self.store.version(game_id), "source_game_id": source}
        return Imported(body, existing=True)


@dataclass(frozen=True, slots=True)
class Imported:
    body: dict[str, Any]  # id, version, source_game_id
    replayed: bool = False  # an idempotent retry: nothing was appended
    report: AuditReport | None = None  # the audit it passed (None on a retry)
    existing: bool = False  # this export was imported before: that game, nothing appended


def import_id_for_content(document: Any) -> str:
    """The id of the game an export is imported as: from its content (``content_digest``), so
    that a copy with its ids changed and its chain recomputed is the same game (issue 42: each
    such copy was a new game of megabytes); never an id a create would give. A document whose
    events are not even shaped as events gets a fresh id (the import refuses it anyway)."""
    digest = content_digest(document)
    return game_id_for_key(f"import\0{digest}") if digest is not None else new_game_id()


def legacy_import_id(document: Any) -> str | None:
    """The id imports had before issue 42: from the source game's id and its last hash."""
    source = document.get("game_id") if isinstance(document, dict) else None
    last_hash = document.get("last_hash") if isinstance(document, dict) else None
    if not isinstance(source, str) or not isinstance(last_hash, str):
        return None
    return game_id_for_key(f"import\0{source}\0{last_hash}")


# An imported game's end, as the index of ended games has it: long past any archive delay.
_EPOCH = "1970-01-01T00:00:00Z"

# Payload fields that say which game, who or when, not what was dealt and played: a copy that
# changes only them is the same game. Times stay out too (a clockless game's times are checked
# by nothing, so a copy would differ by a millisecond); a turn clock's time-outs are in the
# moves themselves (SeatTimedOut, whose seat and count are content).
_NOT_CONTENT = frozenset({"game_id", "credential", "player_id", "name", "at"})


def content_digest(document: Any) -> str | None:
    """SHA-256 of an export's content: each event's type, schema version and payload without
    the fields of ``_NOT_CONTENT`` (its deals, passes, plays, seeds and commitments), in
    order; None if the document has no list of event objects."""
    events = document.get("events") if isinstance(document, dict) else None
    if not isinstance(events, list) or not events:
        return None
    digest = hashlib.sha256()
    for event in events:
        if not isinstance(event, dict) or not isinstance(event.get("payload"), dict):
            return None
        item = [event.get("type"), event.get("schema_version"), _content(event["payload"])]
        digest.update(json.dumps(item, sort_keys=True, separators=(",", ":")).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _content(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _content(v) for k, v in value.items() if k not in _NOT_CONTENT}
    if isinstance(value, list):
        return [_content(v) for v in value]
    return value
