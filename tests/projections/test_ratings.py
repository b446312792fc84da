"""Ratings (issue 20): which games are rated, the fold's order and ties, and the projection
through a projector killed mid-way equal to a rebuild."""

from __future__ import annotations

import random
import signal

from domain import RuleOptions
from domain.events import event_decoder
from projections.ratings import PROVISIONAL_GAMES, RatedGame, fold, places
from projections.scoreboard import SourceEvent, fold_game
from service.app.projector import build_generation
from service.store.read_models import ProjectionStore
from tests.projections.games import append_all, play_game
from tests.projections.helpers import caught_up, spawn_projector, stop, wait_until

PLAYERS = ("ann", "bob", "cy", "dee", "eve", "fay")
IDS = {name: f"p{i:020x}" for i, name in enumerate(PLAYERS)}


def _game(game_id: str, at: int, *seats: tuple[str, int]) -> RatedGame:
    return RatedGame(game_id, at, f"t{at}", tuple(seats))


def test_the_lowest_total_is_first_and_tied_totals_share_a_place() -> None:
    assert places((26, 0, 0, 78)) == [3, 1, 1, 4]
    ratings = fold([_game("g", 1, ("a", 26), ("b", 0), ("c", 0), ("d", 78))])
    assert ratings["b"].mu == ratings["c"].mu > ratings["a"].mu > ratings["d"].mu
    assert [p.rank for p in (ratings[x].history[0] for x in "abcd")] == [3, 1, 1, 4]
    assert all(r.games == 1 and r.provisional for r in ratings.values())
    assert ratings["b"].rating == ratings["b"].mu - 3 * ratings["b"].sigma


def test_the_fold_order_is_finish_time_then_game_id_whatever_the_input_order() -> None:
    rng = random.Random(7)
    games = [
        _game(f"g{i}", rng.randrange(5), *((p, rng.randrange(100)) for p in rng.sample("abcde", 4)))
        for i in range(30)
    ]
    reference = fold(games)
    for _ in range(5):
        rng.shuffle(games)
        assert fold(games) == reference
    assert sum(r.games for r in reference.values()) == 4 * 30
    history = reference["a"].history
    assert [p.game_id for p in history] == [
        g.game_id
        for g in sorted(games, key=lambda g: (g.finished_us, g.game_id))
        if "a" in dict(g.seats)
    ]
    assert reference["a"].provisional is (reference["a"].games < PROVISIONAL_GAMES)
    # Folding the later games onto the ratings after the earlier ones is the same fold.
    ordered = sorted(games, key=lambda g: g.order)
    assert fold(ordered[12:], fold(ordered[:12])) == reference


def _sources(plan, *, arranged: bool = False, imported: bool = False) -> list[SourceEvent]:
    """The plan's events as the projector gets them; ``arranged``: with the service's marker
    of a creator-chosen deal right after the GameCreated; ``imported``: an imported game."""
    events = [event_decoder(event.type)(event.payload) for batch in plan.batches for event in batch]
    time = "2026-01-01T00:00:00+00:00"
    out = [SourceEvent(plan.game_id, 1, events[0], time, imported=imported)]
    if arranged:
        out.append(SourceEvent(plan.game_id, 2, None, time, arranged=True))
    for event in events[1:]:
        out.append(SourceEvent(plan.game_id, len(out) + 1, event, time))
    return out


def test_only_games_of_registered_players_are_rated() -> None:
    rules = RuleOptions(score_limit=20)
    names = ["ann", "bob", "cy", "dee"]
    ids = [IDS[n] for n in names]
    plan = play_game("r", rules, random.Random(1), names=names, player_ids=ids)
    rated = fold_game(_sources(plan))
    assert len(rated.rated) == 1 and [p for p, _ in rated.rated[0].seats] == ids
    assert [t for _, t in rated.rated[0].seats] == list(rated.board.totals)
    # A guest at the table, or a bot seat: not rated.
    guest = play_game("g", rules, random.Random(1), names=names, player_ids=ids[:3] + [None])
    assert fold_game(_sources(guest)).rated == ()
    bot = play_game("b", rules, random.Random(1), names=names[:3] + [None], player_ids=ids)
    assert fold_game(_sources(bot)).rated == ()
    # Unfinished: not rated (yet).
    long = RuleOptions(score_limit=100)
    cut = play_game("u", long, random.Random(1), names=names, player_ids=ids, max_hands=1)
    assert fold_game(_sources(cut)).rated == ()
    # Arranged (the service's marker) or imported: not rated.
    plan = play_game("a", rules, random.Random(1), names=names, player_ids=ids)
    assert fold_game(_sources(plan, arranged=True)).board.status == "finished"
    assert fold_game(_sources(plan, arranged=True)).rated == ()
    assert fold_game(_sources(plan, imported=True)).rated == ()


def test_ratings_after_a_projector_kill_equal_a_rebuild(redis_url, key_prefix, store, projections):
    rng = random.Random(20)
    rules = RuleOptions(score_limit=20)
    plans = []
    for i in range(6):
        names = rng.sample(PLAYERS, 4)
        ids = [IDS[n] for n in names]
        if i == 5:  # one guest among them: not rated
            ids[0], guest = None, names[0]
        plans.append(play_game(f"rated-{i}", rules, rng, names=names, player_ids=ids))
    append_all(store, plans, rng)
    crashing = spawn_projector(
        redis_url,
        key_prefix,
        "--consumer",
        "doomed",
        "--batch",
        "16",
        "--lease-ms",
        "1000",
        crash_after=150,
    )
    assert crashing.wait(timeout=20) == -signal.SIGKILL
    current = projections.current_generation()
    assert current is not None
    projections.ratings(projections.as_of(current))  # cached part-way: then folded on
    restarted = spawn_projector(
        redis_url,
        key_prefix,
        "--consumer",
        "phoenix",
        "--claim-idle-ms",
        "50",
        "--claim-interval",
        "0.1",
    )
    try:
        wait_until(lambda: caught_up(projections))
    finally:
        stop(restarted)
    build_generation(projections, "fold")
    assert projections.dump(current) == projections.dump("fold")
    live = projections.ratings(projections.as_of(current))
    rebuilt = projections.ratings(projections.as_of("fold"))
    assert live == rebuilt == ProjectionStore(store).ratings(projections.as_of(current))
    assert sum(r.games for r in live.values()) == 4 * 5  # five rated games of four players
    # The figures of a seat joined with a key are the player's; the guest's are the name's.
    stats = projections.players(projections.as_of(current))
    assert guest in stats and stats[guest].player_id is None
    assert {s.player_id for s in stats.values() if s.name != guest} <= set(IDS.values())
