"""A run of log entries folded into what the read models store (pure: no Redis).

The projector (service/app/projector.py) reads the affected scoreboards, folds a run of one
partition's entries here, and hands the result to the store (service/store/read_models.py),
which writes it in one step without knowing any projection: the fold is the projections'
(issue 35)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from .ratings import RatedGame
from .scoreboard import RELEVANT, Scoreboard, SourceEvent, apply, skip
from .stats import COUNTER_MERGES, STORE_OPERATION, merge_counters


@dataclass(frozen=True, slots=True)
class Batch:
    """What a run of entries changes: the scoreboards, the counters, listings, rated games."""

    boards: dict[str, Scoreboard]  # the scoreboards the run changed, by game id
    # (operation, field, value): each counter's part, to combine with the stored one by its
    # declared merge; zero parts are left out (they change nothing a read shows).
    counters: list[tuple[str, str, int]]
    listings: dict[tuple[str, str], int]  # (who, game id) -> the game's start, for recent games
    rated: list[RatedGame]


def fold_batch(
    boards: Mapping[str, Scoreboard | None],
    entries: Sequence[SourceEvent],
    count_arranged: bool = False,
    withheld: Collection[str] = (),
) -> Batch:
    """Fold ``entries`` (consecutive, of one partition) onto ``boards`` (each of their games',
    None where there is none yet). ``withheld``: games whose figures stay out of the
    statistics even when arranged games count (a tournament's tables: their results are
    the tournament's, and secret until their round ends)."""
    boards = dict(boards)
    changed: dict[str, bool] = {}
    parts: dict[str, tuple[str, int]] = {}  # field -> (its counter, the run's part)
    listings: dict[tuple[str, str], int] = {}
    rated: list[RatedGame] = []
    # Per game, a run of events that change no read model (plays, passes...): the board is
    # copied once per run, not once per event.
    runs: dict[str, tuple[int, int, str]] = {}

    def end_run(game_id: str) -> None:
        first, last, position = runs.pop(game_id)
        result = skip(boards[game_id], game_id, first, last, position)
        if result.applied:
            boards[game_id] = result.board
            changed[game_id] = True

    for entry in entries:
        game_id = entry.game_id
        run = runs.get(game_id)
        if not isinstance(entry.event, RELEVANT) and not entry.arranged:
            if run is not None and entry.seq == run[1] + 1:
                runs[game_id] = (run[0], entry.seq, entry.position)
                continue
            if run is not None:
                end_run(game_id)
            runs[game_id] = (entry.seq, entry.seq, entry.position)
            continue
        if run is not None:
            end_run(game_id)
        result = apply(boards[game_id], entry, count_arranged and game_id not in withheld)
        if not result.applied:
            continue
        boards[game_id] = result.board
        changed[game_id] = True
        for delta in result.deltas:
            field = f"{delta.counter}:{delta.name}"
            prior = {delta.counter: parts[field][1]} if field in parts else {}
            part = merge_counters((prior, {delta.counter: delta.amount}))[delta.counter]
            parts[field] = (delta.counter, part)
        for listing in result.listings:
            listings[(listing.name, listing.game_id)] = listing.score
        rated += result.rated
    for game_id in list(runs):
        end_run(game_id)
    written = {g: b for g, b in boards.items() if changed.get(g) and b is not None}
    counters = [
        (STORE_OPERATION[COUNTER_MERGES[counter]], field, value)
        for field, (counter, value) in parts.items()
        if value
    ]
    return Batch(written, counters, listings, rated)
