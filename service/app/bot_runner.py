"""Bots play their seats until a human must act, one append per bot move.

Bots play after the request that woke them has been answered: a request makes at most a small
budget of bot moves itself (``Settings.bot_moves_per_request`` moves within
``Settings.bot_request_ms``; none when it creates a game), then hands the game over to the
background runner (``BackgroundBots``) through the Redis queue of games due
(``service/store/bot_queue.py``), where one runner at a time holds a lease on the game. Every
process runs one (a thread; a greenlet under gevent), so the games of a crashed process are
taken up by the others once their lease runs out.

One append per move: a crash between two moves leaves a log that is a legal game, merely
waiting on a bot; the queue (its lease runs out), a read of the game (``GameService.load``
hands it over again) or the start-up sweep carries on from there. A bot's seed is derived from
the game id, the version it plays at and its seat, so the same log always gets the same bot
moves (replays are deterministic, and two processes carrying on the same game race to append the
very same move).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
import weakref
from collections.abc import Callable

import redis as redis_lib

from bots import UnknownBot, bot_command, get_bot
from domain.commands import ChooseMoonScoring, Command, PassCards, PlayCard
from domain.decider import decide
from domain.errors import RuleViolation
from domain.events import Event
from domain.rules import MoonScoring
from domain.state import GameState, Phase
from domain.views import awaiting, seat_view
from service import metrics
from service.app.errors import GameNotFound, WritesUnavailable
from service.app.game import StoredGame, new_event
from service.app.state_cache import Snapshot
from service.cooperative import pause
from service.store.append import AppendResult
from service.store.bot_queue import BotQueue
from service.store.envelope import NewEvent, RecordedEvent
from service.store.errors import ConcurrencyConflict
from service.store.event_store import RedisEventStore
from service.store.outage import Outage

log = logging.getLogger(__name__)
# The shortest sleep between looks at the queue: a game due "now" that another runner took
# first is not polled in a busy loop.
_LEAST_SLEEP = 0.005

# The game service's two steps a bot move needs: load a game, and append decided events at a
# snapshot's version (adding a deal if one is due). Passed in, so the runner and the service do
# not import each other.
Load = Callable[[str], Snapshot[StoredGame]]
AppendDecided = Callable[
    [str, Snapshot[StoredGame], list[NewEvent], StoredGame, str],
    tuple[AppendResult, "Snapshot[StoredGame] | None"],
]


def bot_seed(game_id: str, version: int, seat: int) -> str:
    return hashlib.sha256(f"bot\0{game_id}\0{version}\0{seat}".encode()).hexdigest()


def bot_to_act(state: GameState) -> int | None:
    """The first seat that must act now and is played by a bot, if any."""
    for seat in awaiting(state):
        if state.seats[seat].bot is not None:
            return seat
    return None


def bot_move(
    state: GameState, seat: int, seed: str, *, bot: str | None = None
) -> tuple[Command, list[Event]]:
    """The move of the seat's bot (or of ``bot``, e.g. the timeout bot standing in for the
    seat's player), decided; a legal fallback if the strategy is unknown or errs."""
    name = bot or state.seats[seat].bot or "random"
    try:
        command = bot_command(get_bot(name), state, seat, seed)
        # Decided here: a bot that breaks a rule must not stop the game.
        return command, decide(command, state)
    except (UnknownBot, RuleViolation, ValueError, IndexError) as error:
        log.error("bot %r failed at seat %s (%s); playing a fallback move", name, seat, error)
        command = fallback_command(state, seat)
        return command, decide(command, state)


def fallback_command(state: GameState, seat: int) -> Command:
    view = seat_view(state, seat)
    if state.phase is Phase.PASSING:
        return PassCards(seat, view.legal_cards[: view.cards_to_pass])
    if state.phase is Phase.MOON_CHOICE:
        return ChooseMoonScoring(seat, MoonScoring.ADD_TO_OTHERS)
    return PlayCard(seat, view.legal_cards[0])


def table_pace(state: GameState, pace_seconds: float, think_seconds: float = 0.0) -> float:
    """Seconds before each bot move, all of them made in the background (0: no wait, and the
    request that woke the bots makes the first ones itself).

    ``think_seconds`` at a table where a person plays their own seat: a bot waits a short
    human-like moment before acting, so a person sees the cards come one by one (the setting
    ``bot_think``; 0, the default, is no wait). ``pace_seconds`` in a game in which every
    person's seat is played by a bot (away, or handed over), with or without a turn clock:
    bots standing in for everyone play on at a person's pace, so a player who comes back finds
    the game going rather than over, and their "I'm back" is not raced by a bot move a
    millisecond; and a guest who hands the one seat of three bots' table over gets no game of
    bots at full speed that no create limit counted (issue 42). 0 where only bots ever sat:
    nobody is watching them think, and the create limits counted that game."""
    people = [seat for seat in state.seats if seat.player]
    if not people:
        return 0.0
    if any(seat.bot is None for seat in people):
        return think_seconds
    return pace_seconds


