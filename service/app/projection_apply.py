"""The read models' apply step: a run of one partition's log entries read, folded by the
projections (``projections.batch``) and written by the store in one script. The store knows no
projection; the fold runs here, in the application (issue 35)."""

from __future__ import annotations

from collections.abc import Sequence

from projections.batch import fold_batch
from projections.scoreboard import SourceEvent
from service.store.read_models import ProjectionStore


def apply_entries(
    projections: ProjectionStore,
    generation: str,
    partition: int,
    after: str | None,
    entries: Sequence[SourceEvent],
) -> tuple[str, str | None]:
    """Apply consecutive log entries of ``partition`` that follow position ``after``, as the
    service decoded them (``service.app.game_log.sources``): ``(APPLIED, None)``, ``(STALE,
    current position)`` or ``(RETIRED, None)`` (see ``ProjectionStore.write_batch``)."""
    if not entries:
        raise ValueError("no entries to apply")
    game_ids = list(dict.fromkeys(e.game_id for e in entries))
    for game_id in game_ids:
        if projections.store.partition_of(game_id) != partition:
            raise ValueError(f"game {game_id!r} is not in partition {partition}")
    boards = projections.boards(generation, game_ids)
    batch = fold_batch(boards, entries, projections.count_arranged)
    return projections.write_batch(
        generation, partition, after, entries[-1].position, len(entries), batch
    )
