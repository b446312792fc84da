"""A stored game: its stream folded into the domain state plus the service's deal plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.decider import evolve
from domain.events import Event, event_from_dict, event_to_dict, event_type
from domain.state import INITIAL_STATE, GameState
from service.app.deal_plan import DEAL_PLAN, DealPlan, is_domain_event
from service.store.envelope import NewEvent, RecordedEvent


@dataclass(frozen=True, slots=True)
class StoredGame:
    state: GameState = INITIAL_STATE
    plan: DealPlan = DealPlan()

    def after(self, events: Sequence[Event]) -> StoredGame:
        """This game after domain events just decided."""
        return StoredGame(fold_events(self.state, events), self.plan)


def fold_records(table: StoredGame, events: Sequence[RecordedEvent]) -> StoredGame:
    state, plan = table.state, table.plan
    for event in events:
        if event.type == DEAL_PLAN:
            plan = DealPlan.from_payload(event.payload)
        elif is_domain_event(event.type):
            state = evolve(state, event_from_dict(event.type, event.payload))
        # Any other service record is not part of the game's state.
    return StoredGame(state, plan)


def fold_events(state: GameState, events: Sequence[Event]) -> GameState:
    for event in events:
        state = evolve(state, event)
    return state


def new_event(event: Event) -> NewEvent:
    return NewEvent(event_type(event), type(event).schema_version, event_to_dict(event))
