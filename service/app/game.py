"""A stored game: its stream folded into the domain state plus the service's deal plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.decider import apply, draft, fold
from domain.events import Event, event_to_dict, event_type
from domain.state import INITIAL_STATE, GameState
from service.app import game_log
from service.app.deal_plan import DealPlan
from service.app.errors import CorruptGame
from service.store.envelope import NewEvent, RecordedEvent
from service.store.upcasting import UpcasterRegistry


@dataclass(frozen=True, slots=True)
class StoredGame:
    state: GameState = INITIAL_STATE
    plan: DealPlan = DealPlan()
    # Imported from an export (its first event's command id says so), not played here: shown in
    # its views, and left out of the player statistics (projections.scoreboard.apply).
    imported: bool = False

    def after(self, events: Sequence[Event]) -> StoredGame:
        """This game after domain events just decided."""
        return StoredGame(fold(events, self.state), self.plan, self.imported)


def fold_records(
    table: StoredGame,
    events: Sequence[RecordedEvent],
    upcasters: UpcasterRegistry | None = None,
) -> StoredGame:
    """``table`` after the stored ``events`` (consecutive seqs, decoded by the game log);
    CorruptGame if they do not read or do not follow the rules' order (an event deleted or
    altered by hand)."""
    if not events:
        return table
    state, plan = draft(table.state), table.plan  # changed in place by each event, then kept
    game_id = events[0].game_id
    first = events[0]
    imported = table.imported or (first.seq == 1 and first.command_id.startswith(game_log.IMPORTED))
    for stored, record in game_log.typed(events, upcasters=upcasters):
        if isinstance(record, DealPlan):
            plan = record
            continue
        try:
            apply(state, record)
        except Exception as exc:  # the rules cannot apply it: the log was damaged
            raise CorruptGame(game_id, f"seq {stored.seq} does not apply: {exc!r}") from None
    return StoredGame(state, plan, imported)


def new_event(event: Event) -> NewEvent:
    return NewEvent(event_type(event), type(event).schema_version, event_to_dict(event))
