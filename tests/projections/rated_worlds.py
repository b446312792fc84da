"""Rated-game records for the ratings' tests: a pool of established players, and a newcomer's
games against them."""

from __future__ import annotations

import random
from collections.abc import Sequence

from projections.ratings import PAIR_WINDOW_US, RatedGame, fold

DAY = PAIR_WINDOW_US
POOL = tuple(f"pool{i}" for i in range(8))


def established_pool(games: int = 60, seed: int = 3) -> list[RatedGame]:
    """Rated games a day apart among :data:`POOL` (random totals): enough that every one of them
    is established, from the weights of newcomers up (about 30 games each)."""
    rng = random.Random(seed)
    out = [
        RatedGame(f"pool-{i:03}", i * DAY, f"t{i}", tuple((p, rng.randrange(90)) for p in table))
        for i, table in enumerate(rng.sample(POOL, 4) for _ in range(games))
    ]
    ratings = fold(out)
    assert all(not ratings[p].provisional for p in POOL), "the pool must be established"
    return out


def against_pool(
    player: str, places: Sequence[int], start: int, gap: int = 8 * DAY
) -> list[RatedGame]:
    """``player``'s games against three of the pool each (rotated), ``gap`` apart from
    ``start``, finishing at place ``places[i]`` (1-4) of game i; the pool's seats take the
    other places in turn."""
    games = []
    for i, place in enumerate(places):
        opponents = [POOL[(3 * i + k) % len(POOL)] for k in range(3)]
        totals = [10, 30, 50, 70]
        mine = totals.pop(place - 1)
        seats = ((player, mine), *zip(opponents, totals, strict=True))
        at = start + i * gap
        games.append(RatedGame(f"{player}-{i:02}", at, f"t{at}", seats))
    return games
