"""Live followers: every open event stream of a process waits here, on no Redis connection.

One reader per partition (a thread; a greenlet under gunicorn's gevent workers, which patch
``threading``) runs one ``XREAD BLOCK`` for all the games of its partition that somebody in this
process follows, on the hub's own Redis client (``follows``), and wakes the streams of each game
it reads. So a process holds at most ``partitions`` Redis connections for its streams whatever
their number (2,000 streams on one game: one connection), ordinary requests keep the main
client's pool to themselves, and a stream that waits for nothing waits on a condition variable,
where no Redis socket timeout can end it: its keep-alive comes on time. On a Redis Cluster the
games of one partition share its hash tag, so each reader's XREAD stays in one slot.

A reader stops when its partition has nothing left to follow and gives its idle connections
back to Redis; a game is dropped as soon as its last stream closes. The first event of a game
that was not followed yet may take up to ``READ_BLOCK_MS`` to arrive (the reader's current XREAD
does not name it yet); after that, events arrive as they are appended.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from types import TracebackType

from service.store.envelope import RecordedEvent
from service.store.event_store import RedisEventStore

log = logging.getLogger(__name__)

READ_BLOCK_MS = 500  # one XREAD's wait: also how soon a newly followed game joins it
RECENT_EVENTS = 64  # per followed game; a stream further behind reads the log itself
RETRY_SECONDS = 1.0  # after a failed XREAD (Redis down, a failover): streams keep alive


class _Game:
    """A followed game: the last seq the hub has read and the latest events."""

    __slots__ = ("cursor", "recent", "watchers", "changed")

    def __init__(self, cursor: int, lock: threading.Lock) -> None:
        self.cursor = cursor
        self.recent: deque[RecordedEvent] = deque(maxlen=RECENT_EVENTS)
        self.watchers = 0
        self.changed = threading.Condition(lock)


class LiveHub:
    """The live followers of one process. ``reads``: the store ordinary reads go to (a stream
    far behind reads the log there); ``follows``: the same store on the hub's own client
    (its socket timeout longer than ``block_ms``); by default ``reads``. ``page``: the most
    entries a stream far behind reads at once (it reads the next page on its next wait)."""

    def __init__(
        self,
        reads: RedisEventStore,
        follows: RedisEventStore | None = None,
        *,
        block_ms: int = READ_BLOCK_MS,
        page: int | None = None,
    ) -> None:
        self.reads = reads
        self.page = page
        self.follows = follows or reads
        self.block_ms = block_ms
        self._lock = threading.Lock()
        self._games: dict[str, _Game] = {}
        self._readers: set[int] = set()

    def watch(self, game_id: str, after: int) -> Watch:
        """Follow ``game_id`` from seq ``after`` on; close the watch (``with``) when done."""
        partition = self.reads.partition_of(game_id)
        with self._lock:
            game = self._games.get(game_id)
            if game is None:
                game = self._games[game_id] = _Game(after, self._lock)
            game.watchers += 1
            if partition not in self._readers:
                self._readers.add(partition)
                threading.Thread(
                    target=self._read,
                    args=(partition,),
                    name=f"hearts-live-p{partition}",
                    daemon=True,
                ).start()
        return Watch(self, game_id, game)

    def followed(self) -> int:
        """How many games this process follows now."""
        with self._lock:
            return len(self._games)

    def _release(self, game_id: str, game: _Game) -> None:
        with self._lock:
            game.watchers -= 1
            if game.watchers == 0 and self._games.get(game_id) is game:
                del self._games[game_id]

    def _read(self, partition: int) -> None:
        """A partition's reader: XREAD BLOCK for its followed games until none is left."""
        while True:
            with self._lock:
                positions = {
                    game_id: game.cursor
                    for game_id, game in self._games.items()
                    if self.reads.partition_of(game_id) == partition
                }
                if not positions:
                    self._readers.discard(partition)
                    break
            try:
                found = self.follows.follow_many(positions, self.block_ms)
            except Exception:  # Redis down, a failover, a damaged entry: the streams keep alive
                log.warning("live reader of partition %d failed", partition, exc_info=True)
                time.sleep(RETRY_SECONDS)
                continue
            with self._lock:
                for game_id, events in found.items():
                    game = self._games.get(game_id)
                    if game is None:
                        continue
                    for event in events:
                        # Only the next seq: a game dropped and followed again from an earlier
                        # seq meanwhile is read again from there by the next XREAD.
                        if event.seq == game.cursor + 1:
                            game.recent.append(event)
                            game.cursor = event.seq
                    game.changed.notify_all()
        self._idle()

    def _idle(self) -> None:
        """No reader left: give the hub's idle connections back to Redis."""
        with self._lock:
            if self._readers:
                return
        pool = getattr(self.follows.redis, "connection_pool", None)
        if pool is not None and self.follows is not self.reads:
            pool.disconnect(inuse_connections=False)


class Watch:
    """One stream's follow of one game (see :meth:`LiveHub.watch`)."""

    def __init__(self, hub: LiveHub, game_id: str, game: _Game) -> None:
        self.hub = hub
        self.game_id = game_id
        self._game = game
        self._closed = False
        self.cancelled = False

    def wait(self, after: int, timeout: float) -> list[RecordedEvent]:
        """The events after seq ``after``, waiting up to ``timeout`` seconds for the first one;
        empty if none came in time."""
        deadline = time.monotonic() + timeout
        game = self._game
        with game.changed:
            while game.cursor <= after:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.cancelled:
                    return []
                game.changed.wait(remaining)
            recent = [event for event in game.recent if event.seq > after]
        if recent and recent[0].seq == after + 1:
            return recent
        # Behind what the hub keeps: a page at most (the next wait returns the next at once).
        return self.hub.reads.read(self.game_id, after, self.hub.page)

    def cancel(self) -> None:
        """End the current and every later :meth:`wait` at once, empty (from any thread: e.g.
        when the stream's client is seen gone); ``cancelled`` tells the waiter why."""
        with self._game.changed:
            self.cancelled = True
            self._game.changed.notify_all()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.hub._release(self.game_id, self._game)

    def __enter__(self) -> Watch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
