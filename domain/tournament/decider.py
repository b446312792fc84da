"""A tournament's rules: ``decide(command, state) -> events``, ``evolve``, ``fold``.

As for a game (``domain.decider``): the state is a fold of the log, a command is decided against
it, and a command that has already had its effect decides no events (linking a table to the game
it is linked to, recording a table's result again, ending a round that has ended): the service's
progress steps are retried after any crash and must do nothing twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from domain.errors import InvalidRules
from domain.rules import MAX_SCORE_LIMIT, RuleOptions
from domain.shuffle import seed_commitment

from . import arena
from .arena import ArenaState
from .arena_events import ARENA_EVENTS, FinishArena, PairArena, RecordArenaGame, StartArena
from .commands import (
    Cancel,
    CreateTournament,
    EndRound,
    Enter,
    LinkTable,
    RecordMiss,
    RecordTable,
    Start,
    TournamentCommand,
    Withdraw,
)
from .errors import (
    AlreadyEntered,
    NotEntered,
    NotOrganiser,
    TooFewPlayers,
    TournamentAlreadyCreated,
    TournamentClosed,
    TournamentFull,
    TournamentInvalid,
    TournamentNotFound,
    TournamentStepRefused,
)
from .events import (
    Format,
    PlayerEntered,
    PlayerMissed,
    PlayerWithdrew,
    RoundEnded,
    RoundStarted,
    Seating,
    TableGameLinked,
    TableResultRecorded,
    TournamentCancelled,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentStarted,
)
from .matchpoints import BoardResult, Standing, standings
from .movement import SEATS, movement

MAX_ROUNDS = 8
# A table's game ends after its boards (hand_limit) and never earlier: its score limit is the
# highest there is, which 9 hands cannot reach (52 a hand at most, a shot of the sun).
MAX_BOARDS = 8
MIN_PLAYERS = 4
MISSES_TO_WITHDRAW = 2  # rounds missed (absent, or left to a bot) that withdraw a player
# 128 tables a round: bench.tournament plays 400 (100 tables) on one machine (bench/README.md).
MAX_PLAYERS = 512
NAME = re.compile(r"[^\x00-\x1f\x7f]{1,80}")


class Status(StrEnum):
    UPCOMING = "upcoming"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Entrant:
    player_id: str
    name: str
    stand_in: str | None
    withdrawn_after: int | None = None  # the last round seated in, once withdrawn
    missed: tuple[int, ...] = ()  # the rounds the player missed their seat in

    @property
    def active(self) -> bool:
        return self.withdrawn_after is None


@dataclass(frozen=True, slots=True)
class RoundState:
    number: int
    tables: Seating
    seed_commitment: str
    seed: str
    salt: str
    games: tuple[str | None, ...]
    results: tuple[tuple[tuple[int, ...], ...] | None, ...]
    ended: bool = False

    def plays(self, table: int) -> bool:
        """Whether the table has a game: one with no ranked player (all withdrawn) has none."""
        return any(p is not None for p in self.tables[table])

    @property
    def complete(self) -> bool:
        return all(r is not None or not self.plays(t) for t, r in enumerate(self.results))


@dataclass(frozen=True, slots=True)
class Tournament:
    created: TournamentCreated | None = None
    entrants: tuple[Entrant, ...] = ()
    roster: tuple[str, ...] = ()
    rounds: tuple[RoundState, ...] = ()
    status: Status = Status.UPCOMING
    movement: tuple[tuple[tuple[int | None, ...], ...], ...] = ()
    arena: ArenaState | None = None  # an arena's games and clock (domain/tournament/arena.py)

    @property
    def active(self) -> tuple[Entrant, ...]:
        return tuple(e for e in self.entrants if e.active)

    def entrant(self, player_id: str) -> Entrant | None:
        return next((e for e in self.entrants if e.player_id == player_id), None)

    @property
    def current(self) -> RoundState | None:
        return self.rounds[-1] if self.rounds else None

    def seat_of(self, player_id: str, round_number: int) -> tuple[int, int] | None:
        """(table, seat) of the player in that round, if seated."""
        tables = self.rounds[round_number - 1].tables
        for t, table in enumerate(tables):
            for s, p in enumerate(table):
                if p == player_id:
                    return t, s
        return None

    def results(self) -> list[BoardResult]:
        """Every recorded seat's result on every board."""
        out = []
        for rnd in self.rounds:
            for t, scores in enumerate(rnd.results):
                if scores is None:
                    continue
                for b, board in enumerate(scores, start=1):
                    for s, score in enumerate(board):
                        out.append(BoardResult(rnd.number, b, t, s, rnd.tables[t][s], score))
        return out

    def standings(self) -> tuple[Standing, ...]:
        return standings(self.results(), self.roster or tuple(e.player_id for e in self.active))


