"""The application's cache of folded game states (``StateCache``), never stale: each read
brings a cached state up to the game's current version from the store."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from service.store.envelope import GENESIS_HASH
from service.store.errors import CorruptStore
from service.store.event_store import RedisEventStore
from service.store.keys import check_count
from service.store.stream_entries import PageDecoder

S = TypeVar("S")


@dataclass(frozen=True)
class Snapshot(Generic[S]):
    """A game's folded state at ``version``; ``last_hash`` is the hash of event ``version``."""

    version: int
    last_hash: str
    state: S


class StateCache(Generic[S]):
    """In-process cache of folded game states that is never stale.

    Every :meth:`get` reads from Redis the events from the cached version on
    (including the cached version's own entry, to check its hash), so it always
    returns the state at the game's current version; the cache only saves the
    fold of the events before it. When nothing was appended since, that is one
    round trip returning one entry, and nothing is decoded. If the cached
    event's hash no longer matches (the stream was rewritten), the state is
    folded again from scratch.

    ``fold(state, events) -> state`` must not mutate ``state`` (cached states
    are shared between callers); the events it is given have consecutive seqs
    (checked here), so it need not check them again. ``initial()`` makes the state
    of a game with no events. Thread-safe; holds at most ``max_games`` games (least recently used
    are dropped).
    """

    def __init__(
        self,
        store: RedisEventStore,
        fold: Callable[[S, list[Any]], S],
        initial: Callable[[], S],
        max_games: int = 1024,
        fast: PageDecoder | None = None,
    ) -> None:
        check_count("max_games", max_games, 1)
        self.store = store
        self.fold = fold
        self.fast = fast  # the fold's own page decoder, if it has one (see RedisEventStore.read)
        self.initial = initial
        self.max_games = max_games
        self._entries: OrderedDict[str, Snapshot[S]] = OrderedDict()
        self._lock = threading.Lock()
        # Where a miss may be folded instead of here: the game's snapshot folded elsewhere (a
        # long game's, in a child process: issue 33), or None to fold it here. It may be behind:
        # it is brought up to date as a cached one is.
        self.cold: Callable[[str], Snapshot[S] | None] | None = None

    def get(self, game_id: str) -> Snapshot[S]:
        """The game's state at its current version (version 0 and ``initial()`` if none)."""
        with self._lock:
            cached = self._entries.get(game_id)
        snapshot = self._refresh(game_id, cached) if cached is not None else None
        if snapshot is None and cached is None and self.cold is not None:
            folded = self.cold(game_id)
            snapshot = self._refresh(game_id, folded) if folded is not None else None
        if snapshot is None:
            events = self.store.read(game_id, fast=self.fast)
            snapshot = self._fold_from(game_id, 0, GENESIS_HASH, self.initial(), events)
        if snapshot.version > 0:
            self.remember(game_id, snapshot)
        return snapshot

    def peek(self, game_id: str) -> Snapshot[S] | None:
        """The cached snapshot as it is, without asking Redis (None if not cached).

        It may be behind the game: only for a caller that checks the version another way,
        e.g. by appending with it as the expected version.
        """
        with self._lock:
            return self._entries.get(game_id)

    def _refresh(self, game_id: str, cached: Snapshot[S]) -> Snapshot[S] | None:
        head, events = self.store.read_since(game_id, cached.version, fast=self.fast)
        if head != cached.last_hash:
            return None
        if not events:
            return cached
        return self._fold_from(game_id, cached.version, cached.last_hash, cached.state, events)

    def _fold_from(
        self, game_id: str, version: int, last_hash: str, state: S, events: list[Any]
    ) -> Snapshot[S]:
        if not events:
            return Snapshot(version, last_hash, state)
        if [event.seq for event in events] != list(range(version + 1, version + 1 + len(events))):
            for expected, event in enumerate(events, start=version + 1):  # the first one amiss
                if event.seq != expected:
                    raise CorruptStore(
                        f"game {game_id!r}: seq {event.seq} where {expected} was due"
                    )
        return Snapshot(events[-1].seq, events[-1].hash, self.fold(state, events))

    def remember(self, game_id: str, snapshot: Snapshot[S]) -> None:
        """Cache a snapshot (e.g. the state after a successful append).

        Kept only if not older than the cached one. Safe even if wrong about the
        current version: :meth:`get` always catches up from Redis.
        """
        with self._lock:
            cached = self._entries.get(game_id)
            if cached is None or cached.version <= snapshot.version:
                self._entries[game_id] = snapshot
            self._entries.move_to_end(game_id)
            while len(self._entries) > self.max_games:
                self._entries.popitem(last=False)

    def forget(self, game_id: str) -> None:
        with self._lock:
            self._entries.pop(game_id, None)
