"""An arena's progress: pair whoever waits, create the games, record them, finish on time.

The rules are ``domain/tournament/arena.py``'s; this is the service side of them, run by
``TournamentService.progress`` for a tournament of format ``arena`` (after the start, on every
read, when one of its games ends, on an entry, and by the 5-second sweep). Each step is decided
from the log as just read and appended at that version (``TournamentService._execute``), and is
idempotent, so a crash (a SIGKILL of any process) between two steps loses nothing and doubles
nothing:

1. **every game paired and not yet recorded exists**: its id is in its ``ArenaPaired`` event,
   so a creation lost to a crash is made again under the same id (a second try finds the game
   and checks it seats the pairing), linked first in the tournament's game index (its end
   then moves the arena on, and it is budgeted as a tournament table);
2. **every such game that has ended is recorded** (``RecordArenaGame``; once: a second record
   decides nothing), with the time it ended by its own log, so a record delayed by a crash
   counts exactly as it would have (the grace is judged on the game's end, not the record's);
3. **whoever waits is paired** (``PairArena``; the service supplies the time, ratings and fresh
   unguessable game ids): a player in a game not recorded is busy in the log itself, so a
   pairing decided on an old version loses the append and is decided again;
4. **the arena finishes** when it is due (``FinishArena``).

Games: a rated arena's games are ordinary games on the service's deals (rated like a matched
game: they have a clock); an unrated arena's are arranged games dealt from a fresh secret seed
each (never rated, as every arranged game).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from domain.events import GameAbandoned, GameEnded, GameExpired
from domain.state import Phase
from domain.tournament.arena import ArenaGame, instant, waiting
from domain.tournament.arena_events import FinishArena, PairArena, RecordArenaGame, StartArena
from domain.tournament.decider import Status, Tournament, table_rules
from service.app import game_log
from service.app.deal_plan import DealPlan
from service.app.errors import GameAlreadyExists, GameNotFound
from service.store.tournaments import TableLink

if TYPE_CHECKING:
    from service.app.tournaments import TournamentService

log = logging.getLogger(__name__)
_OVER = (Phase.FINISHED, Phase.EXPIRED)
_ENDS = (GameEnded, GameExpired, GameAbandoned)
RATINGS_EVERY = 10.0  # seconds
ARENA_ROUND = 0  # an arena game's "round" in the tournament's game index: it has none


def new_game_id() -> str:
    """A fresh game id, unguessable (nobody can make a game under it first), of the usual form."""
    return "g" + secrets.token_hex(10)


def games_rows(state: Tournament) -> list[dict[str, Any]]:
    """Every game paired: its seats, game id and (once recorded) its result."""
    arena = state.arena
    return [
        {
            "game": g.number,
            "game_id": g.game_id,
            "seats": list(g.seats),
            "paired_at": g.paired_at,
            "scores": list(g.scores) if g.scores is not None else None,
            "points": list(g.points) if g.points is not None else None,
            "finished_at": g.finished_at,
            "counted": g.counted,
        }
        for g in (arena.games if arena else ())
    ]


class ArenaProgress:
    def __init__(
        self,
        tournaments: TournamentService,
        ratings: Callable[[], Mapping[str, float]] | None = None,
    ) -> None:
        self.tournaments = tournaments
        self.games = tournaments.games
        self.ratings = ratings or dict
        self._rated: tuple[float, Mapping[str, float]] | None = None

    def _ratings(self) -> Mapping[str, float]:
        """The players' ratings, read again at most every RATINGS_EVERY seconds: a pairing
        follows every game's end, and a rating moves only as the projector folds games."""
        now = time.monotonic()
        if self._rated is None or now - self._rated[0] > RATINGS_EVERY:
            self._rated = (now, dict(self.ratings()))
        return self._rated[1]

    def start_command(self, by: str) -> StartArena:
        return StartArena(by, self.games.store.now())

    def progress(self, tournament_id: str) -> None:
        """Take every step due (the module docstring), each decided from the log: every game
        in play checked, whoever waits paired, the end."""
        self._step(tournament_id, None)

    def game_ended(self, tournament_id: str, game_id: str) -> None:
        """One of the arena's games ended (a ``GameService.on_appended`` hook): record it,
        pair its players again. Never fails its caller: the sweep takes a step lost here."""
        try:
            self._step(tournament_id, (game_id,))
        except Exception:
            log.exception("arena %s: game %s ended", tournament_id, game_id)

    def _step(self, tournament_id: str, only: tuple[str, ...] | None) -> None:
        """``only``: the games in play to look at (None: all of them)."""
        service = self.tournaments
        state = service.load(tournament_id).state
        service.store.running(tournament_id, state.status is Status.RUNNING)
        if state.status is not Status.RUNNING or state.arena is None:
            return
        for game in state.arena.in_play:
            if only is None or game.game_id in only:
                self._ensure(tournament_id, state, game)
                self._record_if_over(tournament_id, state, game)
        for _ in range(4):  # a pairing lost to another process's append is decided again
            state = service.load(tournament_id).state
            arena = state.arena
            assert arena is not None
            now = self.games.store.now()
            if len(waiting(state)) < 4 or instant(now) >= instant(arena.ends_at):
                break
            tables = len(waiting(state)) // 4
            ratings = tuple(sorted(self._ratings().items()))
            ids = tuple(new_game_id() for _ in range(tables))
            after = service._execute(tournament_id, PairArena(now, ratings, ids))
            for game in after.arena.games[len(arena.games) :] if after.arena else ():
                self._ensure(tournament_id, after, game)  # the games just paired, created
        service._execute(tournament_id, FinishArena(self.games.store.now()))

    def _ensure(self, tournament_id: str, state: Tournament, game: ArenaGame) -> None:
        """The paired game exists (created now if a crash lost its creation), and each bot
        account's seat is its stand-in's (handed over now if a crash came between)."""
        created = state.created
        assert created is not None
        names = {e.player_id: e for e in state.entrants}
        try:
            table = self.games.snapshot(game.game_id).state.state
        except GameNotFound:
            self._create(tournament_id, state, game)
            table = self.games.snapshot(game.game_id).state.state
        if table.phase in _OVER:
            return
        for seat, player_id in enumerate(game.seats):
            stand_in = names[player_id].stand_in
            if stand_in is not None and table.seats[seat].bot is None:
                self.tournaments._stand_in(game.game_id, seat, stand_in)

    def _create(self, tournament_id: str, state: Tournament, game: ArenaGame) -> None:
        created = state.created
        assert created is not None
        # The link first: the game is the tournament's (and budgeted so) from its first moment.
        link = TableLink(tournament_id, ARENA_ROUND, game.number)
        self.tournaments.store.link_game(game.game_id, link)
        names = {e.player_id: e for e in state.entrants}
        players = {s: (p, names[p].name) for s, p in enumerate(game.seats)}
        # Unrated: an arranged game on a fresh secret seed (never rated); rated: the service's.
        plan = DealPlan() if created.rated else DealPlan(seed=secrets.token_hex(16))
        try:
            self.games.create(
                game.game_id,
                rules=table_rules(created.rules, created.boards),
                seats=[None] * len(game.seats),
                plan=plan,
                idempotency=None,
                players=players,
            )
        except GameAlreadyExists:
            table = self.games.snapshot(game.game_id).state.state
            seated = tuple(s.player_id for s in table.seats)
            if seated != game.seats:  # not ours: never count a game seated otherwise
                raise

    def _record_if_over(self, tournament_id: str, state: Tournament, game: ArenaGame) -> None:
        with contextlib.suppress(GameNotFound):
            # A load, not a snapshot: a game whose bots a crash (or a lost race) stopped is
            # handed to the background runner again, so no game in play waits for nobody.
            snap = self.games.load(game.game_id)
            if snap.state.state.phase not in _OVER:
                return
            created = state.created
            assert created is not None
            entrants = {e.player_id: e for e in state.entrants}
            stand_ins = [entrants[p].stand_in if p in entrants else None for p in game.seats]
            entries = game_log.read(self.games.store, game.game_id)
            from service.app.tournaments import table_result

            boards = table_result(entries, created.boards, stand_ins)
            scores = tuple(sum(b[s] for b in boards) for s in range(len(game.seats)))
            ended = next((e.time for e in entries if isinstance(e.event, _ENDS)), entries[-1].time)
            command = RecordArenaGame(game.number, game.game_id, scores, ended)
            self.tournaments._execute(tournament_id, command)
