"""Bots play their seats until a human must act, one append per bot move.

One append per move: a crash between two moves leaves a log that is a legal game, merely
waiting on a bot; the next request on the game (``GameService.load``) or the start-up sweep
carries on from there. A bot's seed is derived from the game id, the version it plays at and
its seat, so the same log always gets the same bot moves (replays are deterministic, and two
processes carrying on the same game race to append the very same move).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import uuid
from collections.abc import Callable

from bots import UnknownBot, bot_command, get_bot
from domain.commands import ChooseMoonScoring, Command, PassCards, PlayCard
from domain.decider import decide
from domain.errors import RuleViolation
from domain.events import Event
from domain.rules import MoonScoring
from domain.state import GameState, Phase
from domain.views import awaiting, seat_view
from service import metrics
from service.app.errors import WritesUnavailable
from service.app.game import StoredGame, new_event
from service.store.envelope import NewEvent, RecordedEvent
from service.store.event_store import AppendResult, ConcurrencyConflict, RedisEventStore, Snapshot

log = logging.getLogger(__name__)

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


def bot_move(state: GameState, seat: int, seed: str) -> tuple[Command, list[Event]]:
    """The seat's bot's move (a legal fallback if the strategy is unknown or errs), decided."""
    name = state.seats[seat].bot or "random"
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


class BotRunner:
    """Plays bot moves through the game service's ``load`` and ``append`` steps."""

    def __init__(
        self, load: Load, append: AppendDecided, *, conflict_limit: int, moves_per_run: int
    ) -> None:
        self.load = load
        self.append = append
        self.conflict_limit = conflict_limit
        self.moves_per_run = moves_per_run

    @staticmethod
    def must_act(state: GameState) -> bool:
        return bot_to_act(state) is not None

    def run(
        self, game_id: str, cause: str, snap: Snapshot[StoredGame] | None = None
    ) -> tuple[list[RecordedEvent], Snapshot[StoredGame]]:
        """Play bot moves (at most ``moves_per_run``) until none must act; the events and the
        final state.

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
            metrics.bot_moved()
            assert after is not None  # bot moves carry no idempotency record: never replayed
            snap = after
        return appended, snap


def sweep(store: RedisEventStore, runner: BotRunner, page_size: int = 200) -> int:
    """Carry on every game waiting on a bot (e.g. after a crash). Returns games carried on."""
    carried = 0
    cursor = None
    while True:
        page = store.list_games(cursor, limit=page_size)
        for game_id in page.game_ids:
            try:
                snap = runner.load(game_id)
                if bot_to_act(snap.state.state) is not None:
                    runner.run(game_id, f"sweep-{uuid.uuid4().hex}", snap)
                    carried += 1
            except Exception:  # one broken game must not stop the sweep of the others
                log.exception("sweep: cannot carry on game %s", game_id)
        cursor = page.next_cursor
        if cursor is None:
            return carried


def start_sweep(
    store: RedisEventStore, runner: BotRunner, lock_key: str, lock_seconds: int = 60
) -> threading.Thread:
    """Sweep in a background thread; a Redis lock keeps several workers from sweeping at once."""

    def run() -> None:
        try:
            if not store.redis.set(lock_key, uuid.uuid4().hex, nx=True, ex=lock_seconds):
                return
            try:
                carried = sweep(store, runner)
            finally:
                store.redis.delete(lock_key)
            if carried:
                log.warning("start-up sweep carried on %d game(s) waiting on a bot", carried)
        except Exception:
            log.exception("start-up sweep failed")

    thread = threading.Thread(target=run, name="hearts-sweep", daemon=True)
    thread.start()
    return thread
