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

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from service.store.envelope import RecordedEvent
from service.store.event_store import RedisEventStore
from service.store.outage import Outage

# Each hub's reader threads carry its number (``hub.name``): several hubs share a process in
# tests, and a thread dump should tell whose reader is whose.
_hub_numbers = itertools.count(1)

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
        self.name = f"hearts-live-{next(_hub_numbers)}"  # its readers: <name>-p<partition>
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
                    name=f"{self.name}-p{partition}",
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
        outage = Outage(log, f"live reader of partition {partition}")  # one line an outage
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
            except Exception as error:  # Redis down, a failover, a damaged entry: streams live on
                outage.failed(error, f"; retried every {RETRY_SECONDS} s")
                time.sleep(RETRY_SECONDS)
                continue
            outage.ok()
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


# -- players' own streams -------------------------------------------------------------------------


class _Player:
    """A followed player: how many wake-ups came (a stream reads its notices when it changes)."""

    __slots__ = ("rings", "watchers", "changed")

    def __init__(self, lock: threading.Lock) -> None:
        self.rings = 0
        self.watchers = 0
        self.changed = threading.Condition(lock)


class PlayerHub:
    """The open player streams of one process (``GET /players/me/events``), woken by Redis.

    Every append of notices publishes on the player's wake channel
    (service/store/player_events.py); one reader per process (a thread, a greenlet under
    gevent) holds one pub/sub connection, subscribed to the channels of the players someone
    here follows, and wakes their streams, which then read their notices (one XRANGE). A stream
    that waits for nothing does no Redis work. Plain pub/sub reaches every node of a Redis
    Cluster, so one connection serves every slot. A message lost (the connection dropped, the
    reader restarting) is made good: the reader wakes every followed player once it is
    subscribed again, and a newly followed player once its subscription is confirmed (so a
    notice between a stream's first read and its subscription is read then).
    ``channel``: a player's wake channel. ``block_ms``: the reader's longest wait, also how
    soon a newly followed player is subscribed."""

    def __init__(
        self, redis: Any, channel: Callable[[str], str], *, block_ms: int = READ_BLOCK_MS
    ) -> None:
        self.redis = redis
        self.channel = channel
        self.block_ms = block_ms
        self.name = f"hearts-live-players-{next(_hub_numbers)}"  # its reader thread's name
        self._lock = threading.Lock()
        self._players: dict[str, _Player] = {}
        self._joined: set[str] = set()
        self._left: set[str] = set()
        self._reading = False

    def watch(self, player_id: str) -> PlayerWatch:
        """Follow ``player_id``'s wake-ups; close the watch (``with``) when done."""
        with self._lock:
            player = self._players.get(player_id)
            if player is None:
                player = self._players[player_id] = _Player(self._lock)
                self._joined.add(player_id)
            player.watchers += 1
            if not self._reading:
                self._reading = True
                threading.Thread(target=self._read, name=self.name, daemon=True).start()
        return PlayerWatch(self, player_id, player)

    def followed(self) -> int:
        """How many players this process follows now."""
        with self._lock:
            return len(self._players)

    def _release(self, player_id: str, player: _Player) -> None:
        with self._lock:
            player.watchers -= 1
            if player.watchers == 0 and self._players.get(player_id) is player:
                del self._players[player_id]
                self._left.add(player_id)

    def _ring(self, player_ids: Iterable[str]) -> None:
        with self._lock:
            for player_id in player_ids:
                player = self._players.get(player_id)
                if player is not None:
                    player.rings += 1
                    player.changed.notify_all()

    def _read(self) -> None:
        """The reader: (un)subscribe what changed, then wait for wake-ups, until no one is left."""
        pubsub: Any = None
        subscribed: dict[str, str] = {}  # channel -> player id
        outage = Outage(log, "live reader of players' streams")  # one line an outage
        try:
            while True:
                with self._lock:
                    if not self._players:
                        self._reading = False
                        self._joined.clear()
                        self._left.clear()
                        return
                    joined = {p for p in self._joined if p in self._players}
                    left = {p for p in self._left if p not in self._players}
                    self._joined.clear()
                    self._left.clear()
                try:
                    if pubsub is None:
                        pubsub = self.redis.pubsub()
                        subscribed = {}
                        joined = set(self.followed_ids())
                    self._subscribe(pubsub, subscribed, joined, left)
                    self._wait(pubsub, subscribed)
                    outage.ok()
                except Exception as error:  # Redis down, a failover: streams live on, re-read
                    outage.failed(error, f"; retried every {RETRY_SECONDS} s")
                    _close(pubsub)
                    pubsub = None
                    time.sleep(RETRY_SECONDS)
                    self._ring(self.followed_ids())
        finally:
            _close(pubsub)

    def followed_ids(self) -> list[str]:
        with self._lock:
            return list(self._players)

    def _subscribe(
        self, pubsub: Any, subscribed: dict[str, str], joined: set[str], left: set[str]
    ) -> None:
        gone = [self.channel(p) for p in left if self.channel(p) in subscribed]
        if gone:
            pubsub.unsubscribe(*gone)
            for channel in gone:
                del subscribed[channel]
        new = {self.channel(p): p for p in joined if self.channel(p) not in subscribed}
        if new:
            pubsub.subscribe(*new)
            subscribed.update(new)

    def _wait(self, pubsub: Any, subscribed: dict[str, str]) -> None:
        """Up to ``block_ms`` for a message; then every message already there (bounded)."""
        message = pubsub.get_message(timeout=self.block_ms / 1000)
        woken: set[str] = set()
        for _ in range(1000):
            if message is None:
                break
            # A message wakes its player; a confirmed subscription too (see the class).
            if message.get("type") in ("message", "subscribe"):
                player_id = subscribed.get(_text(message.get("channel")))
                if player_id is not None:
                    woken.add(player_id)
            message = pubsub.get_message(timeout=0)
        if woken:
            self._ring(woken)


class PlayerWatch:
    """One stream's follow of one player (see :meth:`PlayerHub.watch`)."""

    def __init__(self, hub: PlayerHub, player_id: str, player: _Player) -> None:
        self.hub = hub
        self.player_id = player_id
        self._player = player
        self._closed = False
        self.cancelled = False

    def rings(self) -> int:
        """The wake-ups so far: what :meth:`wait` compares with."""
        with self._player.changed:
            return self._player.rings

    def wait(self, seen: int, timeout: float) -> int:
        """Wait up to ``timeout`` seconds for a wake-up after ``seen`` (from :meth:`rings`);
        the wake-ups so far (``seen`` itself if none came in time or the watch was cancelled)."""
        deadline = time.monotonic() + timeout
        player = self._player
        with player.changed:
            while player.rings == seen:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.cancelled:
                    return seen
                player.changed.wait(remaining)
            return player.rings

    def cancel(self) -> None:
        """End the current and every later :meth:`wait` at once (from any thread)."""
        with self._player.changed:
            self.cancelled = True
            self._player.changed.notify_all()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.hub._release(self.player_id, self._player)

    def __enter__(self) -> PlayerWatch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _close(pubsub: Any) -> None:
    if pubsub is None:
        return
    try:
        pubsub.close()  # gives its connection back (unsubscribed) to the pool
    except Exception:
        log.debug("closing the players' pub/sub failed", exc_info=True)
