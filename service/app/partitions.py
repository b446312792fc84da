"""Changing the partition count of existing data (``hearts partitions change --to M``): the
games moved (service/store/partitions_change.py), then the read models rebuilt under the new
count (``hearts projections rebuild``), then the new count recorded. Offline: the service, its
projectors, archivers, timekeepers and analysts stopped (docs/operations.md, "Partitions").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.app.projector import rebuild
from service.store.archive import GameArchive
from service.store.layout import CHANGING, layout_key, recorded_partitions
from service.store.partitions_change import PartitionChange, changing_to
from service.store.read_models import ProjectionStore


@dataclass(frozen=True)
class ChangeResult:
    before: int  # the count the data had
    after: int  # the count it has now
    moved: int  # games moved (this run)
    generation: str | None  # the read models rebuilt under the new count (None: nothing to do)


def change_partitions(
    redis: Any,
    prefix: str,
    to: int,
    archive: GameArchive | None,
    *,
    on_step: Callable[[str, str], None] = lambda step, game_id: None,
    batch_size: int = 1000,
) -> ChangeResult:
    """Change ``prefix``'s data to ``to`` partitions (a multiple of its count; ChangeRefused
    otherwise, or while a lease is held). Run again after a crash, it finishes the change."""
    if recorded_partitions(redis, prefix) == to and changing_to(redis, prefix) in (None, to):
        # Done already (a rerun after the end, or after a crash between finish()'s two writes:
        # the count recorded, the mark not removed yet; everything before it was done).
        redis.hdel(layout_key(prefix), CHANGING)
        return ChangeResult(to, to, 0, None)
    change = PartitionChange(redis, prefix, to)
    change.begin()
    moved = change.move(on_step)
    if archive is not None:  # the rebuild reads archived games by their records under M
        change.new.archive = GameArchive(change.new, archive.blobs)
    result = rebuild(ProjectionStore(change.new), batch_size=batch_size)
    change.finish()
    return ChangeResult(change.count, to, moved, result.generation)


__all__ = ["ChangeResult", "change_partitions"]
