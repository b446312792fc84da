"""Games that never start are not kept forever (issue 22 item 8; the waiting part of issue 19).

A game still waiting for players ``ttl`` seconds after it was created expires: the service
decides ``ExpireGame(at=now)`` on it and appends the ``GameExpired`` event at the game's version,
like any command. Candidates come from the store's index of waiting games (a sorted set per
partition by creation time, kept by the appends that open and close a wait), never from a scan
of every game. Two sweepers (two workers) may pick the same game: the append's version check lets
one win, and the other finds the game expired and moves on.

Time is an input: ``expire_waiting`` takes ``now``; the background thread passes the clock's.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from domain.commands import ExpireGame
from domain.decider import decide
from domain.errors import RuleViolation
from domain.events import Event
from domain.state import Phase
from service.app.game import StoredGame, new_event
from service.app.game_service import GameService
from service.app.state_cache import Snapshot
from service.store.errors import ConcurrencyConflict
from service.store.outage import Outage

log = logging.getLogger(__name__)

BATCH = 100  # candidates read per partition per pass


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def expire_waiting(service: GameService, now: datetime, ttl_seconds: float) -> list[str]:
    """Expire every game created more than ``ttl_seconds`` before ``now`` that still waits for
    players; the ids of those this call expired."""
    cutoff = iso(now - timedelta(seconds=ttl_seconds))
    expired: list[str] = []
    while True:
        candidates = service.store.waiting_since_before(cutoff, BATCH)
        done = [game_id for game_id in candidates if _expire(service, game_id, now)]
        expired += done
        if len(candidates) < BATCH or not done:  # all read, or nothing moved: the next pass
            return expired


def _expire(service: GameService, game_id: str, now: datetime) -> bool:
    for _ in range(service.retries + 1):
        snap = service.cache.get(game_id)
        state = snap.state.state
        if state.phase is not Phase.WAITING:
            # Started, or expired by another sweeper: the index entry is stale.
            service.store.forget_waiting(game_id)
            return False
        try:
            events = decide(ExpireGame(at=iso(now)), state)
        except RuleViolation:
            return False
        if not append_swept(service, game_id, snap, events, "expire"):
            continue  # a join (or another sweeper) came first: look again
        return True
    return False


def anonymous_head_start(ttl_seconds: int, anonymous_ttl_seconds: int) -> int:
    """How much earlier the wait of a game created without a player's key counts from, so that
    the one sweep (``ttl_seconds``) expires it ``anonymous_ttl_seconds`` after its creation
    (issue 42: a stranger's waiting games are not kept a day). 0: no head start (either is 0,
    or the anonymous ttl is not the shorter)."""
    if not ttl_seconds or not anonymous_ttl_seconds:
        return 0
    return max(ttl_seconds - anonymous_ttl_seconds, 0)


def start_expiry(
    service: GameService,
    ttl_seconds: float,
    *,
    interval: float | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> threading.Event:
    """Expire waiting games in a background thread, every ``interval`` seconds (default: a
    tenth of the ttl, at most a minute), until the returned event is set."""
    return start_sweeping(
        lambda: len(expire_waiting(service, clock(), ttl_seconds)),
        interval if interval is not None else every_tenth(ttl_seconds),
        "expiry",
        "expired %d game(s) that never started",
    )


def append_swept(
    service: GameService,
    game_id: str,
    snap: Snapshot[StoredGame],
    events: Sequence[Event],
    kind: str,
    at: str | None = None,
) -> bool:
    """Append what a sweep decided on ``snap`` (command id ``<kind>-<uuid>``); False if
    another append came first (the sweep looks at the game again)."""
    try:
        service.append_decided(
            game_id,
            snap,
            [new_event(e) for e in events],
            snap.state.after(events),
            f"{kind}-{uuid.uuid4().hex}",
            at=at,
        )
    except ConcurrencyConflict:
        return False
    return True


def every_tenth(seconds: float) -> float:
    """A sweep's default interval: a tenth of the time it waits out, between 1 s and a minute."""
    return min(max(seconds / 10, 1.0), 60.0)


def start_sweeping(sweep: Callable[[], int], every: float, name: str, done: str) -> threading.Event:
    """Run ``sweep`` (it returns how many it did, logged with ``done``) every ``every`` seconds
    in a daemon thread until the returned event is set; a failure is logged, and tried again."""
    stop = threading.Event()

    def run() -> None:
        outage = Outage(log, f"{name} sweep")
        while not stop.wait(every):
            try:
                count = sweep()
                outage.ok()
                if count:
                    log.info(done, count)
            except Exception as error:
                outage.failed(error, f"; trying again every {every:.0f} s")

    threading.Thread(target=run, name=f"hearts-{name}", daemon=True).start()
    return stop
