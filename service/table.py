"""A game's stream folded: the domain state plus the service's own records (the deal plan)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.decider import evolve
from domain.events import Event, event_from_dict, event_to_dict, event_type
from domain.state import INITIAL_STATE, GameState
from service.deal_plan import DEAL_PLAN, DealPlan, is_domain_event
from service.envelope import NewEvent, RecordedEvent


@dataclass(frozen=True, slots=True)
class Table:
    state: GameState = INITIAL_STATE
    plan: DealPlan = DealPlan()

    def after(self, events: Sequence[Event]) -> Table:
        """This table after domain events just decided."""
        return Table(fold_events(self.state, events), self.plan)


def fold_records(table: Table, events: Sequence[RecordedEvent]) -> Table:
    state, plan = table.state, table.plan
    for event in events:
        if event.type == DEAL_PLAN:
            plan = DealPlan.from_payload(event.payload)
        elif is_domain_event(event.type):
            state = evolve(state, event_from_dict(event.type, event.payload))
        # Any other service record is not part of the game's state.
    return Table(state, plan)


def fold_events(state: GameState, events: Sequence[Event]) -> GameState:
    for event in events:
        state = evolve(state, event)
    return state


def new_event(event: Event) -> NewEvent:
    return NewEvent(event_type(event), type(event).schema_version, event_to_dict(event))
