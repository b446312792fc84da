"""The analysis of a finished hand as a use case: read the game's log, run ``bots.analysis``.

Only a hand that is scored is analysed (HandInProgress otherwise): while it is in play, an
analysis would tell a seat what its cards are worth against the others' hidden ones, a cheating
aid. Once it is scored every card of it is public anyway (``domain.secrecy``: the hands are
hidden until ``HAND_SCORED``), and the analysis of each decision reads only what the deciding
seat saw then. The events after the hand's score are never read.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from bots.analysis import (
    ANALYSIS_VERSION,
    DEFAULT_BUDGET,
    AnalysisBudget,
    Clock,
    HandAnalysis,
    HandNotFinished,
    Progress,
    Tick,
    analyse_hand,
)
from domain.events import HandDealt, HandScored
from domain.state import GameState, Phase
from service.app import game_log
from service.app.errors import (
    AnalysesBusy,
    AnalysisNotStarted,
    GameNotFound,
    HandInProgress,
    HandNotFound,
)
from service.app.hand_records import logged
from service.settings import Settings
from service.store.analyses import AnalysisStore
from service.store.analysis_queue import MAX_QUEUED, AnalysisQueue
from service.store.event_store import RedisEventStore
from service.store.upcasting import UpcasterRegistry


def service_budget(settings: Settings) -> AnalysisBudget:
    """The budget of the service's analyses (``HEARTS_ANALYSIS_SAMPLES``): the API's jobs and
    every ``hearts analyst`` use it, since results are kept under it and must agree."""
    return AnalysisBudget(samples=settings.analysis_samples)


class HandAnalyst:
    """Analyses the finished hands of the games in ``store``."""

    def __init__(self, store: RedisEventStore, upcasters: UpcasterRegistry | None = None) -> None:
        self.store = store
        self.upcasters = upcasters
        self.kept = AnalysisStore(store)

    def document(
        self,
        game_id: str,
        number: int,
        budget: AnalysisBudget = DEFAULT_BUDGET,
        progress: Progress | None = None,
        tick: Tick | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """(the analysis of hand ``number`` as a JSON document, whether it was kept from an
        earlier request). Under the default seed and a budget in deals the analysis is a
        function of the hand, the analysis version and the budget, so it is kept under those
        (``service.store.analyses``) and asking twice costs one GET. The game is read first
        all the same: the errors of :meth:`analyse`, and no answer about a game that is not."""
        if budget.ms is not None:
            raise ValueError("only analyses under a budget in deals are kept")
        self.finished_hand_events(game_id, number)
        kept = self.kept.get(game_id, number, ANALYSIS_VERSION, budget.samples)
        if kept is not None:
            return kept, True
        document = self.analyse(
            game_id, number, budget=budget, progress=progress, tick=tick
        ).to_dict()
        self.kept.put(game_id, number, ANALYSIS_VERSION, budget.samples, document)
        return document, False

    def finished_hand_events(self, game_id: str, number: int) -> list[Any]:
        entries = game_log.read(self.store, game_id, upcasters=self.upcasters)
        if not entries:
            raise GameNotFound(game_id)
        events = [item.event for item in logged(entries)]
        if not any(isinstance(ev, HandDealt) and ev.hand_number == number for ev in events):
            raise HandNotFound(game_id, number)
        if not any(isinstance(ev, HandScored) and ev.hand_number == number for ev in events):
            raise HandInProgress(game_id, number)
        return events

    def analyse(
        self,
        game_id: str,
        number: int,
        seed: str | None = None,
        budget: AnalysisBudget = DEFAULT_BUDGET,
        clock: Clock | None = None,
        progress: Progress | None = None,
        tick: Tick | None = None,
    ) -> HandAnalysis:
        """Hand ``number`` of ``game_id``, analysed. ``seed``: by default the game and hand,
        so that asking again gives the same figures. GameNotFound, HandNotFound (never dealt),
        HandInProgress (not scored yet)."""
        events = self.finished_hand_events(game_id, number)
        try:
            return analyse_hand(
                events,
                number,
                seed if seed is not None else f"{game_id}/{number}",
                budget,
                clock,
                progress,
                tick,
            )
        except HandNotFinished:
            raise HandInProgress(game_id, number) from None


# -- as a job ------------------------------------------------------------------------------------

JOB_TTL = 300  # seconds a job's status lives without news: a job whose worker died is forgotten
FAILED_TTL = 60  # a failed job's status, before it may be asked for again
QUEUE = 4  # analyses waiting in one worker process at most, beyond the one running
YIELD_EVERY = 0.02  # seconds of analysis between two yields to the worker's other requests

log = logging.getLogger(__name__)


class InProcessRunner:
    """One daemon thread of this process running the submitted jobs in turn.

    Under gevent's monkey patching the thread is a greenlet: a job must yield now and then
    (:class:`AnalysisJobs` does, every ``YIELD_EVERY`` seconds) so that the worker's requests
    go on being served while it runs.
    """

    def __init__(self, size: int = QUEUE) -> None:
        self.size = size
        self.jobs: queue.Queue[Callable[[], None]] = queue.Queue(maxsize=size)
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def submit(self, job: Callable[[], None]) -> bool:
        """Queue ``job``; False if the queue is full."""
        try:
            self.jobs.put_nowait(job)
        except queue.Full:
            return False
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="analyses", daemon=True)
                self.thread.start()
        return True

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                job()
            except Exception:  # a job records its own failure; this thread must go on
                log.exception("an analysis job failed")


class AnalysisJobs:
    """The analysis of a finished hand as a job: started by one request, read by the next.

    The result is kept by :class:`HandAnalyst` (asking twice costs nothing); while it is being
    computed, the job's status (queued, running with its progress, failed) is in Redis too, so
    that any worker process answers for it. ``runner.submit`` runs the work (in-process by
    default). ``pause`` is called between sampled deals once ``YIELD_EVERY`` seconds of work
    have passed: a 1 ms sleep, which under gevent hands the worker's other greenlets their turn
    (a ``sleep(0)`` does not: the hub's clock does not move, so its timers never come due).
    """

    def __init__(
        self,
        store: RedisEventStore,
        runner: InProcessRunner | None = None,
        budget: AnalysisBudget = DEFAULT_BUDGET,
        pause: Callable[[], None] = lambda: time.sleep(0.001),
        queue: AnalysisQueue | None = None,
        game: Callable[[str], GameState] | None = None,
    ) -> None:
        self.analyst = HandAnalyst(store)
        # The game as it stands (the service's cached fold): a request checks the hand on it
        # instead of reading the whole log (issue 33); without it, the log is read.
        self.game = game
        self.kept = self.analyst.kept
        self.runner = runner if runner is not None else InProcessRunner()
        # With a queue, jobs wait there for ``hearts analyst`` processes (:class:`Analyst`).
        self.queue = queue
        self.budget = budget
        self.pause = pause

    def _job_key(self, game_id: str, number: int) -> str:
        return self.kept.job_key(game_id, number, ANALYSIS_VERSION, self.budget.samples)

    def start(self, game_id: str, number: int) -> dict[str, Any]:
        """Start the analysis unless it is kept or under way; its status. GameNotFound,
        HandNotFound, HandInProgress, AnalysesBusy."""
        self._check(game_id, number)
        status = self._status(game_id, number)
        if status is not None:
            return status
        key = self._job_key(game_id, number)
        queued = {"state": "queued", "done": 0, "total": 0}
        if not self.kept.claim_job(key, queued, JOB_TTL):
            return self._status(game_id, number) or queued  # another request just started it
        if self.queue is not None:
            submitted = self.queue.push(game_id, number)
        else:
            submitted = self.runner.submit(lambda: self._work(game_id, number, key))
        if not submitted:
            self.kept.drop_job(key)
            raise AnalysesBusy(MAX_QUEUED if self.queue is not None else self.runner.size)
        return queued

    def status(self, game_id: str, number: int) -> dict[str, Any]:
        """The analysis (state done) or its job's status. GameNotFound, HandNotFound,
        HandInProgress, AnalysisNotStarted."""
        self._check(game_id, number)
        status = self._status(game_id, number)
        if status is None:
            raise AnalysisNotStarted(game_id, number)
        return status

    def _check(self, game_id: str, number: int) -> None:
        """GameNotFound, HandNotFound or HandInProgress unless hand ``number`` was scored."""
        if self.game is None:
            self.analyst.finished_hand_events(game_id, number)
            return
        state = self.game(game_id)
        if state.phase is Phase.NEW:
            raise GameNotFound(game_id)
        if not 1 <= number <= state.hand_number:
            raise HandNotFound(game_id, number)
        # A hand is scored once a later one is dealt, or once the game waits for the next deal
        # (HandScored) or is over.
        if number == state.hand_number and state.phase not in (Phase.DEALING, Phase.FINISHED):
            raise HandInProgress(game_id, number)

    def peek(self, game_id: str, number: int) -> dict[str, Any] | None:
        """The status as kept, without checking the hand again (a stream that checked it once
        polls this): None once a job whose worker died is forgotten."""
        return self._status(game_id, number)

    def _status(self, game_id: str, number: int) -> dict[str, Any] | None:
        # The job's status first, then the result: a worker stores the result before it drops
        # the job, so a job gone between the two reads has its result found by the second. In
        # the other order a job finishing between them read as neither (None: "not started").
        job = self.kept.get_job(self._job_key(game_id, number))
        kept = self.kept.get(game_id, number, ANALYSIS_VERSION, self.budget.samples)
        if kept is not None:
            total = len(kept["decisions"])
            return {"state": "done", "done": total, "total": total, "result": kept}
        return job

    def work(self, game_id: str, number: int, renew: Callable[[], None] = lambda: None) -> None:
        """Run the job of hand ``number`` here (an analyst's: ``renew`` at each decision)."""
        self._work(game_id, number, self._job_key(game_id, number), renew)

    def _work(
        self, game_id: str, number: int, key: str, renew: Callable[[], None] = lambda: None
    ) -> None:
        def progress(done: int, total: int) -> None:
            self.kept.set_job(key, {"state": "running", "done": done, "total": total}, JOB_TTL)
            renew()

        last = [time.monotonic()]

        def tick() -> None:
            now = time.monotonic()
            if now - last[0] >= YIELD_EVERY:
                self.pause()
                last[0] = time.monotonic()

        try:
            self.analyst.document(game_id, number, self.budget, progress=progress, tick=tick)
        except Exception as error:  # recorded for whoever asks, then logged by the runner
            failed = {"state": "failed", "done": 0, "total": 0, "detail": str(error)}
            self.kept.set_job(key, failed, FAILED_TTL)
            raise
        self.kept.drop_job(key)


class Analyst:
    """``hearts analyst``: runs the analyses queued by the API's workers
    (``HEARTS_ANALYSIS_WORKER=external``), one at a time, beside any number of other analysts:
    each job is delivered to one of them, and one that dies mid-job has it taken over
    (``service/store/analysis_queue.py``)."""

    def __init__(self, jobs: AnalysisJobs, queue: AnalysisQueue, consumer: str) -> None:
        self.jobs = jobs
        self.queue = queue
        self.consumer = consumer

    def run_once(self) -> bool:
        """Run the next job, if there is one; whether there was."""
        job = self.queue.take(self.consumer)
        if job is None:
            return False
        try:
            self.jobs.work(job.game_id, job.hand, lambda: self.queue.renew(job, self.consumer))
        except Exception:  # recorded as failed for whoever asks; the queue goes on
            log.exception("the analysis of %s hand %d failed", job.game_id, job.hand)
        self.queue.done(job)
        return True

    def run(self, stop: threading.Event, idle_seconds: float = 0.5) -> None:
        while not stop.is_set():
            if not self.run_once():
                stop.wait(idle_seconds)
