"""The long requests (audit, export, import, and every read of more than a page of a game's
log: issue 33), run where they cannot slow the others down.

A request reads at most ``Settings.log_page`` entries of a log in its worker; an events page, a
hand, a state at a seq, a live stream's start or a head's check that needs more is a job here
(``service/api/replay.py`` and ``transparency.py`` decide, by the size of the read).

Each is a job of this module: a function of the event store's arguments and plain values that
returns plain values (JSON-ready bodies, bytes), so that it runs the same in the worker
(``HEARTS_LONG_WORK=inline``, and every app built on an injected Redis client, e.g. fakeredis) or
in a child process of the worker at the lowest CPU priority (``process``, the default when the
app connects to Redis itself: ``service/offload.py`` says why). ``main()`` is that child's
entry.

The child also parses an import's body (the JSON checks every other body gets in the worker's
``_before`` hook, here with the same problems), so the worker never holds a 6 MB document.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app, has_request_context

from domain.state import GameState
from service.api import hygiene, rate_limits
from service.api.problems import Problem
from service.app.errors import LongWorkBusy
from service.app.game import StoredGame, game_cache
from service.app.game_service import Idempotency, idempotency_for
from service.app.hand_records import HandRecord
from service.app.replay import EventsPage, Replay, Stream
from service.app.state_cache import Snapshot
from service.app.transparency import Chain, read_chain
from service.offload import InlineOffload, Offload, OffloadFailed, ProcessOffload, serve_child
from service.settings import Settings, archive_url
from service.store import archive, redis_server
from service.store.event_store import RedisEventStore

EXTENSION = "hearts.long_work"
# A refused long request may come back this much later: a job is seconds, not minutes.
BUSY_RETRY_SECONDS = 5
IMPORT_PATH = "/api/v1/games/import"


@dataclass(frozen=True)
class Bootstrap:
    """What a child needs to reach the same store as its worker."""

    redis_url: str
    settings: Settings


def store_for(redis: Any, settings: Settings) -> RedisEventStore:
    """The event store as every process of the service opens it: reading archived games
    through its archive (service/store/archive.py)."""
    store = RedisEventStore(
        redis,
        prefix=settings.key_prefix,
        partitions=settings.partitions,
        min_replicas=settings.min_replicas,
        replica_timeout_ms=settings.replica_timeout_ms,
    )
    archive.attach(store, archive_url(settings))
    return store


class LongWork:
    """The long requests themselves. Plain values in, plain values out: the same calls run in the
    worker or, through :func:`work`'s stand-in, in the child."""

    _replay: Replay

    def __init__(self, store: RedisEventStore, idempotency_ttl: int) -> None:
        self._replay = Replay(store)
        self._idempotency_ttl = idempotency_ttl

    def audit(self, game_id: str) -> tuple[dict[str, Any], int]:
        report = self._replay.audit(game_id)
        return report.to_dict(), report.last_seq

    def export(self, game_id: str, text: bool) -> tuple[str, int]:
        document = self._replay.export(game_id)
        body = self._replay.export_text(document) if text else json.dumps(document)
        return body, document["version"]

    def import_(
        self, body: bytes, document: Any, key: str | None, actor: str
    ) -> tuple[dict[str, Any], bool, bool]:
        """``document``: the body as the worker parsed it, or None for this call to parse it."""
        if document is None:
            document = parse_body(body)

        def idem(game_id: str) -> Idempotency | None:
            if not key:
                return None
            return idempotency_for(key, game_id, actor, "POST", IMPORT_PATH, body)

        imported = self._replay.import_once(document, idem, self._idempotency_ttl)
        return imported.body, imported.replayed, imported.existing

    # Reads of more than a page of a log (their results are plain dataclasses, pickled back).

    def events(
        self,
        game_id: str,
        viewer: int | None,
        now: GameState,
        after: int,
        limit: int,
        version: int,
    ) -> EventsPage:
        return self._replay.events(game_id, viewer, now, after, limit, version)

    def stream(
        self,
        game_id: str,
        viewer: int | None,
        after: int,
        backlog: int,
        credential: str | None = None,
        since: int = 0,
    ) -> Stream | None:
        return self._replay.stream(game_id, viewer, after, backlog, credential, since)

    def hand(self, game_id: str, number: int, viewer: int | None) -> tuple[int, HandRecord]:
        return self._replay.hand(game_id, number, viewer)

    def state_at(self, game_id: str, at: int) -> StoredGame:
        return self._replay.state_at(game_id, at)

    def chain(self, game_id: str, head_version: int) -> Chain:
        return read_chain(self._replay.store, game_id, head_version)

    def fold(self, game_id: str) -> Snapshot[StoredGame]:
        """The game folded from its whole log (a cache miss of a long game's, see ``install``)."""
        return game_cache(self._replay.store, max_games=1).get(game_id)

    def jobs(self) -> dict[str, Callable[..., Any]]:
        return {
            "audit": self.audit,
            "export": self.export,
            "import_": self.import_,
            "events": self.events,
            "stream": self.stream,
            "hand": self.hand,
            "state_at": self.state_at,
            "chain": self.chain,
            "fold": self.fold,
        }


