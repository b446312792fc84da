"""Issue 42: a farm of colluders reached #1. Eight accounts; ten games in twelve minutes with
the main account and three of the seven others, rotated so no pair shared more than five; the
three others played their highest card; the main account won most, was established (ten rated
games, seven opponents) and ranked first.

The same play here, card by card (the pure domain: the main seat a ``heuristic`` bot, the
others their highest legal card), recorded as the projector records rated games, beside an
established pool of players and an honest newcomer who wins as often against them. Now
(docs/projections.md, "What is rated"): the opponents' needless takes flag the main account
(:mod:`projections.fairplay`), and even cleared, its wins over fresh accounts weigh too little to
establish it; the honest newcomer is established in ten games and ranked first.
"""

from __future__ import annotations

import itertools

import pytest

from domain import RuleOptions
from projections.fairplay import seat_plays
from projections.leaderboard import ordered, parse_order
from projections.ratings import (
    FLAG_TAKES,
    MIN_RATED_SCORE_LIMIT,
    PAIR_LIMIT,
    PROVISIONAL_GAMES,
    RatedGame,
    fold,
    places,
)
from projections.stats import PlayerStats
from tests.projections.rated_worlds import DAY, against_pool, established_pool
from tests.projections.table_play import HIGHEST, play

RULES = RuleOptions.from_dict({"score_limit": MIN_RATED_SCORE_LIMIT, "time_control": "relaxed"})
MAIN = "main"
THROWAWAYS = tuple(f"farm{i}" for i in range(1, 8))
MINUTE = 60 * 1_000_000


def _farm_tables() -> list[tuple[str, ...]]:
    """Ten tables: the main account and three of the seven others, rotated."""
    return [(MAIN, *(THROWAWAYS[(3 * i + k) % 7] for k in range(3))) for i in range(10)]


def _farm(start: int) -> list[RatedGame]:
    games = []
    for i, table in enumerate(_farm_tables()):
        log, state = play(f"farm-{i}", RULES, ["heuristic", HIGHEST, HIGHEST, HIGHEST], i, table)
        plays = tuple((p.needless, p.choices) for p in seat_plays(log))
        at = start + i * 72 * 1_000_000  # ten games in twelve minutes
        seats = tuple(zip(table, state.scores, strict=True))
        games.append(RatedGame(f"farm-{i}", at, f"t{at}", seats, frozenset(), plays))
    return games


@pytest.fixture(scope="module")
def world() -> tuple[list[RatedGame], list[RatedGame], list[RatedGame]]:
    pool = established_pool()
    start = pool[-1].finished_us + DAY
    honest = against_pool("honest", [1, 1, 2, 1, 3, 1, 1, 2, 1, 4], start)
    return pool, _farm(start), honest


def _board(ratings: dict) -> list[str]:
    players = [PlayerStats(p, {"wins": 0}, rating=r) for p, r in ratings.items()]
    return [p.name for p in ordered(players, parse_order("rating", None))]


def test_the_farm_plays_as_found(world) -> None:
    _, farm, _ = world
    wins = sum(places(tuple(t for _, t in g.seats))[0] == 1 for g in farm)
    assert wins >= 7  # the colluders hand the main account the games
    for a, b in itertools.combinations((MAIN, *THROWAWAYS), 2):
        shared = sum({a, b} <= {p for p, _ in g.seats} for g in farm)
        assert shared <= PAIR_LIMIT  # the pair limit never triggers
    opponents = {p for g in farm for p, _ in g.seats} - {MAIN}
    assert len(opponents) == 7


def test_the_farms_main_account_is_flagged_and_off_the_board(world) -> None:
    pool, farm, honest = world
    ratings = fold([*pool, *farm, *honest])
    main = ratings[MAIN]
    assert main.flagged is not None and main.fed[0] >= FLAG_TAKES
    # Flagged from the game that crossed the line: the games after it moved nobody.
    counted = [p.game_id for p in main.history]
    assert main.flagged not in counted and len(counted) < len(farm)
    assert MAIN not in _board(ratings)
    # The honest newcomer, with as many wins (seven of ten) against established players, is
    # established and ranked first.
    assert not ratings["honest"].provisional and ratings["honest"].flagged is None
    assert _board(ratings)[0] == "honest"
    assert ratings["honest"].games == PROVISIONAL_GAMES
    # Nobody in the established pool is flagged by ordinary games.
    assert all(ratings[p].flagged is None for p in ratings if p.startswith("pool"))


def test_cleared_the_farm_still_weighs_too_little_to_be_ranked(world) -> None:
    pool, farm, honest = world
    cleared = {MAIN: farm[-1].finished_us}  # an operator cleared it after its last game
    ratings = fold([*pool, *farm, *honest], cleared=cleared)
    main = ratings[MAIN]
    assert main.flagged is None and main.games == len(farm)
    assert main.opponents == 7
    # Its opponents were fresh accounts: each win weighs at most a quarter game or so.
    assert main.weight < PROVISIONAL_GAMES / 2 and main.provisional
    assert MAIN not in _board(ratings)
    # A new game with the same feeding after the clearing counts as evidence again.
    again = _farm(farm[-1].finished_us + MINUTE)
    again = [
        RatedGame(f"again-{g.game_id}", g.finished_us, g.finished_at, g.seats, g.left, g.plays)
        for g in again
    ]
    assert fold([*pool, *farm, *again], cleared=cleared)[MAIN].flagged is not None


def test_the_fold_of_the_farm_is_the_same_from_any_cached_prefix(world) -> None:
    pool, farm, honest = world
    games = sorted([*pool, *farm, *honest], key=lambda g: g.order)
    reference = fold(games)
    for cut in (len(pool) + 2, len(pool) + 5, len(games) - 3):
        assert fold(games[cut:], fold(games[:cut])) == reference
