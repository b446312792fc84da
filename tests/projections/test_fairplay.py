"""Issue 42, collusion: the fair-play detector over the played cards (projections/fairplay.py),
its figures as documented, and the projector recording them with each rated game so a flag and
an operator's clearing read the same live and after a rebuild."""

from __future__ import annotations

import random

import pytest

from domain import RuleOptions
from domain.names import name_key
from projections.fairplay import seat_plays
from projections.ratings import MIN_RATED_SCORE_LIMIT, RatedGame
from service.app.fairplay import UnknownPlayer, clear, flags
from service.app.projector import build_generation
from service.store.accounts import AccountStore
from service.store.event_store import RedisEventStore
from service.store.fairplay import FairPlayStore
from service.store.read_models import ProjectionStore
from service.store.redis_server import client_for
from tests.projections.games import append_all
from tests.projections.table_play import HIGHEST, plan, play

RULES = RuleOptions.from_dict({"score_limit": MIN_RATED_SCORE_LIMIT, "time_control": "relaxed"})
GAMES = 8


def _behind_winners(policies: list[str], seed: int) -> tuple[int, int]:
    """The opponents' (needless takes, choices) summed over the games seat 0 won."""
    needless = choices = 0
    for g in range(GAMES):
        log, state = play(f"g{g}", RULES, policies, seed + g)
        if state.scores[0] != min(state.scores):
            continue
        for seat, figures in enumerate(seat_plays(log)):
            if seat:
                needless, choices = needless + figures.needless, choices + figures.choices
    return needless, choices


def test_the_detector_tells_a_fed_winner_from_an_honest_one() -> None:
    # Among careful players, the winner's opponents ducked most points they could duck.
    needless, choices = _behind_winners(["heuristic"] * 4, 100)
    assert choices >= 10 and needless <= 0.25 * choices
    # Among players of legal cards at random, about half.
    needless, choices = _behind_winners(["heuristic", "random", "random", "random"], 200)
    assert 0.3 * choices <= needless <= 0.7 * choices
    # Behind the farm's main account, every one, several a game.
    needless, choices = _behind_winners(["heuristic", HIGHEST, HIGHEST, HIGHEST], 300)
    assert needless == choices >= 3 * GAMES


@pytest.fixture
def world(redis_server, key_prefix):
    redis = client_for(redis_server)
    store = RedisEventStore(redis, prefix=key_prefix)
    accounts = AccountStore(redis, prefix=key_prefix)
    ids = [f"p{i:020x}" for i in range(4)]
    for i, player in enumerate(ids):
        name = ("Main", "Feeder1", "Feeder2", "Feeder3")[i]
        accounts.register(player, name, name_key(name), f"hash{i}", "2026-11-28T00:00:00Z")
    yield store, accounts, ids
    redis.close()


def test_the_projector_records_the_plays_and_the_flag_reads_the_same_rebuilt(world) -> None:
    store, accounts, ids = world
    policies = ["heuristic", HIGHEST, HIGHEST, HIGHEST]
    plans = [plan(f"farm-{i}", RULES, policies, 300 + i, ids) for i in range(5)]
    append_all(store, plans, random.Random(1))
    projections = ProjectionStore(store)
    build_generation(projections, "live")
    rated = [
        RatedGame.from_json(member, int(score))
        for p in range(store.partitions)
        for member, score in store.redis.zrange(
            projections.rated_key("live", p), 0, -1, withscores=True
        )
    ]
    assert len(rated) == len(plans)
    for game in rated:
        log, _ = play(game.game_id, RULES, policies, 300 + int(game.game_id[-1]), ids)
        assert game.plays == tuple((p.needless, p.choices) for p in seat_plays(log))
    projections.redis.set(projections.pointer_key, "live")
    found = flags(projections, accounts)
    assert [(f.name, f.player_id) for f in found] == [("Main", ids[0])]
    assert found[0].needless == found[0].choices >= 15
    # A rebuild from the log flags the same player with the same evidence.
    build_generation(projections, "again")
    again = projections.ratings(projections.as_of("again"))
    assert again == projections.ratings(projections.as_of("live"))
    # Cleared by an operator (by name, any case): its games count again, live and rebuilt.
    fairplay = FairPlayStore(store.redis, prefix=store.prefix)
    last = max(g.finished_us for g in rated)
    assert clear(fairplay, accounts, "main", last) == ids[0]
    assert flags(projections, accounts) == []
    live = projections.ratings(projections.as_of("live"))
    assert live[ids[0]].games == len(plans) and live == projections.ratings(
        projections.as_of("again")
    )
    with pytest.raises(UnknownPlayer):
        clear(fairplay, accounts, "Nobody", last)