class Gate:
    """The long requests of one worker in flight (running or waiting for a slot), bounded in
    all and per client (issue 42): one client's 20 audits queued behind the worker's one slot
    made everyone else's long reads wait minutes. At most ``slots + queue`` are in flight and at
    most ``per_client`` of one client's; one more is refused at once with 503
    ``long-work-busy`` and Retry-After, never queued. So whatever one client asks, at most
    ``per_client`` of its jobs are ahead of another's (docs/budget.md states the bound).
    Counted in the worker: the slots are the worker's, so is their queue."""

    def __init__(self, slots: int, queue: int, per_client: int) -> None:
        self.capacity = slots + queue
        self.per_client = per_client
        self._lock = threading.Lock()
        self._by_client: dict[str, int] = {}
        self._total = 0

    def in_flight(self) -> int:
        return self._total

    @contextlib.contextmanager
    def enter(self, client: str) -> Iterator[None]:
        with self._lock:
            if self._total >= self.capacity:
                raise LongWorkBusy(
                    f"this worker has {self.capacity} long requests in flight; retry later",
                    BUSY_RETRY_SECONDS,
                )
            if self._by_client.get(client, 0) >= self.per_client:
                raise LongWorkBusy(
                    f"you have {self.per_client} long requests in flight here already; "
                    "wait for their answers",
                    BUSY_RETRY_SECONDS,
                )
            self._total += 1
            self._by_client[client] = self._by_client.get(client, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._total -= 1
                left = self._by_client[client] - 1
                if left:
                    self._by_client[client] = left
                else:
                    del self._by_client[client]


class _StandIn:
    """Looks like :class:`LongWork`: each method call is a call of the offload, through the
    gate when a client's request asks for it."""

    def __init__(self, offload: Offload, gate: Gate) -> None:
        self.offload = offload
        self.gate = gate

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return functools.partial(self._call, name)

    def _call(self, name: str, *args: Any) -> Any:
        if not has_request_context():  # the service's own (a background thread's)
            return self.offload.call(name, *args)
        with self.gate.enter(rate_limits.client()):
            return self.offload.call(name, *args)


def parse_body(body: bytes) -> dict[str, Any]:
    """The import body as the app's ``_before`` hook checks every other body."""
    document = hygiene.load_json(body)  # depth (400) before parsing, then Unicode (422)
    if not isinstance(document, dict):
        raise Problem(
            "validation-error",
            "the body must be a JSON object",
            status=422,
            errors={"_schema": ["a JSON object is required"]},
        )
    return document


def install(app: Flask, settings: Settings, store: RedisEventStore, url: str | None) -> None:
    """Where this app's long requests run: child processes when the app reached Redis by URL
    itself and the setting allows, else the worker (with one slot per
    ``long_requests_per_worker``, as the children have)."""
    offload: Offload
    if url is not None and settings.long_work == "process":
        bootstrap = Bootstrap(url, settings)
        offload = ProcessOffload(__name__, bootstrap, size=settings.long_requests_per_worker)
    else:
        offload = _Bounded(
            InlineOffload(LongWork(store, settings.idempotency_ttl).jobs()),
            settings.long_requests_per_worker,
        )
    gate = Gate(
        settings.long_requests_per_worker, settings.long_work_queue, settings.long_work_per_client
    )
    app.extensions[EXTENSION] = _StandIn(offload, gate)
    if isinstance(offload, ProcessOffload):
        cache = app.extensions["hearts"].cache
        cache.cold = _cold_fold(offload, store, settings.log_page)


def _cold_fold(
    offload: Offload, store: RedisEventStore, page: int
) -> Callable[[str], Snapshot[StoredGame] | None]:
    """A worker's cache miss of a game longer than a page is folded in the child (the game's
    state comes back pickled), so that no request reads more than a page of a log in the
    worker, nor a background thread of it (issue 33); a shorter one is folded in the worker."""

    def cold(game_id: str) -> Snapshot[StoredGame] | None:
        if store.version(game_id) <= page:
            return None
        try:
            return offload.call("fold", game_id)
        except OffloadFailed:  # the child died: fold here, as before
            return None

    return cold


def in_child() -> bool:
    """Whether this app's long requests run in a child (which then parses the import body)."""
    return isinstance(offload_of(current_app), ProcessOffload)


def offload_of(app: Flask) -> Offload:
    return app.extensions[EXTENSION].offload


def gate_of(app: Flask) -> Gate:
    return app.extensions[EXTENSION].gate


def page() -> int:
    """The most entries of a log a request reads in its worker (``Settings.log_page``)."""
    settings: Settings = current_app.extensions["hearts.settings"]
    return settings.log_page


def work() -> LongWork:
    """This app's long work: calls as on :class:`LongWork`, run where ``install`` chose (the
    stand-in hands each call to the offload; typed as what it stands for)."""
    return current_app.extensions[EXTENSION]


class _Bounded:
    """Inline jobs, one per slot at a time; the others wait their turn. Each pauses every few
    events (``service/cooperative.py``) so the worker's ordinary requests get in between."""

    def __init__(self, offload: Offload, slots: int) -> None:
        self._offload = offload
        self._slots = threading.BoundedSemaphore(slots)

    def call(self, name: str, *args: Any) -> Any:
        with self._slots:
            return self._offload.call(name, *args)

    def close(self) -> None:
        self._offload.close()


def _build(bootstrap: Bootstrap) -> dict[str, Callable[..., Any]]:
    settings = bootstrap.settings
    store = store_for(redis_server.client_for(bootstrap.redis_url), settings)
    return LongWork(store, settings.idempotency_ttl).jobs()


def main() -> None:
    """The child process's entry (``service/offload.py`` starts it)."""
    serve_child(_build)
