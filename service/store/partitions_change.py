"""Changing the partition count of existing data, offline, to a multiple of it
(``hearts partitions change --to M``; docs/architecture.md, "Partitions").

Only to a multiple M = m x C of the count C: a game's new partition j = crc mod M satisfies
j mod C = its old partition k, so every new partition's games come from one old partition, each
new partition j >= C starts empty, and the old log's entry ids (unique and increasing within one
log) stay unique and increasing in the new one. Every stored log id therefore stays as it is: the
``log`` field of the game streams, the archived records' ``first``/``last``, the ids inside the
archive objects (not rewritten: a record keeps its object's name ``games/p<k>/...``) and the
consumer groups' last-delivered ids.

Offline: :meth:`PartitionChange.begin` refuses while a projector, archiver or timekeeper holds a
lease, and marks the layout key "changing to M" (``<prefix>:layout``, field ``changing``), so
that no process starts with either count until :meth:`PartitionChange.finish` records M
(service/store/layout.py refuses meanwhile). The service itself holds no lease: it must be
stopped (docs/operations.md, "Partitions").

Every step copies, then deletes the old key, so a killed run is run again:

1. per old partition k, its log read once in id order: each entry of a game that moves to j is
   added to j's log with its id, unless j's log already ends at or after it;
2. per moving game (listed in ``{p<k>}:games``, archived ones included): its stream copied
   entry by entry with the same ids (again from the start if the copy is short), its entries in
   the games, waiting, deadlines, silent and ended indexes (same scores) and its archive record;
3. then the old copies deleted: its log entries, its stream, its record, its index entries, its
   games-list entry last (so a game still listed is still to be moved);
4. its analyses and analysis jobs moved (the game id is in their key), idempotency records
   copied to every new partition j with j mod C = k with their remaining time to live (the
   scope does not name the game: the one its new partition holds answers a retry);
5. each new log's consumer groups created at the old log's last-delivered ids, each partition's
   ``archived-entries`` recounted as the sum of its removed archived games' versions.

Read models are not moved: the caller rebuilds them under M (``hearts projections rebuild``,
service/app/projector.py's ``rebuild``) before :meth:`finish`.
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import redis as redis_lib

from service.store.archive import ended_key, removed_key
from service.store.errors import StoreError
from service.store.event_store import RedisEventStore
from service.store.layout import CHANGING, FIELD, layout_key, recorded_partitions
from service.store.read_models import stream_id

PAGE = 1000
# The steps of one game's move, in order (PartitionChange.move's on_step).
STEPS = ("copied", "log entries deleted", "stream deleted", "moved")


class ChangeRefused(StoreError):
    """The change cannot run: not a multiple, another change under way, processes running."""


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def changing_to(redis: Any, prefix: str) -> int | None:
    """The count a change under way goes to; None if none is under way."""
    raw = redis.hget(layout_key(prefix), CHANGING)
    return None if raw is None else int(_text(raw))


class PartitionChange:
    """One change of ``prefix``'s data from its recorded count to ``to`` partitions."""

    def __init__(self, redis: Any, prefix: str, to: int) -> None:
        self.redis = redis
        self.prefix = prefix
        recorded = recorded_partitions(redis, prefix)
        if recorded is None:
            raise ChangeRefused(f"no partition count is recorded under {layout_key(prefix)!r}")
        under_way = changing_to(redis, prefix)
        if isinstance(to, bool) or not isinstance(to, int) or to <= recorded:
            raise ChangeRefused(
                f"the data has {recorded} partitions: it can change only to a larger multiple "
                f"of {recorded} ({2 * recorded}, {3 * recorded}, ...), not {to}"
            )
        if to % recorded:
            raise ChangeRefused(
                f"the data has {recorded} partitions: it can change only to a multiple of "
                f"{recorded} ({2 * recorded}, {3 * recorded}, ...), not {to}: merging "
                "partitions' logs would make their entry ids collide (docs/architecture.md, "
                '"Partitions")'
            )
        if under_way is not None and under_way != to:
            raise ChangeRefused(
                f"a change to {under_way} partitions is under way: run it again with --to "
                f"{under_way} to finish it"
            )
        self.old = RedisEventStore(redis, prefix=prefix, partitions=recorded)
        self.new = RedisEventStore(redis, prefix=prefix, partitions=to)
        self.count = recorded
        self.to = to

    # Offline ---------------------------------------------------------------------

    def held_leases(self) -> list[str]:
        """Lease keys a projector, archiver or timekeeper holds under either count."""
        groups = self._groups_by_partition()
        names = {name for found in groups.values() for name, _ in found} | {"projector"}
        keys = []
        for store in (self.old, self.new):
            for p in range(store.partitions):
                base = store.log_key(p).removesuffix(":log")
                keys.append(f"{base}:archivelease")
                keys.append(f"{store.deadlines_key(p)}:lease")
                keys.extend(f"{base}:projlease:{name}" for name in sorted(names))
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:
            pipe.exists(key)
        return [key for key, held in zip(keys, pipe.execute(), strict=True) if held]

    def begin(self) -> None:
        """Mark the layout "changing" (idempotent for the same count); ChangeRefused while a
        lease is held."""
        held = self.held_leases()
        if held:
            raise ChangeRefused(
                f"{len(held)} partition leases are held (e.g. {held[0]!r}): stop the service, "
                "its projectors, archivers and timekeepers first"
            )
        marked = self.redis.hsetnx(layout_key(self.prefix), CHANGING, str(self.to))
        if changing_to(self.redis, self.prefix) != self.to:  # another change won the race
            raise ChangeRefused("another partition change is under way")
        held = self.held_leases()
        if held:  # a process took a lease before the mark: leave the data as it was
            if marked:
                self.redis.hdel(layout_key(self.prefix), CHANGING)
            raise ChangeRefused(f"a partition lease was taken meanwhile ({held[0]!r})")

    def finish(self) -> None:
        """Record the new count and end the change: processes start with M from now on."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(layout_key(self.prefix), FIELD, str(self.to))
        pipe.hdel(layout_key(self.prefix), CHANGING)
        pipe.execute()

    # Moving ---------------------------------------------------------------------------

    def target(self, game_id: str) -> int:
        return zlib.crc32(game_id.encode("utf-8")) % self.to

    def move(self, on_step: Callable[[str, str], None] = lambda step, game_id: None) -> int:
        """Move every game whose partition changes; how many moved. ``on_step(step, id)`` after
        each step of each game (:data:`STEPS`: a test's crash points)."""
        if changing_to(self.redis, self.prefix) != self.to:
            raise ChangeRefused("the layout is not marked as changing: begin() first")
        moved = 0
        for k in range(self.count):
            log_ids = self._copy_log(k)
            for game_id in self._movers(k):
                self._move_game(k, game_id, log_ids.get(game_id, []), on_step)
                moved += 1
            self._move_analyses(k)
            self._copy_idempotency(k)
        self._create_groups()
        self._recount_archived()
        return moved

    def _movers(self, k: int) -> list[str]:
        ids = [_text(g) for g in self.redis.zrange(self.old.games_key(k), 0, -1)]
        return [g for g in ids if self.target(g) != k]

    def _copy_log(self, k: int) -> dict[str, list[str]]:
        """Add the movers' entries of old log k to their new logs (ids kept); their ids by
        game."""
        last: dict[int, tuple[int, int]] = {}
        for j in range(k + self.count, self.to, self.count):
            tail = self.redis.xrevrange(self.new.log_key(j), "+", "-", count=1)
            last[j] = stream_id(_text(tail[0][0])) if tail else (0, 0)
        found: dict[str, list[str]] = defaultdict(list)
        after = "-"
        while True:
            entries = self.redis.xrange(self.old.log_key(k), after, "+", count=PAGE)
            if after != "-":
                entries = entries[1:] if entries and _text(entries[0][0]) == after else entries
            if not entries:
                break
            pipe = self.redis.pipeline(transaction=False)
            for raw_id, fields in entries:
                entry_id = _text(raw_id)
                game_id = _text(fields.get(b"game_id", fields.get("game_id")))
                j = self.target(game_id)
                if j == k:
                    continue
                found[game_id].append(entry_id)
                if stream_id(entry_id) > last[j]:
                    pipe.xadd(self.new.log_key(j), dict(fields), id=entry_id)
                    last[j] = stream_id(entry_id)
            pipe.execute()
            after = _text(entries[-1][0])
        return found

    def _move_game(
        self, k: int, game_id: str, log_ids: list[str], on_step: Callable[[str, str], None]
    ) -> None:
        j = self.target(game_id)
        old_stream, new_stream = self.old.game_key(game_id), self.new.game_key(game_id)
        indexes = [
            (self.old.games_key(k), self.new.games_key(j)),
            (self.old.waiting_key(k), self.new.waiting_key(j)),
            (self.old.deadlines_key(k), self.new.deadlines_key(j)),
            (self.old.silent_key(k), self.new.silent_key(j)),
            (ended_key(self.old, k), ended_key(self.new, j)),
        ]
        # Copy.
        entries = self.redis.xrange(old_stream, "-", "+")
        if entries and int(self.redis.xlen(new_stream)) != len(entries):
            pipe = self.redis.pipeline(transaction=False)
            pipe.delete(new_stream)
            for raw_id, fields in entries:
                pipe.xadd(new_stream, dict(fields), id=_text(raw_id))
            pipe.execute()
        pipe = self.redis.pipeline(transaction=False)
        for old_key, _ in indexes:
            pipe.zscore(old_key, game_id)
        pipe.hget(self.old.archived_key(k), game_id)
        *scores, record = pipe.execute()
        pipe = self.redis.pipeline(transaction=False)
        for (_, new_key), score in zip(indexes, scores, strict=True):
            if score is not None:
                pipe.zadd(new_key, {game_id: score})
        if record is not None:
            pipe.hset(self.new.archived_key(j), game_id, record)
        pipe.execute()
        on_step("copied", game_id)
        # Then delete the old copies, the games-list entry last.
        for start in range(0, len(log_ids), 500):
            self.redis.xdel(self.old.log_key(k), *log_ids[start : start + 500])
        on_step("log entries deleted", game_id)
        pipe = self.redis.pipeline(transaction=False)
        pipe.delete(old_stream)
        pipe.hdel(self.old.archived_key(k), game_id)
        for old_key, _ in indexes[1:]:
            pipe.zrem(old_key, game_id)
        pipe.execute()
        on_step("stream deleted", game_id)
        self.redis.zrem(indexes[0][0], game_id)
        on_step("moved", game_id)

    def _scan(self, pattern: str) -> list[str]:
        return sorted({_text(key) for key in self.redis.scan_iter(match=pattern, count=1000)})

    def _move_analyses(self, k: int) -> None:
        """Analyses and analysis jobs (``{p<k>}:analysis[job]:<game>:<hand>:v<n>:s<n>``) of
        moving games, with their remaining time to live."""
        base = self.old.log_key(k).removesuffix(":log")
        for key in self._scan(f"{_glob_escape(base)}:analysis*"):
            rest = key[len(base) + 1 :]
            parts = rest.rsplit(":", 3)
            if len(parts) != 4 or ":" not in parts[0]:
                continue  # the partition's analysis queue (transient; analysts are stopped)
            kind, game_id = parts[0].split(":", 1)
            j = self.target(game_id)
            if kind not in ("analysis", "analysisjob") or j == k:
                continue
            new_base = self.new.log_key(j).removesuffix(":log")
            self._copy_string(key, f"{new_base}:{rest}")
            self.redis.delete(key)

    def _copy_idempotency(self, k: int) -> None:
        base = self.old.log_key(k).removesuffix(":log")
        for key in self._scan(f"{_glob_escape(base)}:idem:*"):
            rest = key[len(base) + 1 :]
            for j in range(k + self.count, self.to, self.count):
                self._copy_string(key, f"{self.new.log_key(j).removesuffix(':log')}:{rest}")

    def _copy_string(self, source: str, destination: str) -> None:
        value = self.redis.get(source)
        ttl = int(self.redis.pttl(source))
        if value is None or ttl == -2:
            return
        self.redis.set(destination, value, px=ttl if ttl > 0 else None)

    def _groups_by_partition(self) -> dict[int, list[tuple[str, str]]]:
        groups: dict[int, list[tuple[str, str]]] = {}
        for k in range(self.count):
            try:
                found = self.redis.xinfo_groups(self.old.log_key(k))
            except redis_lib.ResponseError:  # no log yet
                found = []
            groups[k] = [(_text(g["name"]), _text(g["last-delivered-id"])) for g in found]
        return groups

    def _create_groups(self) -> None:
        for k, found in self._groups_by_partition().items():
            for j in range(k + self.count, self.to, self.count):
                for name, last_delivered in found:
                    try:
                        self.redis.xgroup_create(
                            self.new.log_key(j), name, id=last_delivered, mkstream=True
                        )
                    except redis_lib.ResponseError as exc:
                        if "BUSYGROUP" not in str(exc):
                            raise

    def _recount_archived(self) -> None:
        """Each partition's removed log entries: its removed archived games' versions."""
        for p in range(self.to):
            records = list(self.redis.hscan_iter(self.new.archived_key(p), count=500))
            pipe = self.redis.pipeline(transaction=False)
            for game_id, _ in records:
                pipe.exists(self.new.game_key(_text(game_id)))
            hot = pipe.execute()
            total = 0
            for (_, raw), exists in zip(records, hot, strict=True):
                if not exists:
                    total += int(json.loads(raw)["version"])
            key = removed_key(self.new, p)
            if total or self.redis.exists(key):
                self.redis.set(key, total)


__all__ = ["CHANGING", "STEPS", "ChangeRefused", "PartitionChange", "changing_to"]
