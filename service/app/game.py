"""A stored game: its stream folded into the domain state plus the service's deal plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from domain.clock import Clock, moment, tick
from domain.decider import apply, draft, fold
from domain.events import (
    EVENT_TYPES,
    Event,
    GameCreated,
    HandDealt,
    event_from_dict,
    event_to_dict,
    event_type,
)
from domain.state import INITIAL_STATE, GameState, Phase
from service.app import game_log
from service.app.deal_plan import SERVICE_RECORDS, DealPlan, SeedCommitted
from service.app.errors import CorruptGame
from service.app.state_cache import StateCache
from service.app.typed_envelopes import decode_page
from service.store.envelope import NewEvent
from service.store.event_store import RedisEventStore
from service.store.upcasting import UpcasterRegistry


@dataclass(frozen=True, slots=True)
class StoredGame:
    state: GameState = INITIAL_STATE
    plan: DealPlan = DealPlan()
    # Imported from an export (its first event's command id says so), not played here: shown in
    # its views, and left out of the player statistics (projections.scoreboard.apply).
    imported: bool = False
    # The turn clock folded from the events and their append times (domain/clock.py); None for
    # a game without one.
    clock: Clock | None = None
    # The server's seed committed for a hand still to be dealt (the latest SeedCommitted).
    committed: SeedCommitted | None = None
    # The id of the game an imported one was exported from (its first event's command id), so
    # a copy is told apart from its original where both are listed; None if not imported.
    imported_from: str | None = None

    def after(self, events: Sequence[Event]) -> StoredGame:
        """This game after domain events just decided (its clock as it was: the events have no
        time until they are appended, see ``appended``)."""
        return replace(self, state=fold(events, self.state))

    def appended(self, before: StoredGame, records: Sequence[NewEvent], time: str) -> StoredGame:
        """This game (decided from ``before`` by ``records``) with its clock ticked by the
        records as appended at ``time``: what the game is once the append lands."""
        if before.clock is None and not before.state.rules.clocked and before.state.game_id:
            return self
        state, clock, at = draft(before.state), before.clock, moment(time)
        for record in records:
            if record.type not in EVENT_TYPES:
                continue  # the service's records (a DealPlan) do not move the clock
            event = event_from_dict(record.type, record.payload)
            apply(state, event)
            clock = tick(clock, state, event, at)
        return replace(self, clock=clock)


def game_cache(store: RedisEventStore, max_games: int = 1024) -> StateCache[StoredGame]:
    """The service's cache of folded games: a miss reads the log with the typed page decoder
    (service/app/typed_envelopes.py) and folds it with :func:`fold_records`."""
    return StateCache(store, _fold_consecutive, StoredGame, max_games=max_games, fast=decode_page)


def _fold_consecutive(table: StoredGame, events: Sequence[game_log.Stored]) -> StoredGame:
    # The cache has checked the seqs follow each other (StateCache): not again, on every load.
    return fold_records(table, events, consecutive=True)


def fold_records(
    table: StoredGame,
    events: Sequence[game_log.Stored],
    upcasters: UpcasterRegistry | None = None,
    *,
    consecutive: bool = False,
) -> StoredGame:
    """``table`` after the stored ``events`` (consecutive seqs, as stored or read by the game
    log's decoder); CorruptGame if they do not read or do not follow the rules' order (an event
    deleted or altered by hand). ``consecutive``: the caller has checked their seqs.

    Only what the state needs is read: before the last deal among ``events``, the events that
    deal supersedes (the plays of earlier hands, ``domain.decider.needed``) are skipped, unless
    the game has a turn clock, which counts every move's time."""
    if not events:
        return table
    if table.state.phase is Phase.NEW:  # its first event, GameCreated, says if it has a clock
        table = _fold(table, events[:1], upcasters, consecutive)
        if len(events) == 1:
            return table
        after, events = events[0].seq, events[1:]
    else:
        after = None
    superseded = 0 if table.clock is not None else _last_deal(events)
    return _fold(table, events, upcasters, consecutive, after, superseded)


def _last_deal(events: Sequence[game_log.Stored]) -> int:
    """The index of the last HandDealt of ``events`` (0 if none)."""
    for i in range(len(events) - 1, 0, -1):
        if events[i].type == _DEALT:
            return i
    return 0


def _fold(
    table: StoredGame,
    events: Sequence[game_log.Stored],
    upcasters: UpcasterRegistry | None = None,
    consecutive: bool = False,
    after: int | None = None,
    superseded: int = 0,
) -> StoredGame:
    state, plan = draft(table.state), table.plan  # changed in place by each event, then kept
    clock, committed = table.clock, table.committed
    timed = clock is not None  # most games have no clock: their loads never parse a time
    game_id = events[0].game_id
    first = events[0]
    imported_from = table.imported_from
    if first.seq == 1 and first.command_id.startswith(game_log.IMPORTED):
        imported_from = first.command_id.removeprefix(game_log.IMPORTED)
    imported = table.imported or imported_from is not None
    try:
        for stored, record in game_log.typed(
            events, game_id, after, upcasters, superseded, consecutive
        ):
            kind = type(record)
            if kind in _SERVICE_RECORDS:
                if kind is DealPlan:
                    plan = record
                else:
                    committed = record
                continue
            apply(state, record)
            if timed or (kind is GameCreated and record.rules.clocked):
                clock = tick(clock, state, record, moment(stored.time))
                timed = clock is not None
    except CorruptGame:
        raise
    except Exception as exc:  # the rules cannot apply it: the log was damaged
        raise CorruptGame(game_id, f"seq {stored.seq} does not apply: {exc!r}") from None
    return StoredGame(state, plan, imported, clock, committed, imported_from)


# The service's own records in a game's log (a frozenset: one lookup per event of every load).
_SERVICE_RECORDS = frozenset(SERVICE_RECORDS)
_DEALT = HandDealt.__name__


def new_event(event: Event) -> NewEvent:
    return NewEvent(event_type(event), type(event).schema_version, event_to_dict(event))
