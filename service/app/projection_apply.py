"""The read models' apply step: a run of one partition's log entries read, folded by the
projections (``projections.batch``) and written by the store in one script. The store knows no
projection; the fold runs here, in the application (issue 35)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from projections.batch import fold_batch
from projections.fairplay import seat_plays
from projections.ratings import RatedGame
from projections.scoreboard import SourceEvent
from service.app import game_log
from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from service.store.tournaments import TournamentStore


def apply_entries(
    projections: ProjectionStore,
    generation: str,
    partition: int,
    after: str | None,
    entries: Sequence[SourceEvent],
    withheld: Collection[str] = (),
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
    if projections.count_arranged:  # a tournament's tables never count (docs/tournaments.md)
        withheld = set(withheld) | tables(projections.store, game_ids)
    batch = fold_batch(boards, entries, projections.count_arranged, withheld)
    if batch.rated:
        batch = replace(batch, rated=[with_plays(projections.store, g) for g in batch.rated])
    return projections.write_batch(
        generation, partition, after, entries[-1].position, len(entries), batch
    )


def with_plays(store: RedisEventStore, game: RatedGame) -> RatedGame:
    """The rated game's record with each seat's fair-play figures (``projections.fairplay``),
    read from the game's log: the partition log passes plays on undecoded (they change no
    read model), and a rated game ends once, so its log is read once per build."""
    events = (event for _, event in game_log.events(game_log.read(store, game.game_id)))
    plays = seat_plays(events)
    return replace(game, plays=tuple((p.needless, p.choices) for p in plays))


def tables(store: RedisEventStore, game_ids: list[str]) -> set[str]:
    """Those of ``game_ids`` that are tables of a tournament (linked before they exist)."""
    return set(TournamentStore(store.redis, store.keys).game_links(game_ids))
