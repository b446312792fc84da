"""Waiting for an app's background work before a test reads what it did.

A request answers before the work it started is over: bots move in the background runner, the
projector folds the partition logs, (once there is one) the archiver moves finished games. A
test that reads right after, or edits the store by hand, races that work and fails on a busy
machine (issue 34: tests/transparency/test_api.py cut a game's log while the runner still
appended to it). ``settle`` is the one way a test waits for it: never a bare sleep."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from flask import Flask

from service.app.projector import projection_lag


def settle(app: Flask, games: Iterable[str] = (), *, stop: bool = False, timeout: float = 60.0):
    """Return once ``app``'s background work is done, else fail after ``timeout`` seconds:

    - bots idle: none of ``games`` queued for the background runner nor with a bot to act (a
      runner removes a game from its queue, then hands it over again if a bot must act: the
      queue alone can be empty for a moment while a bot is due); without ``games``, no game
      queued at all;
    - the projector caught up, if the app runs one in its process: every partition log entry
      applied.

    ``stop``: then stop the app's background threads (bots, timekeeper, sweeps, projector), so
    that nothing writes after: for a test that edits the store by hand, as an insider would
    while the game is at rest."""
    service = app.extensions["hearts"]
    games = list(games)
    deadline = time.monotonic() + timeout
    while True:
        waiting = _still_working(app, service, games)
        if not waiting:
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"background work still going after {timeout} s: {waiting}")
        time.sleep(0.02)
    if stop:
        app.extensions["hearts.stop"]()
        projector_stop = app.extensions.get("hearts.projector_stop")
        if projector_stop is not None:
            projector_stop.set()


def _still_working(app: Flask, service: Any, games: list[str]) -> list[str]:
    """What is not done yet (empty: all of it)."""
    waiting = []
    queue = service.background.queue
    if not games and queue.queued():
        waiting.append(f"{queue.queued()} game(s) queued for bots")
    waiting += [f"{g} queued for bots" for g in games if queue.redis.zscore(queue.key, g)]
    waiting += [
        f"a bot to act in {g}"
        for g in games
        if service.bots.must_act(service.cache.get(g).state.state)
    ]
    projector = app.extensions.get("hearts.projector")
    if projector is not None:
        lag = sum(projection_lag(projector.projections).values())
        if lag:
            waiting.append(f"{lag} log entries for the projector")
    return waiting
