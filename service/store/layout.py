"""The data layout a deployment's Redis was written with, recorded there on first use.

A game's partition is ``crc32(id) % partitions`` and every key of it carries that partition
(service/store/event_store.py), so a process started with another ``HEARTS_PARTITIONS`` than the
data was written with would read and write keys nobody else reads: games "missing", appends to
a second copy of a game, projections that skip partitions. :func:`check_layout` stops that: the
first process to use a prefix records its partition count under it, and every process after it
compares its own count with the recorded one and refuses to start on a difference
(:class:`LayoutMismatch`, naming both counts). It is called where the service's stores are
built: ``create_app`` (service/api/factory.py) and every CLI command's ``open_store``
(service/cli/connection.py), so the projector, the timekeeper and the archiver too.

Key (one per prefix, no hash tag: it is read once per process start)::

    <prefix>:layout   hash: partitions -> the partition count the data is written with,
                      changing -> the count a change under way goes to (while
                      ``hearts partitions change`` runs: every process refuses to start)

Data written before this key existed is checked once, when the key is first written: a sample of
the games listed in each partition's game list (``{p<N>}:games``, archived games included) must
sit in the partition the count gives them, else :class:`LayoutMismatch` names the count they
were written with when the sample tells it.
"""

from __future__ import annotations

import zlib
from typing import Any

from service.store.errors import StoreError
from service.store.event_store import RedisEventStore

FIELD = "partitions"
CHANGING = "changing"  # the count a change under way goes to (service/store/partitions_change.py)
# For data written before the layout key: the partitions whose game lists are probed (a pipeline
# of ZRANGEs, once per prefix), at least PROBED and twice the count (games beyond the count are
# misplaced; data of a smaller count is misplaced in the first partitions), and games sampled in
# each.
PROBED = 64
SAMPLED = 3


class LayoutMismatch(StoreError):
    """This process's partition count is not the one its Redis data was written with."""

    def __init__(self, prefix: str, configured: int, recorded: int | None, detail: str) -> None:
        self.prefix = prefix
        self.configured = configured
        self.recorded = recorded
        written = f"{recorded} partitions" if recorded is not None else "another partition count"
        start = f"start with HEARTS_PARTITIONS={recorded}, or " if recorded is not None else ""
        super().__init__(
            f"HEARTS_PARTITIONS is {configured}, but the data under the key prefix {prefix!r} "
            f"was written with {written} ({detail}): {start}see docs/operations.md, "
            '"Partitions"; refusing to start rather than read and write the wrong keys'
        )


class LayoutChanging(LayoutMismatch):
    """The data's partition count is being changed (``hearts partitions change``)."""

    def __init__(self, prefix: str, configured: int, recorded: int, to: int) -> None:
        self.prefix = prefix
        self.configured = configured
        self.recorded = recorded
        StoreError.__init__(
            self,
            f"the data under the key prefix {prefix!r} is changing from {recorded} to {to} "
            f"partitions (hearts partitions change --to {to}): no process starts until the "
            f"change ends, then with HEARTS_PARTITIONS={to}; see docs/operations.md, "
            '"Partitions"',
        )


def layout_key(prefix: str) -> str:
    return f"{prefix}:layout"


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def recorded_partitions(redis: Any, prefix: str) -> int | None:
    """The partition count recorded for ``prefix``; None if nothing is recorded yet."""
    raw = redis.hget(layout_key(prefix), FIELD)
    if raw is None:
        return None
    try:
        return int(_text(raw))
    except ValueError:
        raise StoreError(f"{layout_key(prefix)} holds {_text(raw)!r}, not a count") from None


def check_layout(store: RedisEventStore) -> int:
    """Refuse (:class:`LayoutMismatch`) a store whose partition count is not its data's;
    record the count on first use. The count, once checked."""
    recorded = recorded_partitions(store.redis, store.prefix)
    if recorded is None:
        _check_unrecorded(store)
        store.redis.hsetnx(layout_key(store.prefix), FIELD, str(store.partitions))
        recorded = recorded_partitions(store.redis, store.prefix)  # another process may have won
    changing = store.redis.hget(layout_key(store.prefix), CHANGING)
    if changing is not None:
        raise LayoutChanging(store.prefix, store.partitions, recorded, int(_text(changing)))
    if recorded != store.partitions:
        raise LayoutMismatch(
            store.prefix, store.partitions, recorded, f"recorded in {layout_key(store.prefix)}"
        )
    return recorded


def _check_unrecorded(store: RedisEventStore) -> None:
    """Data from before the layout key: its games must sit where this count puts them."""
    probed = max(PROBED, 2 * store.partitions)
    probe = RedisEventStore(store.redis, prefix=store.prefix, partitions=probed)
    pipe = store.redis.pipeline(transaction=False)
    for partition in range(probed):
        pipe.zrange(probe.games_key(partition), 0, SAMPLED - 1)
    found = [
        (_text(game_id), partition)
        for partition, ids in enumerate(pipe.execute())
        for game_id in ids
    ]
    misplaced = [
        (game_id, partition)
        for game_id, partition in found
        if zlib.crc32(game_id.encode("utf-8")) % store.partitions != partition
    ]
    if not misplaced:
        return
    game_id, partition = misplaced[0]
    counts = [
        n
        for n in range(1, probed + 1)
        if all(zlib.crc32(g.encode("utf-8")) % n == p for g, p in found)
    ]
    detail = (
        f"game {game_id!r} is kept in partition {partition}, "
        f"{len(misplaced)} of {len(found)} sampled games are not where "
        f"{store.partitions} partitions put them"
    )
    # The smallest count that puts every sampled game where it is (larger multiples of the
    # differences would too, but a deployment's count is the smallest such in practice).
    recorded = next((n for n in counts if n > max(p for _, p in found)), None)
    raise LayoutMismatch(store.prefix, store.partitions, recorded, detail)


__all__ = [
    "LayoutChanging",
    "LayoutMismatch",
    "check_layout",
    "layout_key",
    "recorded_partitions",
]
