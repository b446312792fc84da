"""The analysis of a finished hand as a use case: read the game's log, run ``bots.analysis``.

Only a hand that is scored is analysed (HandInProgress otherwise): while it is in play, an
analysis would tell a seat what its cards are worth against the others' hidden ones, a cheating
aid. Once it is scored every card of it is public anyway (``domain.secrecy``: the hands are
hidden until ``HAND_SCORED``), and the analysis of each decision reads only what the deciding
seat saw then. The events after the hand's score are never read.
"""

from __future__ import annotations

from typing import Any

from bots.analysis import (
    ANALYSIS_VERSION,
    DEFAULT_BUDGET,
    AnalysisBudget,
    Clock,
    HandAnalysis,
    HandNotFinished,
    Progress,
    analyse_hand,
)
from domain.events import HandDealt, HandScored
from service.app import game_log
from service.app.errors import GameNotFound, HandInProgress, HandNotFound
from service.app.hand_records import logged
from service.store.analyses import AnalysisStore
from service.store.event_store import RedisEventStore
from service.store.upcasting import UpcasterRegistry


class HandAnalyst:
    """Analyses the finished hands of the games in ``store``."""

    def __init__(self, store: RedisEventStore, upcasters: UpcasterRegistry | None = None) -> None:
        self.store = store
        self.upcasters = upcasters
        self.kept = AnalysisStore(store)

    def document(
        self,
        game_id: str,
        number: int,
        budget: AnalysisBudget = DEFAULT_BUDGET,
        progress: Progress | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """(the analysis of hand ``number`` as a JSON document, whether it was kept from an
        earlier request). Under the default seed and a budget in deals the analysis is a
        function of the hand, the analysis version and the budget, so it is kept under those
        (``service.store.analyses``) and asking twice costs one GET. The game is read first
        all the same: the errors of :meth:`analyse`, and no answer about a game that is not."""
        if budget.ms is not None:
            raise ValueError("only analyses under a budget in deals are kept")
        self._events(game_id, number)
        kept = self.kept.get(game_id, number, ANALYSIS_VERSION, budget.samples)
        if kept is not None:
            return kept, True
        document = self.analyse(game_id, number, budget=budget, progress=progress).to_dict()
        self.kept.put(game_id, number, ANALYSIS_VERSION, budget.samples, document)
        return document, False

    def _events(self, game_id: str, number: int) -> list[Any]:
        entries = game_log.read(self.store, game_id, upcasters=self.upcasters)
        if not entries:
            raise GameNotFound(game_id)
        events = [item.event for item in logged(entries)]
        if not any(isinstance(ev, HandDealt) and ev.hand_number == number for ev in events):
            raise HandNotFound(game_id, number)
        if not any(isinstance(ev, HandScored) and ev.hand_number == number for ev in events):
            raise HandInProgress(game_id, number)
        return events

    def analyse(
        self,
        game_id: str,
        number: int,
        seed: str | None = None,
        budget: AnalysisBudget = DEFAULT_BUDGET,
        clock: Clock | None = None,
        progress: Progress | None = None,
    ) -> HandAnalysis:
        """Hand ``number`` of ``game_id``, analysed. ``seed``: by default the game and hand,
        so that asking again gives the same figures. GameNotFound, HandNotFound (never dealt),
        HandInProgress (not scored yet)."""
        events = self._events(game_id, number)
        try:
            return analyse_hand(
                events,
                number,
                seed if seed is not None else f"{game_id}/{number}",
                budget,
                clock,
                progress,
            )
        except HandNotFinished:
            raise HandInProgress(game_id, number) from None
