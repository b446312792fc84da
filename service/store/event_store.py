"""The event store: one Redis stream per game, one log stream per partition.

Generic over event payloads: it stores :class:`~service.store.envelope.NewEvent` triples
in hash-chained envelopes (see :mod:`service.store.envelope` for the envelope and the
hash scheme) and knows nothing about Hearts.

:class:`RedisEventStore` is the store's one interface; it is split by concern:

- service/store/keys.py: partitions and the key layout (every key, what it holds);
- service/store/append.py: the append and its Lua script, idempotency receipts, replicas;
- service/store/stream_entries.py: stream entries made records (envelopes decoded by page,
  log entries, XREAD replies, the game list's cursors);
- service/store/sweep_indexes.py: the waiting, deadlines and silent indexes' reads;
- this module: the reads and follows, and their fallback on the archive.

A game's version is the seq of its stream's last entry (read from the last id,
never from XLEN). Streams are never trimmed and entries are never deleted, except by the
archiver (service/store/archive.py): an ended game's stream and log entries leave Redis once its
archived object is written and checked, and every read here then reads the archive instead
(``archive``: a game whose stream is gone is read from there, as stored).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from service.cooperative import pause
from service.store.append import Appender, AppendResult, IdempotencyRecord
from service.store.envelope import (
    ChainProblem,
    NewEvent,
    RecordedEvent,
    decode_envelope,
    verify_chain,
)
from service.store.errors import CorruptStore
from service.store.keys import KeyLayout, check_count, check_game_id, utc_now_iso
from service.store.stream_entries import (
    READ_PAGE,
    GamePage,
    LogEntry,
    PageDecoder,
    decode_cursor,
    decode_page,
    decode_stored,
    encode_cursor,
    field,
    log_entries,
    seq_of,
    text,
    xread_entries,
    xread_streams,
)
from service.store.sweep_indexes import SweepIndexes

__all__ = ["RedisEventStore"]

_STREAM_ID = re.compile(r"^\d+-\d+$")


class RedisEventStore:
    """Event store on Redis streams; see service/store/keys.py for the layout.

    ``redis`` may be a ``redis.Redis`` (or ``fakeredis.FakeRedis``, which needs
    ``lupa`` for scripts) with or without ``decode_responses``. ``now`` returns
    the ISO-8601 UTC time used when an append is given no time. Every read returns events
    as stored (:class:`RecordedEvent`, never upcast): ``service.app.game_log`` decodes them.
    """

    def __init__(
        self,
        redis: Any,
        prefix: str = "hearts",
        partitions: int = 16,
        *,
        now: Callable[[], str] = utc_now_iso,
        min_replicas: int = 0,
        replica_timeout_ms: int = 1000,
    ) -> None:
        self.keys = KeyLayout(prefix, partitions)
        self.redis = redis
        self.prefix = prefix
        self.partitions = partitions
        self._now = now
        self._appender = Appender(redis, self.keys, now, min_replicas, replica_timeout_ms)
        self._indexes = SweepIndexes(redis, self.keys)
        self.min_replicas = min_replicas
        self.replica_timeout_ms = replica_timeout_ms
        # The archive of ended games (service/store/archive.py's GameArchive, set by its
        # ``attach``): every read below falls back on it when a game's stream is gone.
        self.archive: Any = None

    def now(self) -> str:
        """The time an append made now records (ISO-8601 UTC): the store's clock, injected in
        tests."""
        return self._now()

    # Keys (service/store/keys.py) -----------------------------------------

    def partition_of(self, game_id: str) -> int:
        return self.keys.partition_of(game_id)

    def game_key(self, game_id: str) -> str:
        return self.keys.game_key(game_id)

    def log_key(self, partition: int) -> str:
        return self.keys.log_key(partition)

    def games_key(self, partition: int) -> str:
        return self.keys.games_key(partition)

    def waiting_key(self, partition: int) -> str:
        return self.keys.waiting_key(partition)

    def deadlines_key(self, partition: int) -> str:
        return self.keys.deadlines_key(partition)

    def silent_key(self, partition: int) -> str:
        return self.keys.silent_key(partition)

    def archived_key(self, partition: int) -> str:
        """The partition's index of archived games (game id -> JSON record; kept by
        service/store/archive.py): an append to a game there is refused."""
        return self.keys.archived_key(partition)

    def idem_key(self, game_id: str, scope: str) -> str:
        return self.keys.idem_key(game_id, scope)

    def partition_log_keys(self) -> list[str]:
        return self.keys.partition_log_keys()

    # The sweeps' indexes (service/store/sweep_indexes.py) ------------------

    def waiting_since_before(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        """Ids of games still waiting for players that were created before ``time`` (ISO-8601
        UTC), oldest first, at most ``limit`` per partition: a read of the waiting index only.
        ``partitions``: only these (a sweeper holding leases on some); default all."""
        return self._indexes.waiting_since_before(time, limit, partitions)

    def forget_waiting(self, game_id: str) -> None:
        """Take a game out of the waiting index (one found there that no longer waits)."""
        self._indexes.forget_waiting(game_id)

    def wait_earlier(self, game_id: str, seconds: float) -> None:
        """Count a waiting game's wait as begun ``seconds`` earlier (the expiry sweep takes it
        that much sooner); a game not in the waiting index stays out of it."""
        self._indexes.wait_earlier(game_id, seconds)

    def deadlines_due(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        """Ids of games whose first deadline is at or before ``time`` (ISO-8601 UTC), earliest
        first, at most ``limit`` per partition: a read of the deadlines index only.
        ``partitions``: only these (a timekeeper holding leases on some); default all."""
        return self._indexes.deadlines_due(time, limit, partitions)

    def set_deadline(self, game_id: str, time: str | None) -> None:
        """Put a game's first deadline in the index (None: take it out), for an entry found
        stale: the appends keep it otherwise."""
        self._indexes.set_deadline(game_id, time)

    def silent_since_before(
        self, time: str, limit: int = 100, partitions: Iterable[int] | None = None
    ) -> list[str]:
        """Ids of games in play without a turn clock whose last append was before ``time``
        (ISO-8601 UTC), longest silent first, at most ``limit`` per partition: a read of the
        silent index only."""
        return self._indexes.silent_since_before(time, limit, partitions)

    def silent_before(self, game_id: str, time: str) -> bool:
        """Whether the game is in the silent index, last heard from before ``time``."""
        return self._indexes.silent_before(game_id, time)

    def set_silent(self, game_id: str, time: str | None) -> None:
        """Put a game in the silent index as last heard from at ``time`` (None: take it out),
        for an entry found stale: the appends keep it otherwise."""
        self._indexes.set_silent(game_id, time)

    # Writes (service/store/append.py) --------------------------------------

    def append(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command_id: str,
        time: str | None = None,
        idempotency: IdempotencyRecord | None = None,
        *,
        prev_hash: str | None = None,
        waiting: bool | None = None,
        deadline: str | bool | None = None,
        silent: bool | None = None,
    ) -> AppendResult:
        """Append ``events`` to the game if its version is ``expected_version``.

        All or nothing, in one Lua script. Checks, in order: an idempotency
        record for ``idempotency.scope`` with the same fingerprint returns its
        stored response (``replayed=True``, nothing appended); one with another
        fingerprint raises :class:`IdempotencyKeyReused`; a version other than
        ``expected_version`` raises :class:`ConcurrencyConflict`; a last hash
        other than ``prev_hash`` raises :class:`ChainMismatch`. Then the events
        get seqs ``expected_version + 1 ...`` in the game stream and the
        partition log, a game created by this append (``expected_version == 0``)
        enters the games index, and the idempotency record is stored with its TTL.

        ``time`` (ISO-8601 UTC, default ``now()``) is recorded in every event
        and, for a new game, is its creation time in the games index.
        ``prev_hash`` is the hash of the event at ``expected_version`` if the
        caller knows it (e.g. from the application's state cache); otherwise it is read.
        The idempotency record lives in the game's partition, so it is found
        with :meth:`get_idempotent` given the same game id.
        ``waiting``: True if this append leaves a new game waiting for players (it enters
        the waiting index, scored by ``time``), False if it ends the wait (it leaves it).
        ``deadline``: the game's first deadline after this append (ISO-8601 UTC) enters the
        deadlines index; False takes the game out of it; None leaves it as it is.
        ``silent``: True puts the game in the silent index at ``time`` (a game in play without
        a turn clock), False takes it out, None leaves it as it is.
        """
        return self._appender.append(
            game_id,
            expected_version,
            events,
            command_id,
            time,
            idempotency,
            prev_hash=prev_hash,
            waiting=waiting,
            deadline=deadline,
            silent=silent,
        )

    def await_replicas(self, game_id: str, version: int) -> None:
        """Return once ``min_replicas`` replicas hold everything the game's master holds now
        (events already read included), else raise :class:`NotReplicated` for ``version``.

        For an answer that wrote nothing (a replay from an idempotency receipt): WAIT counts the
        replicas that have the writes of *its own connection*, so on a connection that wrote
        nothing it returns at once, whatever the replicas hold. So one small write first, on the
        connection to the slot's master: a fence key of the game's partition (its slot), set
        after everything already written there; a replica that has the fence has the rest.
        """
        self._appender.await_replicas(game_id, version)

    # Reads and follows, with their fallback on the archive ---------------

    def read(
        self,
        game_id: str,
        after: int = 0,
        limit: int | None = None,
        *,
        fast: PageDecoder | None = None,
    ) -> list[Any]:
        """Events of the game with seq > ``after``, in order, at most ``limit``, as stored
        (``RecordedEvent``). With ``fast``, each page is first offered to that decoder (a
        caller's own, e.g. one that types the payloads for a fold: service/app/typed_envelopes.py)
        and decoded as stored only if it refuses."""
        check_game_id(game_id)
        check_count("after", after, 0)
        if limit is not None:
            check_count("limit", limit, 1)
        # A long game is read a page at a time, pausing between pages: one XRANGE of 15,000
        # entries and their decoding would hold a gevent worker for a third of a second.
        key = self.game_key(game_id)
        out: list[RecordedEvent] = []
        start = f"{after + 1}-0"
        pages = 0
        while True:
            count = READ_PAGE if limit is None else min(READ_PAGE, limit - len(out))
            entries = self.redis.xrange(key, start, "+", count=count)
            out += decode_page(entries, fast)
            pages += 1
            if len(entries) < count or (limit is not None and len(out) >= limit):
                break
            start = f"({text(entries[-1][0])}"  # exclusive: after the page's last entry
            pause()
        # Nothing here, or the stream went between two pages (archived meanwhile): the archive.
        if self.archive is not None and (not out or (pages > 1 and not self.redis.exists(key))):
            archived = self._archived(game_id)
            if archived is not None:
                found = archived[after:]
                return found if limit is None else found[:limit]
        return out

    def _archived(self, game_id: str) -> list[RecordedEvent] | None:
        """An archived game's events, as stored (never typed by a page decoder: its callers
        take events as stored too, as they do a page their decoder refuses); None if the game
        is not archived."""
        return self.archive.events(game_id) if self.archive is not None else None

    def read_since(
        self, game_id: str, version: int, *, fast: PageDecoder | None = None
    ) -> tuple[str | None, list[Any]]:
        """The hash recorded at ``version`` and the events after it, in one round trip.

        The hash is the entry's ``hash`` field (what the append script checks as the chain
        head), or None if the game has no event ``version``; that event itself is not decoded,
        so checking that a cached state is current costs one entry's transfer and no JSON.
        """
        check_game_id(game_id)
        check_count("version", version, 1)
        key = self.game_key(game_id)
        # XLEN in the same round trip: an entry deleted before ``version`` (XDEL by hand) leaves
        # the cached head intact, and only the count tells (fewer entries than the last seq).
        # More is no damage: another client appended between the two (the pipeline is not a
        # transaction), e.g. a bot runner playing beside the requests.
        pipe = self.redis.pipeline(transaction=False)
        pipe.xrange(key, f"{version}-0", "+")
        pipe.xlen(key)
        entries, length = pipe.execute()
        if length == 0:  # no stream: none yet, or moved to the archive (maybe between the two)
            archived = self._archived(game_id)
            if archived is not None:
                if version > len(archived):
                    return None, []
                return archived[version - 1].hash, archived[version:]
        if not entries or seq_of(entries[0][0]) != version:
            return None, []
        last = seq_of(entries[-1][0])
        if length < last:
            raise CorruptStore(f"game {game_id!r}: {length} events stored, the last is seq {last}")
        head = text(field(entries[0][1], "hash"))
        return head, decode_page(entries[1:], fast)

    def follow(self, game_id: str, after: int, block_ms: int) -> list[RecordedEvent]:
        """The game's events after seq ``after``, waiting up to ``block_ms`` for the first one
        (XREAD BLOCK: one connection parked per caller); empty if none came in time."""
        check_game_id(game_id)
        check_count("after", after, 0)
        check_count("block_ms", block_ms, 1)
        if self.archive is not None and not self.redis.exists(self.game_key(game_id)):
            archived = self._archived(game_id)
            if archived is not None and archived[after:]:  # else: wait, as for any ended game
                return archived[after:]
        reply = self.redis.xread({self.game_key(game_id): f"{after}-0"}, block=block_ms)
        return [decode_stored(field(fields, "event")) for _, fields in xread_entries(reply)]

    def follow_many(
        self, positions: dict[str, int], block_ms: int
    ) -> dict[str, list[RecordedEvent]]:
        """The events of several games after their seqs (``{game_id: after}``), waiting up to
        ``block_ms`` for the first one: one XREAD BLOCK on one connection for all of them (the
        games must share a partition on a Redis Cluster: one slot). Games with nothing new are
        left out; empty if nothing came in time. A game archived before or while it is followed
        is read from the archive, as :meth:`follow` reads it: its events after the seq, then
        nothing more."""
        check_count("block_ms", block_ms, 1)
        streams: dict[str, str] = {}
        games: dict[str, str] = {}
        for game_id, after in positions.items():
            check_game_id(game_id)
            check_count("after", after, 0)
            key = self.game_key(game_id)
            streams[key] = f"{after}-0"
            games[key] = game_id
        if not streams:
            return {}
        archived = self._archived_after(positions, list(streams))
        if archived:  # answered now: the other games' new events come with the next call
            return archived
        reply = self.redis.xread(streams, block=block_ms)
        found: dict[str, list[RecordedEvent]] = {}
        for key, entries in xread_streams(reply):
            events = [decode_stored(field(fields, "event")) for _, fields in entries]
            if events:
                found[games[key]] = events
        return found

    def _archived_after(
        self, positions: dict[str, int], keys: list[str]
    ) -> dict[str, list[RecordedEvent]]:
        """The events after their seqs of the followed games whose streams left for the archive,
        those with any left (``keys``: the games' stream keys, in the order of ``positions``).
        One EXISTS of them all when every stream is there (the common case)."""
        if self.archive is None or self.redis.exists(*keys) == len(keys):
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:
            pipe.exists(key)
        found: dict[str, list[RecordedEvent]] = {}
        for (game_id, after), hot in zip(positions.items(), pipe.execute(), strict=True):
            events = None if hot else self._archived(game_id)
            if events is not None and events[after:]:  # else: wait, as for any ended game
                found[game_id] = events[after:]
        return found

    def version(self, game_id: str) -> int:
        """The seq of the game's last event; 0 if the game has none."""
        entries = self.redis.xrevrange(self.game_key(game_id), "+", "-", count=1)
        if not entries and self.archive is not None:
            record = self.archive.record_of(game_id)
            return record.version if record is not None else 0
        return seq_of(entries[0][0]) if entries else 0

    def exists(self, game_id: str) -> bool:
        if self.redis.exists(self.game_key(game_id)):
            return True
        return self.archive is not None and self.archive.record_of(game_id) is not None

    def last_appended(self, game_ids: Sequence[str]) -> dict[str, str]:
        """When each game's last event was appended (its envelope's ISO-8601 time), in one
        round trip; a game with no events, or whose last entry does not decode (its reads say
        so: not this one's), is left out."""
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.xrevrange(self.game_key(game_id), "+", "-", count=1)
        found: dict[str, str] = {}
        for game_id, entries in zip(game_ids, pipe.execute(), strict=True):
            try:
                fields = entries[0][1]
                found[game_id] = decode_envelope(fields.get(b"event", fields.get("event"))).time
            except (IndexError, KeyError, TypeError, ValueError, AttributeError):
                continue
        return found

    def verify(self, game_id: str) -> list[ChainProblem]:
        """Check the game's whole hash chain (and that entry ids match seqs)."""
        check_game_id(game_id)
        entries = self.redis.xrange(self.game_key(game_id), "-", "+")
        if not entries:
            archived = self._archived(game_id)
            if archived is not None:  # its object was checked as it was read; check it again
                return verify_chain(archived)
        events = []
        problems = []
        for entry_id, fields in entries:
            event = decode_stored(field(fields, "event"))
            if text(entry_id) != f"{event.seq}-0":
                problems.append(
                    ChainProblem(event.seq, "entry id mismatch", f"entry id {text(entry_id)}")
                )
            if text(field(fields, "hash")) != event.hash:
                problems.append(
                    ChainProblem(event.seq, "hash field mismatch", "entry hash != envelope hash")
                )
            events.append(event)
        problems += verify_chain(events)
        return sorted(problems, key=lambda p: p.seq)

    def get_idempotent(self, game_id: str, scope: str) -> tuple[str, str] | None:
        """The ``(fingerprint, response)`` stored under ``scope`` for the game, if any.

        A fast path before deciding a command; :meth:`append` checks again atomically.
        """
        record = self.redis.get(self.idem_key(game_id, scope))
        if record is None:
            return None
        fingerprint, sep, response = text(record).partition("\n")
        if not sep:
            raise CorruptStore(f"malformed idempotency record for {scope!r}")
        return fingerprint, response

    def list_games(self, cursor: str | None = None, limit: int = 50) -> GamePage:
        """Game ids across all partitions, oldest first (by creation time, then id).

        ``cursor`` is the opaque ``next_cursor`` of the previous page. The order of
        listed games never changes; a game created with a time earlier than the
        cursor's (clock skew between writers) is not seen by later pages.
        """
        check_count("limit", limit, 1)
        after = decode_cursor(cursor) if cursor is not None else None
        want = limit + 1
        minimum: Any = after[0] if after is not None else "-inf"
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.zrangebyscore(
                self.games_key(p), minimum, "+inf", start=0, num=want, withscores=True
            )
        candidates: list[tuple[int, str]] = []
        for p, rows in enumerate(pipe.execute()):
            candidates += self._games_after(p, after, want, rows)
        candidates.sort()
        page = candidates[:limit]
        more = len(candidates) > limit
        return GamePage(
            game_ids=[game_id for _, game_id in page],
            next_cursor=encode_cursor(*page[-1]) if more else None,
        )

    def _games_after(
        self, partition: int, after: tuple[int, str] | None, want: int, rows: list
    ) -> list[tuple[int, str]]:
        """Up to ``want`` (score, id) of the partition after ``after``; ``rows`` is batch 1."""
        found: list[tuple[int, str]] = []
        offset = 0
        minimum: Any = after[0] if after is not None else "-inf"
        while True:
            for member, score in rows:
                item = (int(score), text(member))
                if after is None or item > after:
                    found.append(item)
            if len(found) >= want or len(rows) < want:
                return found[:want]
            # Only reached when many games share the cursor's score: page on.
            offset += len(rows)
            rows = self.redis.zrangebyscore(
                self.games_key(partition), minimum, "+inf", start=offset, num=want, withscores=True
            )

    def read_log(
        self,
        partition: int,
        after_id: str = "0-0",
        count: int = 100,
        *,
        block_ms: int | None = None,
    ) -> list[LogEntry]:
        """Entries of a partition log with ids after ``after_id``, oldest first.

        With ``block_ms``, waits up to that long (XREAD BLOCK) when there are none.
        """
        key = self.log_key(partition)
        if not isinstance(after_id, str) or not _STREAM_ID.match(after_id):
            raise ValueError("after_id must be a stream id like '1700000000000-0'")
        check_count("count", count, 1)
        if block_ms is None:
            entries = self.redis.xrange(key, f"({after_id}", "+", count=count)
        else:
            check_count("block_ms", block_ms, 0)
            reply = self.redis.xread({key: after_id}, count=count, block=block_ms)
            entries = xread_entries(reply)
        if self.archive is not None and block_ms is None:
            # Ended games' entries left the log for the archive: merged back in id order, so
            # a rebuild (or any reader of the log) sees the log as it was written.
            return self.archive.merge_log(partition, after_id, count, log_entries(entries))
        return log_entries(entries)

    def log_entries(self, entries: Sequence[tuple[Any, dict]]) -> list[LogEntry]:
        """Log entries from a reply's ``(id, fields)`` pairs (XRANGE, XREAD, XREADGROUP);
        each envelope is decoded when its event is first used."""
        return log_entries(entries)
