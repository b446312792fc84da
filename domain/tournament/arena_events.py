"""An arena's own events and commands (domain/tournament/arena.py has its rules).

An arena's log starts as every tournament's does (``TournamentCreated`` with format ``arena``,
``PlayerEntered``, ``PlayerWithdrew``, ``TournamentStarted`` with an empty movement) and ends
with ``TournamentFinished`` or ``TournamentCancelled``; in between are these. Times are ISO-8601
UTC strings, given to the domain with each command: it reads no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

# -- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArenaStarted:
    """The arena's clock: pairing from ``starts_at`` until ``ends_at``; a game that finishes
    by ``closes_at`` (``ends_at`` plus the grace) counts, one that finishes later does not."""

    schema_version: ClassVar[int] = 1
    starts_at: str
    ends_at: str
    closes_at: str


@dataclass(frozen=True, slots=True)
class ArenaPaired:
    """Four waiting players paired into the arena's game number ``game``, whose id is fixed
    here, before the game exists: the pairing and the game's link are one event."""

    schema_version: ClassVar[int] = 1
    game: int  # 1, 2, ... in the order of pairing
    game_id: str
    seats: tuple[str, ...]  # the players' ids, by seat
    at: str


@dataclass(frozen=True, slots=True)
class ArenaGameRecorded:
    """A paired game's result, recorded once: each seat's points taken over the game (fewer is
    better; a seat its player left to a bot scores last), and the arena points by place."""

    schema_version: ClassVar[int] = 1
    game: int
    game_id: str
    scores: tuple[int, ...]  # per seat: points taken over the game's hands
    points: tuple[int, ...]  # per seat: arena points by finishing place (ties shared)
    finished_at: str  # when the game ended, by its own log
    counted: bool  # finished by the arena's closes_at: counts in the standings


ARENA_EVENTS: tuple[type, ...] = (ArenaStarted, ArenaPaired, ArenaGameRecorded)


# -- commands ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartArena:
    by: str  # the player asking: the organiser
    at: str  # now: the clock starts


@dataclass(frozen=True, slots=True)
class PairArena:
    """Pair whoever waits, if four do and the clock has not ended. The service supplies the
    time, the players' ratings (the second pairing key) and fresh game ids, at least one per
    table that may be formed (waiting players // 4)."""

    at: str
    ratings: tuple[tuple[str, float], ...]
    game_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RecordArenaGame:
    game: int
    game_id: str
    scores: tuple[int, ...]
    finished_at: str


@dataclass(frozen=True, slots=True)
class FinishArena:
    """Finish the arena, if it is due: the grace is over, or the clock has ended and no game is
    in play. Decides nothing otherwise."""

    at: str


ArenaCommand = StartArena | PairArena | RecordArenaGame | FinishArena
