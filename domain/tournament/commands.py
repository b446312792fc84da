"""What someone asks of a tournament. The service supplies what the domain cannot make
itself: times, ids, and each round's fresh seed and salt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CreateTournament:
    tournament_id: str
    name: str
    organiser: str
    rules: dict[str, Any] | None
    rounds: int
    boards: int
    min_players: int
    max_players: int
    house_bot: str
    at: str
    format: str = "duplicate"
    starts_at: str | None = None  # a schedule: started then by the service (ISO-8601 UTC)
    # An arena's (domain/tournament/arena.py): its clock, and whether its games are rated.
    duration_seconds: int = 0
    grace_seconds: int = 0
    rated: bool = False


@dataclass(frozen=True, slots=True)
class Enter:
    player_id: str
    name: str
    stand_in: str | None = None


@dataclass(frozen=True, slots=True)
class Withdraw:
    player_id: str


@dataclass(frozen=True, slots=True)
class Start:
    by: str  # the player asking: the organiser
    seed: str  # round 1's seed and salt
    salt: str


@dataclass(frozen=True, slots=True)
class LinkTable:
    round: int
    table: int
    game_id: str


@dataclass(frozen=True, slots=True)
class RecordTable:
    round: int
    table: int
    game_id: str
    scores: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class EndRound:
    round: int
    next_seed: str  # the next round's, unused after the last round
    next_salt: str
    at: str


@dataclass(frozen=True, slots=True)
class RecordMiss:
    """The player missed their seat in ``round`` (the service saw it: service/app/tournaments.py
    ``fair_play``)."""

    player_id: str
    round: int


@dataclass(frozen=True, slots=True)
class Cancel:
    by: str
    reason: str
    at: str


TournamentCommand = (
    CreateTournament
    | Enter
    | Withdraw
    | Start
    | LinkTable
    | RecordTable
    | EndRound
    | Cancel
    | RecordMiss
)