def bots_only(state: GameState) -> bool:
    """Every seat taken and played by a bot, in a game not over: a game of bots only, which
    the deployment caps (``Settings.max_bot_games``) whether it was created so or a person
    handed their seat over."""
    if state.phase in (Phase.FINISHED, Phase.EXPIRED) or not state.seats:
        return False
    return all(seat.bot is not None for seat in state.seats)


class BotRunner:
    """Plays bot moves through the game service's ``load`` and ``append`` steps."""

    def __init__(
        self, load: Load, append: AppendDecided, *, conflict_limit: int, moves_per_run: int
    ) -> None:
        self.load = load
        self.append = append
        self.conflict_limit = conflict_limit
        self.moves_per_run = moves_per_run
        # What this runner did (read by tests and the background runner's log).
        self.moves_made = 0
        self.conflicts_met = 0

    @staticmethod
    def must_act(state: GameState) -> bool:
        return bot_to_act(state) is not None

    def run(
        self,
        game_id: str,
        cause: str,
        snap: Snapshot[StoredGame] | None = None,
        *,
        deadline: float | None = None,
        at_least_one: bool = False,
    ) -> tuple[list[RecordedEvent], Snapshot[StoredGame]]:
        """Play bot moves (at most ``moves_per_run``, and none begun after ``deadline``, a
        ``time.monotonic()``; ``at_least_one``: the first move whatever the deadline) until none
        must act; the events and the final state.

        Each move's command id is ``<cause>+bot<n>``, so the moves a command caused can be
        found in the log (an idempotent replay rebuilds its response from them). ``snap`` is
        the game as the caller last loaded or appended it (else it is loaded); each move is
        appended with its version as the expected one, so a stale one only costs a conflict.
        """
        appended: list[RecordedEvent] = []
        moves = conflicts = 0
        if snap is None:
            snap = self.load(game_id)
        while moves < self.moves_per_run:
            first = at_least_one and moves == 0
            if deadline is not None and time.monotonic() >= deadline and not first:
                break
            state = snap.state.state
            seat = bot_to_act(state)
            if seat is None:
                break
            _, events = bot_move(state, seat, bot_seed(game_id, snap.version, seat))
            table = snap.state.after(events)
            try:
                result, after = self.append(
                    game_id,
                    snap,
                    [new_event(e) for e in events],
                    table,
                    f"{cause}+bot{moves + 1}",
                )
            except ConcurrencyConflict:
                # Someone else moved (a human, or another process playing this very bot move).
                metrics.conflict_retried()
                conflicts += 1
                self.conflicts_met += 1
                if conflicts > self.conflict_limit:
                    log.warning(
                        "game %s: giving up bot moves after %d conflicts", game_id, conflicts
                    )
                    break
                snap = self.load(game_id)
                continue
            except WritesUnavailable as exc:
                # The move that woke the bots is recorded; theirs wait for the store to take
                # writes again (the next load of the game carries them on).
                log.warning("game %s: bot moves wait: %s", game_id, exc)
                break
            appended += result.events
            moves += 1
            self.moves_made += 1
            metrics.bot_moved()
            assert after is not None  # bot moves carry no idempotency record: never replayed
            snap = after
            pause()  # a move is up to ~20 ms of CPU (montecarlo): let the worker's requests in
        return appended, snap


