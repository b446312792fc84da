"""Games nobody is held hostage in (issue 32, item 9): a game without a turn clock whose awaited
player has been silent for ``after`` seconds (``HEARTS_ABANDON_AFTER``) ends as abandoned.

The service decides ``AbandonGame(seat, at=now)`` on it and appends ``GameAbandoned`` and
``GameEnded`` at the game's version, like any command (a game with a turn clock times the seat
out instead: service/app/timekeeper.py). Candidates come from the store's silent index (a sorted
set per partition by each clockless game's last append, kept by every append), never from a
scan of the games. A move that lands first wins the append's version check, and the game is
looked at again; two sweepers (two workers) let one win the same way.

Time is an input: ``abandon_silent`` takes ``now``; the background thread passes the clock's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from domain.commands import AbandonGame
from domain.decider import decide
from domain.errors import RuleViolation
from domain.state import GameState
from domain.views import awaiting
from service.app.expiry import append_swept, every_tenth, iso, start_sweeping
from service.app.game_service import IN_PLAY, GameService

log = logging.getLogger(__name__)

BATCH = 100  # candidates read per partition per pass


def abandon_silent(
    service: GameService, now: datetime, after_seconds: float
) -> list[tuple[str, int]]:
    """End every game in play without a turn clock whose last append was more than
    ``after_seconds`` before ``now`` and whose awaited seat is its own player's; the
    (game, seat that left) of each this call ended."""
    cutoff = iso(now - timedelta(seconds=after_seconds))
    done: list[tuple[str, int]] = []
    for game_id in service.store.silent_since_before(cutoff, BATCH):
        seat = _abandon(service, game_id, now, cutoff)
        if seat is not None:
            done.append((game_id, seat))
    return done


def silent_seat(state: GameState) -> int | None:
    """The first seat the game waits on that its own player holds (not a bot), if any."""
    return next(
        (s for s in awaiting(state) if state.seats[s].player and not state.seats[s].bot), None
    )


def _abandon(service: GameService, game_id: str, now: datetime, cutoff: str) -> int | None:
    for _ in range(service.retries + 1):
        snap = service.cache.get(game_id)
        # Read after the game: a move appended since is in the snapshot or loses the append.
        if not service.store.silent_before(game_id, cutoff):
            return None  # heard from since (or taken out of the index)
        state = snap.state.state
        if state.phase not in IN_PLAY or state.rules.seconds_per_decision:
            service.store.set_silent(game_id, None)  # over (or never so): the entry is stale
            return None
        seat = silent_seat(state)
        if seat is None:  # bots to move: the runner's; look again after another wait
            service.store.set_silent(game_id, iso(now))
            return None
        try:
            events = decide(AbandonGame(seat, iso(now)), state)
        except RuleViolation as refused:
            log.warning("game %s: abandonment of seat %d refused: %s", game_id, seat, refused)
            return None
        if not append_swept(service, game_id, snap, events, "abandon", at=iso(now)):
            continue  # a move (or another sweeper) came first: look again
        return seat
    return None


def start_abandonment(
    service: GameService,
    after_seconds: float,
    *,
    interval: float | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> threading.Event:
    """End silent clockless games in a background thread, every ``interval`` seconds (default:
    a tenth of ``after_seconds``, between 1 s and a minute), until the returned event is set."""
    return start_sweeping(
        lambda: len(abandon_silent(service, clock(), after_seconds)),
        interval if interval is not None else every_tenth(after_seconds),
        "abandonment",
        "ended %d game(s) a silent player left",
    )
