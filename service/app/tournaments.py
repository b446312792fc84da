"""Tournaments' use cases: create, enter, withdraw, start, and the progress of the rounds.

A tournament is its log (``service/store/tournaments.py``), folded by ``domain.tournament``.
Every write decides a command on the log as just read and appends it at that version; if another
append won, it reads and decides again (as ``GameService`` does for a game).

**Progress** (``progress``) is the one step that moves a running tournament on, decided from the
log each time so that any process may run it at any moment, any number of times, and a crash
between two of its appends loses nothing: for the current round, each table without a game gets
one (its id derived from the tournament, round, table and the round's secret seed, so a second
try finds the game the first created, and the game is checked to be dealt from the round's
seed before it is linked), each table whose game has ended gets its result recorded, and once
every table is recorded the round ends (its seed revealed) and the next one starts with a fresh
seed committed. It runs after the start, after every append that ends a table's game
(``game_appended``, a ``GameService.on_appended`` hook) and on every read of the tournament, so
a progress lost to a crash is taken up by the next read.

**Shared boards.** Every table of round r is created as an arranged game with the round's seed
(``DealPlan(seed)``): hand k of each is dealt from ``HMAC-SHA256(seed, "hand:k")``
(service/app/deal_plan.py), so board k is the same deal at every table, and no player can
contribute to it (arranged games take no contributions). The seed is committed in the
tournament's log (``RoundStarted.seed_commitment``) before any table exists, and revealed in
``RoundEnded``.

**Secrecy.** Until round r has ended, its table games are read by nobody but their own seats
(``hidden``): the API refuses every other read of them (docs/tournaments.md), and the
tournament's own answers show no result, seed or standing of a round before it ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bots import get_bot
from domain.commands import SetSeatBot
from domain.events import HandDealt, HandScored, SeatControlChanged
from domain.state import GameState, Phase
from domain.tournament.commands import (
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
from domain.tournament.decider import RoundState, Status, Tournament, decide, fold, table_rules
from domain.tournament.events import (
    SECRET_UNTIL_ROUND_ENDS,
    Format,
    TournamentEvent,
    event_from_dict,
    event_to_dict,
)
from domain.views import awaiting
from projections.tournaments import standings_rows
from service.app import arena, auth, game_log
from service.app.deal_plan import DealPlan, fresh_salt
from service.app.errors import GameAlreadyExists, ServiceError, TooManyConflicts
from service.app.expiry import start_sweeping
from service.app.game_service import GameService
from service.app.players import Player
from service.app.replay import Replay
from service.app.tournament_projection import TournamentProjection
from service.store.tournaments import Conflict, TableLink, TournamentStore

log = logging.getLogger(__name__)

# A board a table did not play (its game ended early: abandoned) scores this for each of the
# table's seats: more than any hand can score, so last on that board.
UNPLAYED = 100
# Tournaments one player may have upcoming or running at once (as organiser).
OPEN_PER_ORGANISER = 3
# Tournaments whose folded log a process keeps (the most recently read), so that a step reads
# only what was appended since.
FOLDS_KEPT = 64
# The organiser of the tournaments the operator creates (``hearts tournaments create``).
OPERATOR = "operator"


def start_tournament_sweep(service: TournamentService, every: float = 5.0) -> threading.Event:
    """``TournamentService.sweep`` every ``every`` seconds in a daemon thread, until the
    returned event is set."""
    return start_sweeping(service.sweep, every, "tournaments", "%d running tournament(s) swept")


class TooManyTournaments(ServiceError):
    """The player organises as many upcoming or running tournaments as one may."""

    code = "too-many-tournaments"


class BoardsHidden(ServiceError):
    """A table game of a tournament round still in play: only its own seats may read it until
    every table of the round has finished."""

    code = "tournament-boards-hidden"


@dataclass(frozen=True, slots=True)
class Loaded:
    version: int
    state: Tournament
    entries: tuple[tuple[TournamentEvent, str], ...]  # each event and its append time


def table_result(
    entries: Iterable[game_log.Entry], boards: int, stand_ins: Sequence[str | None]
) -> tuple[tuple[int, ...], ...]:
    """A table game's result, per board and seat: the hand's score (``score_changes``), or
    ``UNPLAYED`` for a board the game never scored, and for a seat whose player left it to a
    bot at any moment of that hand (handed over, or away on the clock: a seat's bot other than
    the stand-in the player entered with). A player who leaves scores last on those boards."""
    scores = {b: [UNPLAYED] * len(stand_ins) for b in range(1, boards + 1)}
    bot: list[str | None] = [None] * len(stand_ins)
    left: dict[int, set[int]] = {b: set() for b in scores}
    hand = 0
    for entry in entries:
        event = entry.event
        if isinstance(event, HandDealt):
            hand = event.hand_number
        elif isinstance(event, SeatControlChanged):
            bot[event.seat] = event.bot
        elif isinstance(event, HandScored) and event.hand_number in scores:
            scores[event.hand_number] = list(event.score_changes)
        for seat, strategy in enumerate(bot):
            if strategy is not None and strategy != stand_ins[seat] and hand in left:
                left[hand].add(seat)
    for board, seats in left.items():
        for seat in seats:
            scores[board][seat] = UNPLAYED
    return tuple(tuple(scores[b]) for b in range(1, boards + 1))


def _before(now: str, seconds: float) -> str:
    """The ISO-8601 UTC time ``seconds`` before ``now``."""
    moment = datetime.fromisoformat(now.replace("Z", "+00:00")) - timedelta(seconds=seconds)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_tournament_id() -> str:
    return "t" + secrets.token_hex(10)


def table_game_id(tournament_id: str, round_number: int, table: int, seed: str) -> str:
    """A table's game id: fixed by the log (so a retried creation finds the game), unguessable
    before the round (the seed is secret), and of the form every game id has."""
    text = f"tournament\0{tournament_id}\0{round_number}\0{table}\0{seed}"
    return "g" + hashlib.sha256(text.encode()).hexdigest()[:20]


class TournamentService:
    def __init__(
        self,
        store: TournamentStore,
        games: GameService,
        *,
        fresh_seed: Callable[[], str] = lambda: secrets.token_hex(16),
        fresh_salt: Callable[[], str] = fresh_salt,
        retries: int = 8,
        ratings: Callable[[], Mapping[str, float]] | None = None,
        miss_after: float = 120.0,
    ) -> None:
        """``miss_after``: seconds a clockless table may wait on a player's first move before
        a house bot stands in for them (``fair_play``)."""
        self.miss_after = miss_after
        self.store = store
        self.games = games
        self.fresh_seed = fresh_seed
        self.fresh_salt = fresh_salt
        self.retries = retries
        self.arena = arena.ArenaProgress(self, ratings)  # the arena format's steps
        self._folds: OrderedDict[str, Loaded] = OrderedDict()  # the last fold of each log
        self._folds_lock = threading.Lock()
        # Its read models (the projector's: service/app/tournament_projection.py), if any.
        self.projection: TournamentProjection | None = None

    # -- reading ------------------------------------------------------------------------

    def _fold_log(self, tournament_id: str) -> Loaded:
        """The log folded, from this process's last fold of it on: only the entries appended
        since are read (a log only grows), so a step's reads cost what is new, not the whole
        log again (an arena's log grows by two entries a game: bench.tournament, arena)."""
        with self._folds_lock:
            cached = self._folds.get(tournament_id)
        after = cached.version if cached is not None else 0
        entries = self.store.read(tournament_id, after=after)
        if cached is not None and entries and entries[0].seq != after + 1:
            cached, after, entries = None, 0, self.store.read(tournament_id)  # not its log
        if cached is not None and not entries:
            return cached
        events = tuple((event_from_dict(e.event), e.at) for e in entries)
        state = fold((e for e, _ in events), cached.state if cached else None)
        loaded = Loaded(after + len(events), state, (cached.entries if cached else ()) + events)
        if state.created is not None:
            with self._folds_lock:
                self._folds[tournament_id] = loaded
                self._folds.move_to_end(tournament_id)
                while len(self._folds) > FOLDS_KEPT:
                    self._folds.popitem(last=False)
        return loaded

    def load(self, tournament_id: str) -> Loaded:
        loaded = self._fold_log(tournament_id)
        state = loaded.state
        if state.created is None:
            from domain.tournament.errors import TournamentNotFound

            raise TournamentNotFound(f"no tournament {tournament_id!r}")
        return loaded

    def get(self, tournament_id: str) -> Loaded:
        """The tournament, after taking any progress step due (a crash may have left one)."""
        loaded = self.load(tournament_id)
        if loaded.state.status is Status.RUNNING:
            self.advance(tournament_id)
            loaded = self.load(tournament_id)
        return loaded

    def list(self, status: str | None, limit: int) -> list[Loaded]:
        out = []
        for tournament_id in self.store.listed(max(limit * 4, 50)):
            try:
                loaded = self.load(tournament_id)
            except Exception:  # a tournament whose creation did not land: not listed
                continue
            if status is None or loaded.state.status.value == status:
                out.append(loaded)
            if len(out) >= limit:
                break
        return out

    def projected(self, tournament_id: str) -> dict[str, Any] | None:
        """The tournament's read model as the projector last folded it (None: not yet)."""
        if self.projection is None:
            return None
        try:
            return self.projection.read(tournament_id)
        except Exception:
            log.exception("tournament %s: read model", tournament_id)
            return None

    def public_log(self, loaded: Loaded) -> list[dict[str, Any]]:
        """The log as anyone may read it: a round's seed and salt only once it has ended."""
        ended = {r.number for r in loaded.state.rounds if r.ended}
        out = []
        for seq, (event, at) in enumerate(loaded.entries, start=1):
            data = event_to_dict(event)
            secret = SECRET_UNTIL_ROUND_ENDS.get(type(event), ())
            if secret and event.round not in ended:  # type: ignore[union-attr]
                data["data"] = {k: v for k, v in data["data"].items() if k not in secret}
            out.append({"seq": seq, "at": at, **data})
        return out

    def export(self, tournament_id: str) -> dict[str, Any]:
        """The log and the export of every table game of every round that has ended."""
        loaded = self.get(tournament_id)
        replay = Replay(self.games.store)
        games = {}
        for game in loaded.state.arena.games if loaded.state.arena else ():
            if game.recorded:  # an arena's games once recorded (each is its own deals)
                games[game.game_id] = replay.export(game.game_id)
        for rnd in loaded.state.rounds:
            if rnd.ended:
                for game_id in rnd.games:
                    if game_id is not None:
                        games[game_id] = replay.export(game_id)
        return {
            "format": "hearts-tournament/1",
            "tournament_id": tournament_id,
            "log": self.public_log(loaded),
            "games": games,
            "standings": standings_rows(loaded.state),
        }

    def hidden(self, game_id: str, token: str | None) -> bool:
        """Whether a read of this game must be refused: a table game of a round not ended yet,
        read by anyone but one of its own seats."""
        link = self.store.game_link(game_id)
        if link is None or link.round == arena.ARENA_ROUND:
            return False  # an arena's games are each on their own deals: read as any game
        try:
            state = self.load(link.tournament_id).state
        except Exception:
            return True  # a link without its log: keep the game to its seats
        if link.round <= len(state.rounds) and state.rounds[link.round - 1].ended:
            return False
        if token is None:
            return True
        snap = self.games.cache.get(game_id)
        return auth.seat_of(snap.state.state.seats, token) is None

    def hidden_games(self, game_ids: list[str]) -> set[str]:
        """Those of ``game_ids`` that are table games of a round not ended (for listings)."""
        links = self.store.game_links(game_ids)
        out = set()
        states: dict[str, Tournament | None] = {}
        for game_id, link in links.items():
            if link.round == arena.ARENA_ROUND:
                continue
            if link.tournament_id not in states:
                try:
                    states[link.tournament_id] = self.load(link.tournament_id).state
                except Exception:
                    states[link.tournament_id] = None
            state = states[link.tournament_id]
            if (
                state is None
                or link.round > len(state.rounds)
                or not state.rounds[link.round - 1].ended
            ):
                out.add(game_id)
        return out

    # -- writing ------------------------------------------------------------------------

    def _execute(self, tournament_id: str, command: TournamentCommand) -> Tournament:
        for _ in range(self.retries + 1):
            loaded = self._fold_log(tournament_id)
            state = loaded.state
            events = decide(command, state)
            if not events:
                return state
            try:
                self.store.append(
                    tournament_id,
                    loaded.version,
                    [event_to_dict(e) for e in events],
                    self.games.store.now(),
                )
            except Conflict:
                continue
            return fold(events, state)
        raise TooManyConflicts()

    def create(
        self,
        organiser: Player | None,
        *,
        name: str,
        rules: dict[str, Any] | None,
        rounds: int,
        boards: int,
        min_players: int,
        max_players: int,
        house_bot: str = "heuristic",
        tournament_id: str | None = None,
        format: str = "duplicate",
        duration_seconds: int = 0,
        grace_seconds: int = 0,
        rated: bool = False,
        starts_at: str | None = None,
    ) -> Loaded:
        """Create a tournament; ``organiser`` None: the operator's (``hearts tournaments
        create``), under no per-organiser limit. ``starts_at``: the sweep starts it then."""
        get_bot(house_bot)  # bots.UnknownBot names the strategy the server lacks
        organiser_id = organiser.player_id if organiser is not None else OPERATOR
        mine = 0
        for loaded in self.list(None, 200) if organiser is not None else ():
            created = loaded.state.created
            if created is not None and created.organiser == organiser_id:
                mine += loaded.state.status in (Status.UPCOMING, Status.RUNNING)
        if mine >= OPEN_PER_ORGANISER:
            raise TooManyTournaments(
                f"you organise {mine} tournaments not over yet; at most {OPEN_PER_ORGANISER}"
            )
        tournament_id = tournament_id or new_tournament_id()
        at = self.games.store.now()
        command = CreateTournament(
            tournament_id,
            name,
            organiser_id,
            rules,
            rounds,
            boards,
            min_players,
            max_players,
            house_bot,
            at,
            format,
            starts_at=starts_at,
            duration_seconds=duration_seconds,
            grace_seconds=grace_seconds,
            rated=rated,
        )
        # Listed first: a crash before the append leaves an id the listing skips (it has no
        # log), never a tournament that nobody can find.
        self.store.index(tournament_id, at)
        self._execute(tournament_id, command)
        self.store.schedule(tournament_id, starts_at)
        return self.load(tournament_id)

    def enter(self, tournament_id: str, player: Player, stand_in: str | None = None) -> Loaded:
        if stand_in is not None:
            get_bot(stand_in)
        self._execute(tournament_id, Enter(player.player_id, player.name, stand_in))
        if self.load(tournament_id).state.status is Status.RUNNING:
            self.advance(tournament_id)  # an arena's late entrant waits to be paired
        return self.load(tournament_id)

    def withdraw(self, tournament_id: str, player: Player) -> Loaded:
        self._execute(tournament_id, Withdraw(player.player_id))
        return self.get(tournament_id)

    def start(self, tournament_id: str, player: Player) -> Loaded:
        created = self.load(tournament_id).state.created
        command: TournamentCommand
        if created is not None and created.format is Format.ARENA:
            command = self.arena.start_command(player.player_id)
        else:
            command = Start(player.player_id, self.fresh_seed(), self.fresh_salt())
        self._execute(tournament_id, command)
        self.advance(tournament_id)
        return self.load(tournament_id)

    def cancel(self, tournament_id: str, player: Player, reason: str) -> Loaded:
        at = self.games.store.now()
        self._execute(tournament_id, Cancel(player.player_id, reason, at))
        loaded = self.load(tournament_id)
        self.store.running(tournament_id, False)
        self._over(tournament_id, loaded)
        return loaded

    def _over(self, tournament_id: str, loaded: Loaded) -> None:
        """A tournament over goes in the archiver's index (at its end's time; idempotent)."""
        if loaded.state.status in (Status.FINISHED, Status.CANCELLED):
            self.store.mark_over(tournament_id, loaded.entries[-1][1])

    # -- progress -----------------------------------------------------------------------

    def game_appended(
        self, game_id: str, version: int, before: GameState, after: GameState
    ) -> None:
        """A GameService.on_appended hook: a table game that just ended moves its tournament
        on. Never fails the game's append: a step lost here is taken by the next read."""
        over = (Phase.FINISHED, Phase.EXPIRED)
        if after.phase not in over or before.phase in over:
            return
        try:
            link = self.store.game_link(game_id)
        except Exception:
            log.exception("tournament of game %s", game_id)
            return
        if link is not None and link.round == arena.ARENA_ROUND:
            self.arena.game_ended(link.tournament_id, game_id)  # that game, not every one
        elif link is not None:
            self.advance(link.tournament_id)

    def advance(self, tournament_id: str) -> None:
        """``progress``, never failing its caller (a read, a start, a game's append): a step
        it could not take (Redis lost, a race lost too often) is taken by the next one."""
        try:
            self.progress(tournament_id)
        except Exception:
            log.exception("tournament %s: progress", tournament_id)

    def progress(self, tournament_id: str) -> None:
        """Take every step due, each decided from the log (see the module docstring)."""
        for step in range(64):  # a step per round at most, and a tournament has at most 8
            loaded = self.load(tournament_id)
            state = loaded.state
            if state.created is not None and state.created.format is Format.ARENA:
                self.arena.progress(tournament_id)  # service/app/arena.py
                self._over(tournament_id, self.load(tournament_id))  # to the archiver's index
                return
            if step == 0:  # the sweep's set: a crash anywhere else is caught up here
                self.store.running(tournament_id, state.status is Status.RUNNING)
            if state.status is not Status.RUNNING:
                self._over(tournament_id, loaded)
                return
            rnd = state.current
            assert rnd is not None
            for table in range(len(rnd.tables)):
                if rnd.plays(table) and rnd.games[table] is None:
                    self._open_table(tournament_id, state, rnd, table)
            state = self.load(tournament_id).state
            rnd = state.current
            assert rnd is not None
            for table, game_id in enumerate(rnd.games):
                if game_id is not None and rnd.results[table] is None:
                    self._record(tournament_id, state, rnd, table, game_id)
            state = self.load(tournament_id).state
            rnd = state.current
            assert rnd is not None
            if not rnd.complete:
                return
            seed, salt, at = self.fresh_seed(), self.fresh_salt(), self.games.store.now()
            number = rnd.number
            self._execute(tournament_id, EndRound(number, seed, salt, at))

    def sweep(self) -> int:
        """Advance every running tournament: what no game end nor read took up after a crash
        (a process killed between a table's end and the round's next step)."""
        self.start_due()
        running = self.store.all_running()
        for tournament_id in running:
            try:
                self.fair_play(tournament_id)
            except Exception:
                log.exception("tournament %s: fair play", tournament_id)
            self.advance(tournament_id)
        return len(running)

    def start_due(self, now: str | None = None) -> list[str]:
        """Start every scheduled tournament whose time has come, as its organiser would; one
        short of players then is cancelled. The ids started or cancelled."""
        now = now or self.games.store.now()
        done = []
        for tournament_id in self.store.due(now):
            try:
                loaded = self.load(tournament_id)
                created = loaded.state.created
                assert created is not None
                if loaded.state.status is Status.UPCOMING:
                    if len(loaded.state.active) >= created.min_players:
                        seed, salt = self.fresh_seed(), self.fresh_salt()
                        self._execute(tournament_id, Start(created.organiser, seed, salt))
                        self.advance(tournament_id)
                    else:
                        reason = "too few players at the scheduled start"
                        self._execute(tournament_id, Cancel(created.organiser, reason, now))
                        self._over(tournament_id, self.load(tournament_id))
                self.store.schedule(tournament_id, None)
                done.append(tournament_id)
            except Exception:
                log.exception("tournament %s: scheduled start", tournament_id)
        return done

    def fair_play(self, tournament_id: str, now: str | None = None) -> list[tuple[str, int]]:
        """Seats nobody is at, in the current round: a player the table has waited on for
        ``miss_after`` seconds (a clockless table; a clock's own timeouts hand the seat over)
        has the house bot stand in; every player whose seat a bot plays other than the
        stand-in they entered with (stood in for, or left) has missed the round: recorded once
        per round, and a second miss withdraws them. The (player, round) misses seen.

        The miss is recorded from the seat's bot, so a crash between the stand-in and the
        record is caught up by the next sweep."""
        state = self.load(tournament_id).state
        rnd = state.current
        created = state.created
        if state.status is not Status.RUNNING or rnd is None or created is None:
            return []
        cutoff = _before(now or self.games.store.now(), self.miss_after)
        entrants = {e.player_id: e for e in state.entrants}
        missed: list[tuple[str, int]] = []
        for table, game_id in enumerate(rnd.games):
            if game_id is None or rnd.results[table] is not None:
                continue
            # load, not snapshot: a table waiting on a bot whose runner was lost (a worker
            # killed mid-turn) is handed over again here, not only at the next start-up sweep.
            game = self.games.load(game_id).state.state
            if game.phase in (Phase.FINISHED, Phase.EXPIRED):
                continue
            seated = rnd.tables[table]
            if self.games.store.silent_before(game_id, cutoff):
                for seat in awaiting(game):
                    player = seated[seat]
                    if player is not None and game.seats[seat].bot is None:
                        self._stand_in(game_id, seat, created.house_bot)
                game = self.games.snapshot(game_id).state.state
            for seat, player in enumerate(seated):
                entrant = entrants.get(player) if player is not None else None
                bot = game.seats[seat].bot
                if entrant is None or bot is None or bot == entrant.stand_in:
                    continue
                if rnd.number not in entrant.missed:
                    self._execute(tournament_id, RecordMiss(entrant.player_id, rnd.number))
                missed.append((entrant.player_id, rnd.number))
        return missed

    def _open_table(
        self, tournament_id: str, state: Tournament, rnd: RoundState, table: int
    ) -> None:
        created = state.created
        assert created is not None
        game_id = table_game_id(tournament_id, rnd.number, table, rnd.seed)
        # The link first: the game is kept to its seats from the moment it exists.
        self.store.link_game(game_id, TableLink(tournament_id, rnd.number, table))
        names = {e.player_id: e for e in state.entrants}
        seated = rnd.tables[table]
        players = {s: (p, names[p].name) for s, p in enumerate(seated) if p is not None}
        bots = [created.house_bot if p is None else None for p in seated]
        try:
            self.games.create(
                game_id,
                rules=table_rules(created.rules, created.boards),
                seats=bots,
                plan=DealPlan(seed=rnd.seed),
                idempotency=None,
                players=players,
            )
        except GameAlreadyExists:
            plan = self.games.snapshot(game_id).state.plan
            if plan.seed != rnd.seed:  # not ours: never link a game dealt otherwise
                raise
        # Bot accounts: their seats played by the strategy they entered with.
        for seat, player_id in enumerate(seated):
            stand_in = names[player_id].stand_in if player_id is not None else None
            if stand_in is not None:
                self._stand_in(game_id, seat, stand_in)
        number = rnd.number
        self._execute(tournament_id, LinkTable(number, table, game_id))

    def _stand_in(self, game_id: str, seat: int, bot: str) -> None:
        """Hand the seat to the player's stand-in, unless it has it (or the game is over)."""
        table = self.games.snapshot(game_id).state.state
        if table.seats[seat].bot is not None or table.phase in (Phase.FINISHED, Phase.EXPIRED):
            return
        # Another progress step may hand it over between our read and our append: the command
        # then decides no event, which the store refuses (ValueError). Done already.
        with contextlib.suppress(ValueError):
            self.games.command(game_id, seat, lambda _state: SetSeatBot(seat, bot))

    def _record(
        self, tournament_id: str, state: Tournament, rnd: RoundState, table: int, game_id: str
    ) -> None:
        snap = self.games.snapshot(game_id)
        if snap.state.state.phase not in (Phase.FINISHED, Phase.EXPIRED):
            return
        boards = state.created.boards  # type: ignore[union-attr]
        entrants = {e.player_id: e for e in state.entrants}
        stand_ins = [
            entrants[p].stand_in if p is not None and p in entrants else None
            for p in rnd.tables[table]
        ]
        result = table_result(game_log.read(self.games.store, game_id), boards, stand_ins)
        number = rnd.number
        self._execute(tournament_id, RecordTable(number, table, game_id, result))
