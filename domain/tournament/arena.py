"""The arena format's rules: pairing, points by place, the clock, the standings.

An arena runs for a fixed time. A player who enters (before or during it) or finishes a game
waits; as soon as four wait they are paired into a game of their own (one hand, or a few:
``TournamentCreated.boards`` is the hands per game). Who is paired with whom:

- **who plays**: of the waiting players, the ``4 * (waiting // 4)`` who have waited longest (in
  log order: freed by an earlier event), so nobody is left waiting while later players play;
- **with whom**: those sorted by arena points (most first), then rating (highest first; the
  service supplies them, unrated players count 0), then id, and cut into tables of four in that
  order: each table holds players of the closest scores;
- **seats**: the table's order rotated by the game's number.

A game's result: each seat's points taken over the game (fewer is better); places by that
score, and arena points by place from :data:`PLACE_POINTS` (6, 4, 2, 0), players tied sharing
the places' points equally (always a whole number: the table steps by 2). Standings: arena
points (most first), then games counted (fewer first: the same points in fewer games), then
shared. Only games that finished by the arena's ``closes_at`` (its end plus the grace) count.

The clock: from ``StartArena.at`` to ``ends_at`` (plus ``duration_seconds``) pairing goes on;
after it nobody is paired; the arena finishes at ``closes_at`` (``ends_at`` plus
``grace_seconds``), or earlier once no game is in play. Its standings are then frozen: a game
still in play at ``closes_at`` never counts.

Safety: pairing is decided from the log (a player in a game not yet recorded is busy and is not
paired), and every command is appended at the version it was decided on, so two processes
racing to pair cannot both pair a player; recording a game twice decides nothing.

An arena has no rounds: a withdrawal after its start is ``PlayerWithdrew(after_round=1)`` (the
player keeps their games and is paired no more).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from domain.errors import InvalidRules
from domain.rules import RuleOptions

from .arena_events import (
    ArenaCommand,
    ArenaGameRecorded,
    ArenaPaired,
    ArenaStarted,
    FinishArena,
    PairArena,
    RecordArenaGame,
    StartArena,
)
from .errors import NotOrganiser, TooFewPlayers, TournamentClosed, TournamentStepRefused
from .events import Format, PlayerWithdrew, TournamentCreated, TournamentFinished, TournamentStarted

if TYPE_CHECKING:
    from .commands import CreateTournament
    from .decider import Tournament

SEATS = 4
PLACE_POINTS = (6, 4, 2, 0)  # arena points for places 1..4; tied players share
MIN_SECONDS = 30
MAX_SECONDS = 24 * 3600
DEFAULT_GRACE_SECONDS = 300
MAX_GRACE_SECONDS = 3600
MAX_HANDS = 4  # "one-hand or short games"
MAX_PLAYERS = 256  # an arena's tables are formed as players wait: no movement to search


@dataclass(frozen=True, slots=True)
class ArenaGame:
    number: int
    game_id: str
    seats: tuple[str, ...]
    paired_at: str
    scores: tuple[int, ...] | None = None
    points: tuple[int, ...] | None = None
    finished_at: str | None = None
    counted: bool = False

    @property
    def recorded(self) -> bool:
        return self.scores is not None


@dataclass(frozen=True, slots=True)
class ArenaState:
    starts_at: str
    ends_at: str
    closes_at: str
    games: tuple[ArenaGame, ...] = ()
    # player -> the arena tick at which they last became free (absent: free since the start)
    free_since: Mapping[str, int] = field(default_factory=dict)
    tick: int = 0

    @property
    def in_play(self) -> tuple[ArenaGame, ...]:
        return tuple(g for g in self.games if not g.recorded)

    @property
    def busy(self) -> frozenset[str]:
        return frozenset(p for g in self.games if not g.recorded for p in g.seats)

    def points(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for g in self.games:
            if g.counted and g.points is not None:
                for p, pts in zip(g.seats, g.points, strict=True):
                    out[p] = out.get(p, 0) + pts
        return out


@dataclass(frozen=True, slots=True)
class ArenaStanding:
    place: int
    player: str
    points: int
    games: int  # games counted
    firsts: int  # games in which the player had (or shared) the first place


def instant(at: str) -> datetime:
    return datetime.fromisoformat(at)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def place_points(scores: Sequence[int]) -> tuple[int, ...]:
    """Arena points by finishing place (fewest points taken first), ties sharing equally."""
    if len(scores) != SEATS:
        raise ValueError(f"a game has {SEATS} seats")
    ranked = sorted(range(SEATS), key=lambda s: scores[s])
    out = [0] * SEATS
    i = 0
    while i < SEATS:
        j = i
        while j + 1 < SEATS and scores[ranked[j + 1]] == scores[ranked[i]]:
            j += 1
        share = sum(PLACE_POINTS[i : j + 1]) // (j - i + 1)
        for k in range(i, j + 1):
            out[ranked[k]] = share
        i = j + 1
    return tuple(out)


def pair(
    waiting: Iterable[str],
    free_since: Mapping[str, int],
    points: Mapping[str, int],
    ratings: Mapping[str, float],
    first_number: int,
) -> list[tuple[str, ...]]:
    """The tables to form from ``waiting`` (module docstring): each a tuple of four players
    by seat, for game numbers ``first_number``, ``first_number + 1``, ..."""
    players = sorted(set(waiting))
    tables = len(players) // SEATS
    if not tables:
        return []

    def strength(p: str) -> tuple[float, float, str]:
        return (-points.get(p, 0), -ratings.get(p, 0.0), p)

    longest = sorted(players, key=lambda p: (free_since.get(p, 0), *strength(p)))
    chosen = sorted(longest[: tables * SEATS], key=strength)
    out = []
    for t in range(tables):
        group = chosen[t * SEATS : (t + 1) * SEATS]
        turn = (first_number + t) % SEATS
        out.append(tuple(group[turn:] + group[:turn]))
    return out


def waiting(state: Tournament) -> list[str]:
    """The players waiting to be paired: entered, not withdrawn, not in a game in play."""
    arena = state.arena
    if arena is None:
        return []
    busy = arena.busy
    return [e.player_id for e in state.entrants if e.active and e.player_id not in busy]


def standings(state: Tournament) -> tuple[ArenaStanding, ...]:
    """Every entrant (withdrawn ones keep their games), in order (module docstring)."""
    arena = state.arena
    games: dict[str, int] = {}
    firsts: dict[str, int] = {}
    points = arena.points() if arena else {}
    for g in arena.games if arena else ():
        if g.counted and g.points is not None:
            top = max(g.points)
            for p, pts in zip(g.seats, g.points, strict=True):
                games[p] = games.get(p, 0) + 1
                firsts[p] = firsts.get(p, 0) + (pts == top)
    players = [e.player_id for e in state.entrants]
    rows = sorted(players, key=lambda p: (-points.get(p, 0), games.get(p, 0), p))
    out: list[ArenaStanding] = []
    for i, p in enumerate(rows):
        prev = out[-1] if out else None
        same = prev is not None and (prev.points, prev.games) == (
            points.get(p, 0),
            games.get(p, 0),
        )
        place = prev.place if same and prev else i + 1
        out.append(ArenaStanding(place, p, points.get(p, 0), games.get(p, 0), firsts.get(p, 0)))
    return tuple(out)


# -- deciding ----------------------------------------------------------------------------------


def create(command: CreateTournament, rules: dict[str, object]) -> list[TournamentCreated]:
    """An arena's creation (the common checks, name and players, are the decider's)."""
    from .errors import TournamentInvalid

    for what, value, low, high in (
        ("hands", command.boards, 1, MAX_HANDS),
        ("duration_seconds", command.duration_seconds, MIN_SECONDS, MAX_SECONDS),
        ("grace_seconds", command.grace_seconds, 0, MAX_GRACE_SECONDS),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise TournamentInvalid(f"{what} must be from {low} to {high}")
    try:
        options = RuleOptions.from_dict(rules)
    except (InvalidRules, TypeError, ValueError) as error:
        raise TournamentInvalid(f"rules: {error}") from None
    if command.rated and not options.clocked:
        raise TournamentInvalid(
            "a rated arena's games have a turn clock: give rules a time_control "
            "('quick' or 'relaxed') or seconds_per_decision"
        )
    return [
        TournamentCreated(
            command.tournament_id,
            command.name,
            Format.ARENA,
            command.organiser,
            options.to_dict(),
            0,
            command.boards,
            command.min_players,
            command.max_players,
            command.house_bot,
            command.at,
            starts_at=command.starts_at,
            duration_seconds=command.duration_seconds,
            grace_seconds=command.grace_seconds,
            rated=command.rated,
        )
    ]


def decide(command: ArenaCommand, state: Tournament) -> list[object]:
    from .decider import Status

    created = state.created
    assert created is not None
    if created.format is not Format.ARENA:
        raise TournamentStepRefused("this tournament is not an arena")
    if isinstance(command, StartArena):
        if command.by != created.organiser:
            raise NotOrganiser("only the tournament's organiser may start it")
        if state.status is not Status.UPCOMING:
            raise TournamentClosed("the tournament has started or ended")
        if len(state.active) < created.min_players:
            raise TooFewPlayers(
                f"{len(state.active)} players entered; it starts with {created.min_players}"
            )
        start = instant(command.at)
        ends = start + timedelta(seconds=created.duration_seconds)
        closes = ends + timedelta(seconds=created.grace_seconds)
        roster = tuple(e.player_id for e in state.active)
        return [
            TournamentStarted(roster, ()),
            ArenaStarted(_iso(start), _iso(ends), _iso(closes)),
        ]
    arena = state.arena
    if arena is None:
        raise TournamentStepRefused("the arena has not started")
    if isinstance(command, PairArena):
        if state.status is not Status.RUNNING or instant(command.at) >= instant(arena.ends_at):
            return []
        first = len(arena.games) + 1
        tables = pair(
            waiting(state), arena.free_since, arena.points(), dict(command.ratings), first
        )
        return [
            ArenaPaired(first + i, game_id, seats, command.at)
            for i, (seats, game_id) in enumerate(zip(tables, command.game_ids, strict=False))
        ]
    if isinstance(command, RecordArenaGame):
        if not 1 <= command.game <= len(arena.games):
            raise TournamentStepRefused(f"the arena has no game {command.game}")
        game = arena.games[command.game - 1]
        if game.game_id != command.game_id:
            raise TournamentStepRefused(f"game {command.game_id} is not the arena's game")
        if game.recorded:
            return []
        if len(command.scores) != SEATS:
            raise TournamentStepRefused(f"a game's result is {SEATS} scores")
        counted = instant(command.finished_at) <= instant(arena.closes_at)
        return [
            ArenaGameRecorded(
                game.number,
                game.game_id,
                tuple(command.scores),
                place_points(command.scores),
                command.finished_at,
                counted,
            )
        ]
    if isinstance(command, FinishArena):
        if state.status is not Status.RUNNING:
            return []
        now = instant(command.at)
        over = now >= instant(arena.closes_at)
        quiet = now >= instant(arena.ends_at) and not arena.in_play
        return [TournamentFinished(command.at)] if over or quiet else []
    raise TypeError(f"not an arena command: {command!r}")


def withdrawal(state: Tournament, player_id: str) -> PlayerWithdrew:
    """A withdrawal: before the start the player leaves the list, after it they keep their
    games and are paired no more (see the module docstring)."""
    from .decider import Status

    return PlayerWithdrew(player_id, 0 if state.status is Status.UPCOMING else 1)


def evolve(state: Tournament, event: object) -> Tournament:
    if isinstance(event, ArenaStarted):
        return replace(state, arena=ArenaState(event.starts_at, event.ends_at, event.closes_at))
    arena = state.arena
    assert arena is not None
    tick = arena.tick + 1
    if isinstance(event, ArenaPaired):
        game = ArenaGame(event.game, event.game_id, tuple(event.seats), event.at)
        return replace(state, arena=replace(arena, games=arena.games + (game,), tick=tick))
    if isinstance(event, ArenaGameRecorded):
        games = list(arena.games)
        games[event.game - 1] = replace(
            games[event.game - 1],
            scores=tuple(event.scores),
            points=tuple(event.points),
            finished_at=event.finished_at,
            counted=event.counted,
        )
        free = dict(arena.free_since)
        for p in games[event.game - 1].seats:
            free[p] = tick
        return replace(state, arena=replace(arena, games=tuple(games), free_since=free, tick=tick))
    raise TypeError(f"not an arena event: {event!r}")