def table_rules(rules: dict[str, object] | None, boards: int) -> dict[str, object]:
    """The options every table's game is created with: the tournament's, four players, ended
    after ``boards`` hands and never before."""
    merged = dict(rules or {})
    merged.update(players=SEATS, hand_limit=boards, score_limit=MAX_SCORE_LIMIT)
    return merged


def decide(command: TournamentCommand, state: Tournament) -> list[TournamentEvent]:
    if isinstance(command, CreateTournament):
        return _create(command, state)
    created = state.created
    if created is None:
        raise TournamentNotFound("no such tournament")
    if isinstance(command, StartArena | PairArena | RecordArenaGame | FinishArena):
        return arena.decide(command, state)  # type: ignore[return-value]
    is_arena = created.format is Format.ARENA
    if isinstance(command, Enter):
        # An arena takes entries while it runs: a player who joins is paired as others are.
        if state.status is not Status.UPCOMING and not (
            is_arena and state.arena is not None and state.status is Status.RUNNING
        ):
            raise TournamentClosed("entries are closed: the tournament has started or ended")
        entrant = state.entrant(command.player_id)
        if entrant is not None and entrant.active:
            raise AlreadyEntered("you have entered this tournament already")
        if len(state.active) >= created.max_players:
            raise TournamentFull(f"the tournament takes {created.max_players} players")
        return [PlayerEntered(command.player_id, command.name, command.stand_in)]
    if isinstance(command, Withdraw):
        entrant = state.entrant(command.player_id)
        if entrant is None or not entrant.active:
            raise NotEntered("you are not entered in this tournament")
        if state.status not in (Status.UPCOMING, Status.RUNNING):
            raise TournamentClosed("the tournament is over")
        if is_arena:
            return [arena.withdrawal(state, command.player_id)]
        current = state.current
        return [PlayerWithdrew(command.player_id, current.number if current else 0)]
    if isinstance(command, Start):
        if is_arena:
            raise TournamentStepRefused("an arena starts with its clock (StartArena)")
        if command.by != created.organiser:
            raise NotOrganiser("only the tournament's organiser may start it")
        if state.status is not Status.UPCOMING:
            raise TournamentClosed("the tournament has started or ended")
        active = state.active
        if len(active) < created.min_players:
            raise TooFewPlayers(
                f"{len(active)} players entered; it starts with {created.min_players}"
            )
        roster = tuple(e.player_id for e in active)
        plan = movement(len(roster), created.rounds, created.tournament_id)
        started = TournamentStarted(roster, plan)
        return [started, _round(1, state, started, command.seed, command.salt)]
    if isinstance(command, Cancel):
        if command.by != created.organiser:
            raise NotOrganiser("only the tournament's organiser may cancel it")
        if state.status not in (Status.UPCOMING, Status.RUNNING):
            raise TournamentClosed("the tournament is over")
        return [TournamentCancelled(command.reason[:200], command.at)]
    if isinstance(command, RecordMiss):
        return _miss(command, state)
    rnd = _running_round(state, command.round)
    if isinstance(command, LinkTable):
        table = _table(rnd, command.table)
        if not rnd.plays(table):
            raise TournamentStepRefused("this table has no player: it plays no game")
        linked = rnd.games[table]
        if linked == command.game_id:
            return []
        if linked is not None or rnd.ended:
            raise TournamentStepRefused(f"table {table} of round {rnd.number} has its game")
        return [TableGameLinked(rnd.number, table, command.game_id)]
    if isinstance(command, RecordTable):
        table = _table(rnd, command.table)
        if rnd.games[table] != command.game_id:
            raise TournamentStepRefused(f"game {command.game_id} is not this table's")
        if rnd.results[table] is not None:
            return []
        boards = created.boards
        if len(command.scores) != boards or any(len(b) != SEATS for b in command.scores):
            raise TournamentStepRefused(f"a table's result is {boards} boards of {SEATS} scores")
        return [TableResultRecorded(rnd.number, table, command.game_id, command.scores)]
    if isinstance(command, EndRound):
        if rnd.ended:
            return []
        if not rnd.complete:
            raise TournamentStepRefused(f"round {rnd.number} has tables still playing")
        ended = RoundEnded(rnd.number, rnd.seed, rnd.salt)
        if rnd.number >= created.rounds:
            return [ended, TournamentFinished(command.at)]
        after = evolve(state, ended)
        return [ended, _round(rnd.number + 1, after, None, command.next_seed, command.next_salt)]
    raise TypeError(f"not a tournament command: {command!r}")


