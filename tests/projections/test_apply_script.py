"""The read models' apply script applies the counter operations it is given (a counter's
declared merge: projections/stats.py COUNTER_MERGES) without interpreting them (issue 35), on a
real redis-server and on a cluster."""

from __future__ import annotations

import json

import pytest
import redis

from service.store.read_models import APPLIED, STALE, ProjectionStore


def _apply(projections: ProjectionStore, after: str, position: str, counters: list) -> list:
    generation = "g-script-test"
    keys = [
        projections.checkpoint_key(generation, 0),
        projections.retired_key(generation, 0),
        projections.stats_key(generation, 0),
        projections.rated_key(generation, 0),
    ]
    argument = {
        "after": after,
        "position": position,
        "applied": 1,
        "docs": [],
        "counters": counters,
        "recent": [],
        "rated": [],
    }
    return projections._apply_script(keys=keys, args=[json.dumps(argument)])


def _stats(projections: ProjectionStore) -> dict[str, int]:
    raw = projections.redis.hgetall(projections.stats_key("g-script-test", 0))
    return {k.decode(): int(v) for k, v in raw.items()}


def test_each_operation_merges_as_named(projections: ProjectionStore) -> None:
    first = [["sum", "wins:ann", "2"], ["max", "best:ann", "3"], ["min", "low:ann", "9"]]
    assert _apply(projections, "", "1-0", first)[0].decode() == APPLIED
    second = [["sum", "wins:ann", "-2"], ["max", "best:ann", "7"], ["min", "low:ann", "4"]]
    assert _apply(projections, "1-0", "2-0", second)[0].decode() == APPLIED
    third = [["max", "best:ann", "5"], ["min", "low:ann", "6"]]
    assert _apply(projections, "2-0", "3-0", third)[0].decode() == APPLIED
    # The sum back at 0 is gone; the max and min kept their extremes.
    assert _stats(projections) == {"best:ann": 7, "low:ann": 4}


def test_or_is_the_union_of_bit_masks(projections: ProjectionStore) -> None:
    """A set counter (Merge.SET) as the store keeps it: each part's members added, up to the
    largest member a set holds (52: one bit short of the doubles' exact 2**53)."""
    high = str(1 << 52 | 1)
    first = [["or", "seats:ann", "5"], ["or", "cards:ann", high]]
    assert _apply(projections, "", "1-0", first)[0].decode() == APPLIED
    second = [["or", "seats:ann", "6"], ["or", "cards:ann", str(1 << 51)]]
    assert _apply(projections, "1-0", "2-0", second)[0].decode() == APPLIED
    assert _stats(projections) == {"seats:ann": 7, "cards:ann": 1 << 52 | 1 << 51 | 1}


def test_a_stale_position_writes_nothing(projections: ProjectionStore) -> None:
    assert _apply(projections, "", "1-0", [["sum", "wins:bo", "1"]])[0].decode() == APPLIED
    stale = _apply(projections, "", "1-0", [["sum", "wins:bo", "1"]])
    assert stale[0].decode() == STALE and _stats(projections) == {"wins:bo": 1}


def test_an_unknown_operation_is_refused(projections: ProjectionStore) -> None:
    with pytest.raises(redis.exceptions.ResponseError, match="unknown counter operation"):
        _apply(projections, "", "1-0", [["latest", "x:ann", "1"]])
