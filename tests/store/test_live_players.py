"""The players' hub (service/store/live.py ``PlayerHub``), on fakeredis, a real redis-server and a
Redis Cluster: a notice wakes every watch of its player and no other, a watch is woken once its
subscription is confirmed (a notice before it is not lost), and the reader stops when nothing
is followed."""

from __future__ import annotations

import threading
import time

from service.store.live import PlayerHub
from service.store.player_events import PlayerEvents


def poll(condition, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def reader_running(hub: PlayerHub) -> bool:
    """Whether the hub's reader runs (not another test's hub in this process)."""
    return any(t.name == hub.name for t in threading.enumerate())


def subscribed(watch, seen: int = 0) -> int:
    """The wake-ups once the watch's subscription is confirmed (it rings once then)."""
    rung = watch.wait(seen, 10)
    assert rung > seen, "the subscription was never confirmed"
    return rung


def test_a_notice_wakes_every_watch_of_its_player_and_no_other(redis_client, key_prefix):
    events = PlayerEvents(redis_client, key_prefix)
    hub = PlayerHub(redis_client, events.wake_channel, block_ms=50)
    watches = [hub.watch("pa") for _ in range(2)]
    other = hub.watch("pb")
    try:
        rungs = [subscribed(watch) for watch in watches]
        quiet = subscribed(other)
        assert hub.followed() == 2
        events.add([("pa", "yourTurn", {"game_id": "g", "seat": 0, "version": 3})])
        for watch, rung in zip(watches, rungs, strict=True):
            assert watch.wait(rung, 10) > rung
        assert other.wait(quiet, 0.2) == quiet  # not its notice: still asleep
        assert [kind for _, kind, _ in events.after("pa", "0-0")] == ["yourTurn"]
        events.wake("pb")  # e.g. its key changed
        assert other.wait(quiet, 10) > quiet
    finally:
        for watch in [*watches, other]:
            watch.close()
    assert hub.followed() == 0
    assert poll(lambda: not reader_running(hub))  # nothing left to follow: the reader stopped


def test_a_cancelled_watch_stops_waiting_at_once(redis_client, key_prefix):
    events = PlayerEvents(redis_client, key_prefix)
    hub = PlayerHub(redis_client, events.wake_channel, block_ms=50)
    with hub.watch("pc") as watch:
        rung = subscribed(watch)
        threading.Timer(0.05, watch.cancel).start()
        started = time.monotonic()
        assert watch.wait(rung, 30) == rung
        assert watch.cancelled and time.monotonic() - started < 10
    assert hub.followed() == 0
