"""The timekeeper: when a seat's deadline passes, its time runs out (issue 19).

Candidates come from the store's deadlines index (a sorted set per partition, by each game's
first deadline, kept by every append), never from a scan of the games. For each game due, the
timekeeper decides ``TimeOut(seat, at=now)`` with the game's clock (``domain.clock``), lets the
rules' timeout bot make the seat's move, and appends it all at the version it decided on, like
any command: a move that arrived first wins the race, and the timeout is then moot (the game is
loaded again and its deadline is found not to have passed). Two timekeepers (two workers, or
``hearts timekeeper`` processes) may pick the same game: the append's version check lets one
win. With leases (``hearts timekeeper`` on a cluster) each partition is watched by one at a
time, so the work is shared rather than repeated.

Time is an input: ``time_out_due`` takes ``now``; the background thread passes the clock's.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from domain.clock import deadlines, decide_timeout, iso, moment, next_deadline
from domain.commands import TimeOut
from domain.decider import fold, is_terminal
from domain.errors import RuleViolation
from service.app.bot_runner import bot_move, bot_seed
from service.app.game import new_event
from service.app.game_service import GameService
from service.store.errors import ConcurrencyConflict
from service.store.leases import PartitionLeases
from service.store.outage import Outage

log = logging.getLogger(__name__)

BATCH = 100  # candidates read per partition per pass


def time_out_due(
    service: GameService, now: datetime, partitions: Iterable[int] | None = None
) -> list[tuple[str, int]]:
    """Time out every seat whose deadline has passed at ``now`` (in ``partitions``, default
    all); the (game, seat) of each timeout this call appended."""
    at = iso(now.timestamp())
    done: list[tuple[str, int]] = []
    chosen = None if partitions is None else list(partitions)
    for game_id in service.store.deadlines_due(at, BATCH, chosen):
        seat = time_out(service, game_id, at)
        if seat is not None:
            done.append((game_id, seat))
    return done


def time_out(service: GameService, game_id: str, at: str) -> int | None:
    """Time out the first seat of ``game_id`` whose deadline has passed at ``at``; the seat,
    or None if none has (a move came first, or the index entry was stale: it is put right)."""
    for _ in range(service.retries + 1):
        snap = service.cache.get(game_id)
        table = snap.state
        state, clock = table.state, table.clock
        due = sorted((d, s) for s, d in deadlines(clock, state).items() if d <= moment(at))
        if is_terminal(state) or not due:
            following = None if is_terminal(state) else next_deadline(clock, state)
            service.store.set_deadline(game_id, None if following is None else iso(following))
            return None
        seat = due[0][1]
        try:
            events = decide_timeout(TimeOut(seat, at), state, clock)
            # The seat's move, made by the rules' timeout bot from what the seat may see.
            after = fold(events, state)
            bot = state.rules.timeout_bot
            _, move = bot_move(after, seat, bot_seed(game_id, snap.version, seat), bot=bot)
        except RuleViolation as refused:
            log.warning("game %s: timeout of seat %d refused: %s", game_id, seat, refused)
            return None
        decided = events + move
        try:
            _, appended = service.append_decided(
                game_id,
                snap,
                [new_event(e) for e in decided],
                table.after(decided),
                f"timeout-{uuid.uuid4().hex}",
                at=at,
            )
        except ConcurrencyConflict:
            continue  # a move (or another timekeeper) came first: look again
        if appended is not None and service.bots.must_act(appended.state.state):
            service.hand_over(game_id)  # the seat is away now, or bots play next
        return seat
    return None


class Timekeeper:
    """Times out due seats every ``interval`` seconds, in a thread (``start``) or in the
    caller's loop (``run``). With ``lease_ms`` it watches only the partitions it holds."""

    def __init__(
        self,
        service: GameService,
        *,
        interval: float = 1.0,
        lease_ms: int | None = None,
        owner: str | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.service = service
        self.interval = interval
        self.clock = clock
        self.timeouts = 0  # appended by this timekeeper
        self.leases: PartitionLeases | None = None
        if lease_ms is not None:
            store = service.store
            self.leases = PartitionLeases(
                store.redis,
                partitions=store.partitions,
                key_of=lambda p: f"{store.deadlines_key(p)}:lease",
                members_key=f"{store.prefix}:timekeepers",
                owner=owner or f"timekeeper-{uuid.uuid4().hex[:12]}",
                lease_ms=lease_ms,
            )

    def tick(self) -> list[tuple[str, int]]:
        """One pass: renew leases (if any), then time out whatever is due now."""
        partitions = None
        if self.leases is not None:
            self.leases.refresh()
            partitions = sorted(self.leases.owned)
            if not partitions:
                return []
        done = time_out_due(self.service, self.clock(), partitions)
        self.timeouts += len(done)
        return done

    def run(self, stop: threading.Event) -> None:
        outage = Outage(log, "timekeeper")
        try:
            while not stop.is_set():
                try:
                    done = self.tick()
                    outage.ok()
                    if done:
                        log.info("timed out %d seat(s)", len(done))
                except Exception as error:
                    outage.failed(error, f"; trying again every {self.interval:.1f} s")
                stop.wait(self.interval)
        finally:
            if self.leases is not None:
                self.leases.release_all()

    def start(self) -> threading.Event:
        """Run in a daemon thread; set the returned event to stop it."""
        stop = threading.Event()
        threading.Thread(
            target=self.run, args=(stop,), name="hearts-timekeeper", daemon=True
        ).start()
        return stop
