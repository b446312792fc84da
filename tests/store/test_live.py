"""The live hub (service/store/live.py) and the store's follow_many, on fakeredis, a real
redis-server and a Redis Cluster: every watch of a game is woken by one reader, a watch behind
the hub reads the log, nothing is lost or repeated, and readers stop when nothing is followed."""

from __future__ import annotations

import threading
import time

from service.store.envelope import NewEvent
from service.store.event_store import RedisEventStore
from service.store.live import RECENT_EVENTS, LiveHub


def ev(n: int) -> NewEvent:
    return NewEvent("Tick", 1, {"n": n})


def same_partition(store: RedisEventStore, game_id: str, count: int) -> list[str]:
    """``count`` game ids in ``game_id``'s partition (its first)."""
    wanted = store.partition_of(game_id)
    found = [game_id]
    n = 0
    while len(found) < count:
        n += 1
        candidate = f"{game_id}-{n}"
        if store.partition_of(candidate) == wanted:
            found.append(candidate)
    return found


def poll(condition, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def readers(hub: LiveHub) -> list[str]:
    """The hub's partition readers still running (not other tests' hubs in this process)."""
    return [t.name for t in threading.enumerate() if t.name.startswith(f"{hub.name}-p")]


def test_follow_many_reads_several_games_of_a_partition_at_once(event_store):
    a, b, c = same_partition(event_store, "fm", 3)
    event_store.append(a, 0, [ev(1), ev(2)], "a1")
    event_store.append(b, 0, [ev(1)], "b1")
    found = event_store.follow_many({a: 1, b: 0, c: 0}, block_ms=1)
    assert {game: [e.seq for e in events] for game, events in found.items()} == {
        a: [2],
        b: [1],
    }
    assert event_store.follow_many({a: 2, b: 1}, block_ms=1) == {}  # nothing came in 1 ms


def test_every_watch_of_a_game_is_woken_with_the_new_events(event_store):
    hub = LiveHub(event_store, block_ms=50)
    game, other = same_partition(event_store, "woken", 2)
    event_store.append(game, 0, [ev(1)], "c1")
    event_store.append(other, 0, [ev(1)], "o1")
    watches = [hub.watch(game, 1) for _ in range(3)] + [hub.watch(other, 1)]
    try:
        assert watches[0].wait(1, 0.1) == []  # nothing yet: waited, came back empty
        event_store.append(game, 1, [ev(2), ev(3)], "c2")
        for watch in watches[:3]:
            assert [e.seq for e in watch.wait(1, 10)] == [2, 3]
            assert [e.seq for e in watch.wait(2, 10)] == [3]
        assert watches[3].wait(1, 0.1) == []  # the other game is quiet
        event_store.append(other, 1, [ev(2)], "o2")
        assert [e.seq for e in watches[3].wait(1, 10)] == [2]
        assert hub.followed() == 2
    finally:
        for watch in watches:
            watch.close()
    assert hub.followed() == 0
    assert poll(lambda: not readers(hub))  # the reader stopped: nothing left to follow


def test_a_watch_behind_what_the_hub_keeps_reads_the_log(event_store):
    hub = LiveHub(event_store, block_ms=50)
    game = "behind"
    event_store.append(game, 0, [ev(1)], "c1")
    with hub.watch(game, 1) as ahead:
        events = [ev(n) for n in range(2, RECENT_EVENTS + 12)]
        event_store.append(game, 1, events, "c2")
        last = RECENT_EVENTS + 11
        got = []
        while not got or got[-1].seq < last:
            got += ahead.wait(got[-1].seq if got else 1, 10)
        assert [e.seq for e in got] == list(range(2, last + 1))
        # A watch opened now at seq 0: the hub is past it and kept only the last events.
        with hub.watch(game, 0) as late:
            assert [e.seq for e in late.wait(0, 1)] == list(range(1, last + 1))


def test_a_game_followed_again_from_an_earlier_seq_loses_nothing(event_store):
    hub = LiveHub(event_store, block_ms=50)
    game = "again"
    event_store.append(game, 0, [ev(1), ev(2), ev(3)], "c1")
    first = hub.watch(game, 3)
    first.close()  # dropped: the next watch starts the game afresh
    with hub.watch(game, 1) as watch:
        assert [e.seq for e in watch.wait(1, 10)] == [2, 3]
        event_store.append(game, 3, [ev(4)], "c2")
        assert [e.seq for e in watch.wait(3, 10)] == [4]