class BackgroundBots:
    """Plays the games handed over to it, a turn at a time, wherever the request came from.

    A turn: take the game due longest from the queue (leased for ``lease_seconds``), play its
    bots for at most a quarter of the lease, then put it back at the end of the queue if bots
    still must act (so one long game of bots does not starve the others) or remove it. The
    runner's thread (``start``) wakes when this process hands a game over, and otherwise looks
    at the queue every ``poll_seconds`` for games handed over elsewhere or left by a runner that
    died (their lease ran out).
    """

    def __init__(
        self,
        runner: BotRunner,
        queue: BotQueue,
        *,
        lease_seconds: float,
        poll_seconds: float,
        away_pace_seconds: float = 2.0,
        think_seconds: float = 0.0,
    ) -> None:
        self.runner = runner
        self.queue = queue
        self.lease_ms = max(1, int(lease_seconds * 1000))
        self.turn_seconds = lease_seconds / 4
        self.poll_seconds = poll_seconds
        self.away_pace_seconds = away_pace_seconds
        self.think_seconds = think_seconds
        self.unpaced: Callable[[str], bool] = lambda _game_id: False  # set by its service
        self.owner = uuid.uuid4().hex[:12]
        self.turns = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        # Redis lost (the master that ran it gone, say): said once, not once per game and turn.
        self.outage = Outage(log, "bots")

    def pace(self, state: GameState) -> float:
        """Seconds before each bot move of this game (``table_pace``); no pace for bots that
        stand in for everyone in a game ``self.unpaced`` names (a tournament's table of bot
        accounts: ``GameService.budgeted_elsewhere``)."""
        pace = table_pace(state, self.away_pace_seconds, self.think_seconds)
        if pace and self.unpaced(state.game_id):
            return table_pace(state, 0.0, self.think_seconds)
        return pace

    def hand_over(self, game_id: str, delay_seconds: float = 0.0) -> None:
        """Queue the game for bot moves, due after ``delay_seconds`` (kept if already queued
        or leased), and wake up."""
        self.queue.hand_over(game_id, int(delay_seconds * 1000))
        self._wake.set()

    def drive_due(self) -> int:
        """Play a turn of every game due, until none is; how many turns were played."""
        turns = 0
        while not self._stop.is_set():
            game_id = self.queue.take(self.lease_ms)
            if game_id is None:
                break
            self.turn(game_id)
            turns += 1
        return turns

    def idle_seconds(self) -> float:
        """How long to sleep once no game is due: until the first queued game is (a paced game's
        next move, a lease's end), but at most ``poll_seconds`` (games handed over elsewhere).
        Without this a paced game moved once a poll, not once a pace."""
        due_ms = self.queue.next_due_ms()
        if due_ms is None:
            return self.poll_seconds
        return min(self.poll_seconds, max(due_ms / 1000, _LEAST_SLEEP))

    def turn(self, game_id: str) -> None:
        self.turns += 1
        cause = f"bots-{self.owner}-{uuid.uuid4().hex[:12]}"
        try:
            snap = self.runner.load(game_id)
            pace = self.pace(snap.state.state)
            deadline = time.monotonic() + (0 if pace else self.turn_seconds)  # paced: one move
            _, snap = self.runner.run(game_id, cause, snap, deadline=deadline, at_least_one=True)
        except GameNotFound:
            self.queue.done(game_id)
            return
        except Exception as error:
            # Redis away, a corrupt game...: the lease runs out and the game is tried again.
            self.outage.failed(error, f"; game {game_id} is tried again later")
            return
        if self.runner.must_act(snap.state.state):
            self.queue.requeue(game_id, int(pace * 1000))
            return
        self.queue.done(game_id)
        # A human may have moved since (and handed the game over before the removal).
        if self.runner.must_act(self.runner.load(game_id).state.state):
            self.queue.hand_over(game_id)

    def start(self) -> threading.Thread:
        """Drive the queue in a daemon thread until ``stop`` (or until this object is gone)."""
        thread = threading.Thread(
            target=_drive_forever,
            args=(weakref.ref(self), self._wake, self._stop, self.poll_seconds),
            name="hearts-bots",
            daemon=True,
        )
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()


def _drive_forever(
    ref: weakref.ref[BackgroundBots],
    wake: threading.Event,
    stop: threading.Event,
    poll_seconds: float,
) -> None:
    # Holds the runner only while it works: an app dropped (a test's) lets its thread end.
    failures = 0
    while not stop.is_set():
        bots = ref()
        if bots is None:
            return
        wake.clear()
        sleep = poll_seconds
        try:
            bots.drive_due()
            sleep = bots.idle_seconds()
            failures = 0
            bots.outage.ok()
        except Exception as error:  # Redis away: try again later, backing off
            bots.outage.failed(error, "; reading the queue of games due again later")
            failures += 1
        del bots
        wake.wait(sleep * 2 ** min(failures, 5))


def sweep(store: RedisEventStore, runner: BotRunner, hand_over: Callable[[str], None]) -> int:
    """Hand over every game waiting on a bot (e.g. after a crash). Returns games handed over."""
    carried = 0
    cursor = None
    while True:
        page = store.list_games(cursor, limit=200)
        for game_id in page.game_ids:
            try:
                snap = runner.load(game_id)
                if bot_to_act(snap.state.state) is not None:
                    hand_over(game_id)
                    carried += 1
            except Exception:  # one broken game must not stop the sweep of the others
                log.exception("sweep: cannot carry on game %s", game_id)
        cursor = page.next_cursor
        if cursor is None:
            return carried


def start_sweep(
    store: RedisEventStore,
    runner: BotRunner,
    hand_over: Callable[[str], None],
    lock_key: str,
    lock_seconds: int = 60,
) -> threading.Thread:
    """Sweep in a background thread; a Redis lock keeps several workers from sweeping at once.
    Redis unreachable (the service started before it): the sweep waits for it, with back-off."""

    def run() -> None:
        delay = 0.5
        outage = Outage(log, "start-up sweep")
        while True:
            try:
                if not store.redis.set(lock_key, uuid.uuid4().hex, nx=True, ex=lock_seconds):
                    outage.ok()
                    return
                try:
                    carried = sweep(store, runner, hand_over)
                finally:
                    store.redis.delete(lock_key)
                outage.ok()
                if carried:
                    log.warning("start-up sweep handed over %d game(s) waiting on a bot", carried)
                return
            except (redis_lib.ConnectionError, redis_lib.TimeoutError) as error:
                outage.failed(error, f"; retrying in {delay:.1f} s, then less often")
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
            except Exception:
                log.exception("start-up sweep failed")
                return

    thread = threading.Thread(target=run, name="hearts-sweep", daemon=True)
    thread.start()
    return thread
