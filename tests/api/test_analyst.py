"""``hearts analyst`` (issue 23): analyses queued by the API run in analyst processes, each job
once however many analysts share the queue, and a job whose analyst died is taken over.

Against fakeredis, a real redis-server and the local Redis Cluster (one queue per partition,
each in its partition's slot)."""

from __future__ import annotations

import threading
import time

import fakeredis

from bots.analysis import AnalysisBudget
from service.api.factory import create_app
from service.app.analysis import AnalysisJobs, Analyst
from service.settings import Settings
from service.store.analysis_queue import AnalysisQueue
from service.store.event_store import RedisEventStore
from tests.replay.helpers import play_game

SMALL = AnalysisBudget(samples=2)
GAMES = [f"analyst{i}" for i in range(6)]


class CountingJobs(AnalysisJobs):
    """AnalysisJobs that count the analyses they ran (all analysts of a test share the list)."""

    def __init__(self, store: RedisEventStore, ran: list, lock: threading.Lock) -> None:
        super().__init__(store, budget=SMALL)
        self.ran, self.lock = ran, lock

    def work(self, game_id, number, renew=lambda: None) -> None:
        with self.lock:
            self.ran.append((game_id, number))
        super().work(game_id, number, renew)


def finished_hands(store: RedisEventStore) -> None:
    for game_id in GAMES:
        play_game(store, game_id, seed=game_id, stop_after=100)  # hand 1 scored


def test_two_analysts_run_each_queued_job_once(event_store) -> None:
    finished_hands(event_store)
    api = AnalysisJobs(event_store, budget=SMALL, queue=AnalysisQueue(event_store))
    for game_id in GAMES:
        assert api.start(game_id, 1)["state"] == "queued"
        assert api.start(game_id, 1)["state"] == "queued"  # asked twice: still one job
    ran: list = []
    lock = threading.Lock()
    analysts = [
        Analyst(CountingJobs(event_store, ran, lock), AnalysisQueue(event_store), name)
        for name in ("a1", "a2")
    ]
    stop = threading.Event()
    threads = [threading.Thread(target=a.run, args=(stop, 0.01)) for a in analysts]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 120
        while not all(api.peek(g, 1)["state"] == "done" for g in GAMES):
            assert time.monotonic() < deadline, [api.peek(g, 1) for g in GAMES]
            time.sleep(0.02)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert sorted(ran) == sorted((g, 1) for g in GAMES)  # each once
    queue = AnalysisQueue(event_store)
    assert queue.take("a3") is None  # nothing left, nothing pending


def test_a_job_whose_analyst_died_is_taken_over(event_store) -> None:
    finished_hands(event_store)
    api = AnalysisJobs(event_store, budget=SMALL, queue=AnalysisQueue(event_store))
    api.start(GAMES[0], 1)
    # The first analyst takes the job and dies before any progress (no renewal, no ack).
    dead = AnalysisQueue(event_store, claim_idle_ms=50)
    taken = dead.take("dead")
    assert taken is not None and (taken.game_id, taken.hand) == (GAMES[0], 1)
    ran: list = []
    survivor = Analyst(
        CountingJobs(event_store, ran, threading.Lock()),
        AnalysisQueue(event_store, claim_idle_ms=50),
        "alive",
    )
    deadline = time.monotonic() + 30
    while not survivor.run_once():  # until the job has been idle past claim_idle_ms
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert ran == [(GAMES[0], 1)]
    assert api.peek(GAMES[0], 1)["state"] == "done"


def test_an_external_worker_api_queues_and_runs_nothing(key_prefix) -> None:
    settings = Settings(key_prefix=key_prefix, sweep_on_start=False, analysis_worker="external")
    app = create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    try:
        store = app.extensions["hearts"].store
        play_game(store, GAMES[0], seed="x", stop_after=100)
        client = app.test_client()
        url = f"/api/v1/games/{GAMES[0]}/hands/1/analysis"
        assert client.get(url).status_code == 404  # not started (and the jobs are set up)
        jobs = app.extensions["hearts.analyses"]
        jobs.budget = AnalysisBudget(samples=4)  # the service's budget here: a quick analysis
        assert client.post(url, json={}).json["state"] == "queued"
        assert jobs.runner.thread is None  # no in-process runner was ever started
        assert client.get(url).json["state"] == "queued"
        assert isinstance(jobs.queue, AnalysisQueue)
        # An analyst with the service's budget runs it; the API then answers with it.
        Analyst(AnalysisJobs(store, budget=jobs.budget), AnalysisQueue(store), "a").run_once()
        assert client.get(url).json["state"] == "done"
    finally:
        app.extensions["hearts.bots_stop"]()
