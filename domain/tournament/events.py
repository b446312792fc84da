"""What happens in a tournament, one frozen dataclass per event, and their JSON form.

A tournament's log is these events in order (``decider.fold`` makes its state). The round's
seed is in ``RoundStarted`` (its ``seed`` and ``salt`` are secret until the round's
``RoundEnded``: ``SECRET_UNTIL_ROUND_ENDS``) beside its commitment, which is public from the
start: anyone can check after the round that the seed revealed is the one committed before any
table was dealt (``domain.shuffle.seed_commitment``).
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar

from .arena_events import ARENA_EVENTS


class Format(StrEnum):
    DUPLICATE = "duplicate"
    ARENA = "arena"


Seating = tuple[tuple[str | None, ...], ...]  # per table, per seat: a player's id or a house bot


@dataclass(frozen=True, slots=True)
class TournamentCreated:
    schema_version: ClassVar[int] = 1
    tournament_id: str
    name: str
    format: Format
    organiser: str  # the creating player's id
    rules: dict[str, Any]  # the table games' rule options (RuleOptions.to_dict form)
    rounds: int
    boards: int  # boards (hands) per round
    min_players: int
    max_players: int
    house_bot: str  # the strategy that fills short tables and stands in
    at: str  # ISO-8601 UTC
    starts_at: str | None = None  # ISO-8601 UTC: started (or cancelled if short) then
    # An arena's (rounds 0, boards the hands per game): absent from a duplicate's log.
    duration_seconds: int = 0
    grace_seconds: int = 0
    rated: bool = False


@dataclass(frozen=True, slots=True)
class PlayerEntered:
    schema_version: ClassVar[int] = 1
    player_id: str
    name: str
    stand_in: str | None  # a bot strategy that plays every board for this player (a bot account)


@dataclass(frozen=True, slots=True)
class PlayerWithdrew:
    schema_version: ClassVar[int] = 1
    player_id: str
    after_round: int  # the last round the player was seated in (0: before the start)


@dataclass(frozen=True, slots=True)
class PlayerMissed:
    """The player was not at their seat in this round: absent when the table waited on them
    (a house bot stood in), or they left it to a bot. Their boards there score last; a second
    miss withdraws them (``PlayerWithdrew`` follows in the same append)."""

    schema_version: ClassVar[int] = 1
    player_id: str
    round: int


@dataclass(frozen=True, slots=True)
class TournamentStarted:
    schema_version: ClassVar[int] = 1
    roster: tuple[str, ...]  # the players, in the movement's order
    movement: tuple[tuple[tuple[int | None, ...], ...], ...]  # per round, table, seat: roster index


@dataclass(frozen=True, slots=True)
class RoundStarted:
    schema_version: ClassVar[int] = 1
    round: int
    tables: Seating
    seed_commitment: str  # SHA-256(salt ":" seed), public from here on
    seed: str  # secret until RoundEnded
    salt: str  # secret until RoundEnded


@dataclass(frozen=True, slots=True)
class TableGameLinked:
    schema_version: ClassVar[int] = 1
    round: int
    table: int
    game_id: str


@dataclass(frozen=True, slots=True)
class TableResultRecorded:
    schema_version: ClassVar[int] = 1
    round: int
    table: int
    game_id: str
    scores: tuple[tuple[int, ...], ...]  # per board, per seat: the hand's score (moon applied)


@dataclass(frozen=True, slots=True)
class RoundEnded:
    schema_version: ClassVar[int] = 1
    round: int
    seed: str  # the seed committed in RoundStarted, revealed
    salt: str


@dataclass(frozen=True, slots=True)
class TournamentFinished:
    schema_version: ClassVar[int] = 1
    at: str


@dataclass(frozen=True, slots=True)
class TournamentCancelled:
    schema_version: ClassVar[int] = 1
    reason: str
    at: str


TournamentEvent = (
    TournamentCreated
    | PlayerEntered
    | PlayerWithdrew
    | PlayerMissed
    | TournamentStarted
    | RoundStarted
    | TableGameLinked
    | TableResultRecorded
    | RoundEnded
    | TournamentFinished
    | TournamentCancelled
)

EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        TournamentCreated,
        PlayerEntered,
        PlayerWithdrew,
        PlayerMissed,
        TournamentStarted,
        RoundStarted,
        TableGameLinked,
        TableResultRecorded,
        RoundEnded,
        TournamentFinished,
        TournamentCancelled,
    )
}

# An arena's events (domain/tournament/arena_events.py) are read and written the same way.
EVENT_TYPES.update({cls.__name__: cls for cls in ARENA_EVENTS})

# Fields no reader sees before the round named by the event's ``round`` has ended.
SECRET_UNTIL_ROUND_ENDS: dict[type, tuple[str, ...]] = {
    RoundStarted: ("seed", "salt"),
    TableResultRecorded: ("scores",),  # a table's result: the boards' results of the round
}


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def _lists(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def event_to_dict(event: TournamentEvent) -> dict[str, Any]:
    """``{"type": ..., "data": {...}}`` with tuples as lists."""
    return {"type": type(event).__name__, "data": _lists(asdict(event))}


def event_from_dict(data: dict[str, Any]) -> TournamentEvent:
    cls = EVENT_TYPES[data["type"]]
    payload = data["data"]
    values = {}
    for f in fields(cls):
        if f.name not in payload and f.default is not MISSING:
            continue  # a field added since the event was written: its default
        value = payload[f.name]
        if f.name == "format":
            value = Format(value)
        elif f.name != "rules":
            value = _tuples(value)
        values[f.name] = value
    return cls(**values)  # type: ignore[no-any-return]
