"""A tournament's read model: its standings, folded from its log (pure: no Redis).

One document per tournament, keyed by its id, made from the log's events alone: the projector
folds it whenever the log moved on (service/app/tournament_projection.py) and a rebuild makes
it again from every log, equal. What it holds is what anyone may read: only rounds that have
ended count (a round in play shows nothing). The fold is chosen by the log's format
(:data:`MODELS`): a format adds its own (an arena's standings by points) beside ``duplicate``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from domain.tournament.arena import standings as arena_standings
from domain.tournament.decider import Tournament, fold
from domain.tournament.events import TournamentEvent
from domain.tournament.matchpoints import BoardResult, standings


def ended_results(state: Tournament) -> list[BoardResult]:
    """The results of the rounds that have ended: all that standings and travellers show."""
    return [r for r in state.results() if state.rounds[r.round - 1].ended]


def standings_rows(state: Tournament) -> list[dict[str, Any]]:
    """The standings as the API and the export give them: a duplicate's over the rounds that
    have ended, an arena's over its games counted."""
    if state.arena is not None:
        return arena_rows(state)
    roster = state.roster or tuple(e.player_id for e in state.active)
    return [
        {
            "place": s.place,
            "player": s.player,
            "matchpoints": float(s.matchpoints),
            "top": s.half_top / 2,
            "percentage": round(float(s.percentage), 4),
            "points": s.points,
            "boards": s.boards,
        }
        for s in standings(ended_results(state), roster)
    ]


def arena_rows(state: Tournament) -> list[dict[str, Any]]:
    """An arena's standings by points per finishing place (counted games only)."""
    return [
        {
            "place": s.place,
            "player": s.player,
            "points": s.points,
            "games": s.games,
            "firsts": s.firsts,
        }
        for s in arena_standings(state)
    ]


def duplicate_model(events: Sequence[TournamentEvent]) -> dict[str, Any]:
    state = fold(events)
    return {
        "status": state.status.value,
        "rounds_counted": sum(1 for r in state.rounds if r.ended),
        "standings": standings_rows(state),
    }


def arena_model(events: Sequence[TournamentEvent]) -> dict[str, Any]:
    state = fold(events)
    arena = state.arena
    return {
        "status": state.status.value,
        "games_counted": sum(1 for g in arena.games if g.counted) if arena is not None else 0,
        "standings": standings_rows(state),
    }


# A log's format (its TournamentCreated's) -> the fold of its read model.
MODELS: dict[str, Callable[[Sequence[TournamentEvent]], dict[str, Any]]] = {
    "duplicate": duplicate_model,
    "arena": arena_model,
}


def project(tournament_id: str, events: Sequence[Any]) -> dict[str, Any] | None:
    """The tournament's document at ``len(events)`` (its version); None for a log with no
    creation or of a format without a model."""
    if not events or not hasattr(events[0], "format"):
        return None
    fmt = str(getattr(events[0].format, "value", events[0].format))
    model = MODELS.get(fmt)
    if model is None:
        return None
    return {"tournament_id": tournament_id, "format": fmt, "version": len(events), **model(events)}