def _miss(command: RecordMiss, state: Tournament) -> list[TournamentEvent]:
    """A miss once per player and round; the second withdraws the player after that round
    (the house bot takes their seat from the next round on)."""
    if state.status is not Status.RUNNING:
        return []  # over: nothing more to decide
    rnd = _running_round(state, command.round)
    entrant = state.entrant(command.player_id)
    if entrant is None or state.seat_of(command.player_id, rnd.number) is None:
        raise TournamentStepRefused(f"{command.player_id} has no seat in round {rnd.number}")
    if not entrant.active or rnd.number in entrant.missed:
        return []
    missed = PlayerMissed(command.player_id, rnd.number)
    if len(entrant.missed) + 1 < MISSES_TO_WITHDRAW:
        return [missed]
    return [missed, PlayerWithdrew(command.player_id, rnd.number)]


def _create(command: CreateTournament, state: Tournament) -> list[TournamentEvent]:
    if state.created is not None:
        raise TournamentAlreadyCreated("a tournament with this id exists")
    try:
        fmt = Format(command.format)
    except ValueError:
        raise TournamentInvalid(
            f"unknown format {command.format!r}: 'duplicate' or 'arena'"
        ) from None
    if not isinstance(command.name, str) or not NAME.fullmatch(command.name):
        raise TournamentInvalid("a name is 1 to 80 characters, no control characters")
    most = arena.MAX_PLAYERS if fmt is Format.ARENA else MAX_PLAYERS
    ranges = [
        ("min_players", command.min_players, MIN_PLAYERS, most),
        ("max_players", command.max_players, MIN_PLAYERS, most),
    ]
    if fmt is Format.DUPLICATE:
        ranges += [
            ("rounds", command.rounds, 1, MAX_ROUNDS),
            ("boards", command.boards, 1, MAX_BOARDS),
        ]
    for what, value, low, high in ranges:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise TournamentInvalid(f"{what} must be from {low} to {high}")
    if command.min_players > command.max_players:
        raise TournamentInvalid("min_players must not exceed max_players")
    if command.rules is not None and not isinstance(command.rules, dict):
        raise TournamentInvalid("rules must be an object of rule options")
    for fixed in ("players", "hand_limit", "score_limit"):
        if command.rules and fixed in command.rules:
            raise TournamentInvalid(f"{fixed!r} is the tournament's to set (boards per round)")
    if command.starts_at is not None and not _after(command.starts_at, command.at):
        raise TournamentInvalid("starts_at must be an ISO-8601 UTC time after now")
    if fmt is Format.ARENA:
        return arena.create(command, table_rules(command.rules, command.boards))  # type: ignore[return-value]
    try:
        options = RuleOptions.from_dict(table_rules(command.rules, command.boards))
    except (InvalidRules, TypeError, ValueError) as error:
        raise TournamentInvalid(f"rules: {error}") from None
    return [
        TournamentCreated(
            command.tournament_id,
            command.name,
            fmt,
            command.organiser,
            options.to_dict(),
            command.rounds,
            command.boards,
            command.min_players,
            command.max_players,
            command.house_bot,
            command.at,
            command.starts_at,
        )
    ]


def _after(when: object, now: str) -> bool:
    """Whether ``when`` is an ISO-8601 time with a zone, later than ``now``."""
    if not isinstance(when, str) or len(when) > 40:
        return False
    try:
        moment = datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return False
    if moment.tzinfo is None:
        return False
    return moment > datetime.fromisoformat(now.replace("Z", "+00:00"))


def _round(
    number: int, state: Tournament, started: TournamentStarted | None, seed: str, salt: str
) -> RoundStarted:
    roster = started.roster if started else state.roster
    plan = started.movement if started else state.movement
    gone = {e.player_id for e in state.entrants if not e.active}
    tables = tuple(
        tuple(None if i is None or roster[i] in gone else roster[i] for i in table)
        for table in plan[number - 1]
    )
    return RoundStarted(number, tables, seed_commitment(seed, salt), seed, salt)


def _running_round(state: Tournament, number: int) -> RoundState:
    if state.status not in (Status.RUNNING, Status.FINISHED):
        raise TournamentStepRefused("the tournament is not running")
    current = state.current  # finished: every step of every round is taken (decides nothing)
    assert current is not None
    if number == current.number:
        return current
    if 1 <= number < current.number:
        return state.rounds[number - 1]  # a round over: its steps are all taken
    raise TournamentStepRefused(f"round {number} is not the current round ({current.number})")


def _table(rnd: RoundState, table: int) -> int:
    if not 0 <= table < len(rnd.tables):
        raise TournamentStepRefused(f"round {rnd.number} has no table {table}")
    return table


def evolve(state: Tournament, event: TournamentEvent) -> Tournament:
    if isinstance(event, ARENA_EVENTS):
        return arena.evolve(state, event)
    if isinstance(event, TournamentCreated):
        return replace(state, created=event)
    if isinstance(event, PlayerEntered):
        others = tuple(e for e in state.entrants if e.player_id != event.player_id)
        return replace(
            state, entrants=others + (Entrant(event.player_id, event.name, event.stand_in),)
        )
    if isinstance(event, PlayerWithdrew):
        if event.after_round == 0:  # before the start: no longer an entrant at all
            entrants = tuple(e for e in state.entrants if e.player_id != event.player_id)
        else:
            entrants = tuple(
                replace(e, withdrawn_after=event.after_round)
                if e.player_id == event.player_id
                else e
                for e in state.entrants
            )
        return replace(state, entrants=entrants)
    if isinstance(event, PlayerMissed):
        entrants = tuple(
            replace(e, missed=e.missed + (event.round,)) if e.player_id == event.player_id else e
            for e in state.entrants
        )
        return replace(state, entrants=entrants)
    if isinstance(event, TournamentStarted):
        return replace(state, roster=event.roster, movement=event.movement, status=Status.RUNNING)
    if isinstance(event, RoundStarted):
        n = len(event.tables)
        rnd = RoundState(
            event.round,
            event.tables,
            event.seed_commitment,
            event.seed,
            event.salt,
            (None,) * n,
            (None,) * n,
        )
        return replace(state, rounds=state.rounds + (rnd,))
    if isinstance(event, TableGameLinked):
        return _change_round(
            state,
            event.round,
            lambda r: replace(r, games=_put(r.games, event.table, event.game_id)),
        )
    if isinstance(event, TableResultRecorded):
        return _change_round(
            state,
            event.round,
            lambda r: replace(r, results=_put(r.results, event.table, event.scores)),
        )
    if isinstance(event, RoundEnded):
        return _change_round(state, event.round, lambda r: replace(r, ended=True))
    if isinstance(event, TournamentFinished):
        return replace(state, status=Status.FINISHED)
    if isinstance(event, TournamentCancelled):
        return replace(state, status=Status.CANCELLED)
    raise TypeError(f"not a tournament event: {event!r}")


def _put(values: tuple, index: int, value: object) -> tuple:
    return values[:index] + (value,) + values[index + 1 :]


def _change_round(state: Tournament, number: int, change) -> Tournament:  # type: ignore[no-untyped-def]
    rounds = list(state.rounds)
    rounds[number - 1] = change(rounds[number - 1])
    return replace(state, rounds=tuple(rounds))


def fold(events: Iterable[TournamentEvent], state: Tournament | None = None) -> Tournament:
    state = state or Tournament()
    for event in events:
        state = evolve(state, event)
    return state
