"""Ratings (issue 20): which games are rated, the fold's order and ties, and the projection
through a projector killed mid-way equal to a rebuild. Issue 32 (rating farming): a seat handed
to a bot has left, a short game or one without a turn clock is unrated, repeated tables stop
counting, and a rating is provisional until enough games against enough distinct opponents."""

from __future__ import annotations

import itertools
import random
import signal
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import RuleOptions
from domain.events import SeatControlChanged, SeatTimedOut, event_decoder
from projections.ratings import (
    MIN_RATED_SCORE_LIMIT,
    NEW_WEIGHT,
    PAIR_LIMIT,
    PAIR_WINDOW_US,
    PROVISIONAL_GAMES,
    PROVISIONAL_OPPONENTS,
    REPEAT_DECAY,
    REPEAT_FREE,
    RatedGame,
    fold,
    places,
    rated_table,
)
from projections.scoreboard import SourceEvent, fold_game
from service.app.projector import build_generation
from service.store.read_models import ProjectionStore
from tests.projections.games import append_all, play_game
from tests.projections.helpers import caught_up, spawn_projector, stop, wait_until
from tests.projections.rated_worlds import against_pool, established_pool

PLAYERS = ("ann", "bob", "cy", "dee", "eve", "fay")
IDS = {name: f"p{i:020x}" for i, name in enumerate(PLAYERS)}


DAY = PAIR_WINDOW_US
# The shortest rated game, with the default turn clock of seeks (a clockless game is unrated).
RATED = RuleOptions.from_dict({"score_limit": MIN_RATED_SCORE_LIMIT, "time_control": "relaxed"})


def _game(game_id: str, at: int, *seats: tuple[str, int], left: str = "") -> RatedGame:
    return RatedGame(game_id, at, f"t{at}", tuple(seats), frozenset(left))


def test_the_lowest_total_is_first_and_tied_totals_share_a_place() -> None:
    assert places((26, 0, 0, 78)) == [3, 1, 1, 4]
    ratings = fold([_game("g", 1, ("a", 26), ("b", 0), ("c", 0), ("d", 78))])
    assert ratings["b"].mu == ratings["c"].mu > ratings["a"].mu > ratings["d"].mu
    assert [p.rank for p in (ratings[x].history[0] for x in "abcd")] == [3, 1, 1, 4]
    assert all(r.games == 1 and r.provisional for r in ratings.values())
    assert ratings["b"].rating == ratings["b"].mu - 3 * ratings["b"].sigma


def test_the_fold_order_is_finish_time_then_game_id_whatever_the_input_order() -> None:
    rng = random.Random(7)
    # Over forty days (some games finish at the same moment: the game id orders those), with
    # some seats left to a bot: too few games a day for the pair limit.
    games = []
    for i in range(30):
        table = rng.sample("abcde", 4)
        left = "".join(rng.sample(table, rng.choice([0, 0, 1, 2, 3])))
        seats = ((p, rng.randrange(100)) for p in table)
        games.append(_game(f"g{i}", rng.randrange(40) * DAY, *seats, left=left))
    reference = fold(games)
    for _ in range(5):
        rng.shuffle(games)
        assert fold(games) == reference
    history = reference["a"].history
    assert [p.game_id for p in history] == [
        g.game_id
        for g in sorted(games, key=lambda g: (g.finished_us, g.game_id))
        if "a" in dict(g.seats) and ("a" in g.left or len(g.left) < 3)
    ]
    # Many games, but only four opponents to play: still provisional.
    assert reference["a"].games >= PROVISIONAL_GAMES and reference["a"].opponents == 4
    assert reference["a"].provisional
    # A game only one player played out moved only the three who left.
    assert sum(r.games for r in reference.values()) == sum(
        3 if len(g.left) == 3 else 4 for g in games
    )
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
    rules = RATED
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
    long = replace(RATED, score_limit=100)
    cut = play_game("u", long, random.Random(1), names=names, player_ids=ids, max_hands=1)
    assert fold_game(_sources(cut)).rated == ()
    # Arranged (the service's marker) or imported: not rated.
    plan = play_game("a", rules, random.Random(1), names=names, player_ids=ids)
    assert fold_game(_sources(plan, arranged=True)).board.status == "finished"
    assert fold_game(_sources(plan, arranged=True)).rated == ()
    assert fold_game(_sources(plan, imported=True)).rated == ()
    # No turn clock (time_control off): not rated, or a losing player could stall it.
    clockless = replace(RATED, seconds_per_decision=0, reserve_seconds=0)
    plan = play_game("c", clockless, random.Random(1), names=names, player_ids=ids)
    assert fold_game(_sources(plan)).board.status == "finished"
    assert fold_game(_sources(plan)).rated == ()


def test_ratings_after_a_projector_kill_equal_a_rebuild(redis_url, key_prefix, store, projections):
    rng = random.Random(20)
    rules = RATED
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


def test_a_seat_left_to_a_bot_is_ranked_last_whatever_the_bot_scored() -> None:
    # "a" left with the best total: ranked below everyone who played, as a loss.
    ratings = fold([_game("g", 1, ("a", 0), ("b", 10), ("c", 20), ("d", 30), left="a")])
    assert [ratings[p].history[0].rank for p in "abcd"] == [4, 1, 2, 3]
    assert ratings["a"].history[0].left and not ratings["b"].history[0].left
    assert ratings["a"].mu < ratings["d"].mu < ratings["c"].mu < ratings["b"].mu
    # Two who left share the last place.
    ratings = fold([_game("g", 1, ("a", 0), ("b", 10), ("c", 20), ("d", 5), left="ad")])
    assert [ratings[p].history[0].rank for p in "abcd"] == [3, 1, 2, 3]
    assert ratings["a"].mu == ratings["d"].mu


def test_nobody_gains_from_a_game_only_one_player_played_out() -> None:
    # Every seat left: unrated. One stayed: the leavers lose, the one who stayed gains nothing
    # (the farm: three throw-away accounts leave, the fourth collects a win).
    assert fold([_game("g", 1, ("a", 0), ("b", 1), ("c", 2), ("d", 3), left="abcd")]) == {}
    ratings = fold([_game("g", 1, ("a", 0), ("b", 1), ("c", 2), ("d", 3), left="bcd")])
    assert "a" not in ratings and {p: r.games for p, r in ratings.items()} == dict.fromkeys(
        "bcd", 1
    )
    assert all(
        r.history[0].rank == 2 and r.history[0].opponents == ("a",) for r in ratings.values()
    )


def test_repeated_tables_stop_counting_after_the_pair_limit_within_a_day() -> None:
    table = ("a", "b", "c", "d")
    day_one = [
        _game(f"g{i:02}", i, *((p, (i + j) % 4) for j, p in enumerate(table))) for i in range(9)
    ]
    ratings = fold(day_one)
    assert {r.games for r in ratings.values()} == {PAIR_LIMIT}
    # Rotating one account out does not reset it: a and b (and c) still met PAIR_LIMIT times.
    rotated = _game("rot", 20, ("a", 0), ("b", 1), ("c", 2), ("e", 3))
    assert fold([*day_one, rotated]) == ratings
    # A day after the first of them, one more counts again; a table of new pairs counts at once.
    later = _game("later", DAY + 1, *((p, j) for j, p in enumerate(table)))
    fresh = _game("fresh", 30, ("a", 0), ("e", 1), ("f", 2), ("g", 3))
    after = fold([*day_one, later, fresh])
    assert after["b"].games == PAIR_LIMIT + 1 and after["a"].games == PAIR_LIMIT + 2
    # Folded in two parts (the cached ratings, then the newer games), the same.
    assert fold([later, fresh], fold(day_one)) == after


def test_a_rating_is_provisional_until_enough_weighted_games_against_enough_opponents() -> None:
    # Many games a day apart among the same four newcomers: never established (three
    # opponents; and a newcomer's result weighs a quarter of a game at first).
    table = ("a", "b", "c", "d")
    four = [
        _game(f"g{i:02}", i * DAY, *((p, (i + j) % 4) for j, p in enumerate(table)))
        for i in range(PROVISIONAL_GAMES + 2)
    ]
    ratings = fold(four)
    assert ratings["a"].games == PROVISIONAL_GAMES + 2 and ratings["a"].opponents == 3
    assert ratings["a"].provisional and ratings["a"].weight < PROVISIONAL_GAMES / 2
    assert ratings["a"].history[0].weight == NEW_WEIGHT
    # A newcomer against established players: each game weighs 1, so it is established at
    # its PROVISIONAL_GAMES-th game (against PROVISIONAL_OPPONENTS or more distinct ones).
    pool = established_pool()
    start = pool[-1].finished_us + DAY
    mine = against_pool("new", [2, 1, 3, 2, 4, 1, 2, 3, 1, 2], start)
    assert len(mine) == PROVISIONAL_GAMES
    before = fold([*pool, *mine[:-1]])["new"]
    assert before.provisional and before.opponents >= PROVISIONAL_OPPONENTS
    ratings = fold([*pool, *mine])
    assert [p.weight for p in ratings["new"].history] == [1.0] * PROVISIONAL_GAMES
    assert not ratings["new"].provisional
    # Opponents who left do not count as played against.
    more = _game("more", 99 * DAY, ("a", 0), ("b", 1), ("e", 2), ("f", 3))
    assert fold([*four, more])["a"].opponents == PROVISIONAL_OPPONENTS
    left = _game("left", 99 * DAY, ("a", 0), ("b", 1), ("e", 2), ("f", 3), left="ef")
    ratings = fold([*four, left])
    assert ratings["a"].games == PROVISIONAL_GAMES + 3 and ratings["a"].opponents == 3


def test_results_against_a_player_beaten_again_and_again_weigh_less() -> None:
    pool = established_pool()
    start = pool[-1].finished_us + DAY
    # Wins a day apart over the same three established players: the results weigh in full
    # while each has lost to the winner at most REPEAT_FREE times that week, then each loss
    # more halves what the next one is worth.
    wins = [
        _game(f"w{i}", start + i * DAY, ("new", 0), ("pool0", 9), ("pool1", 9), ("pool2", 9))
        for i in range(REPEAT_FREE + 3)
    ]
    weights = [p.weight for p in fold([*pool, *wins])["new"].history]
    assert weights == [1.0] * (REPEAT_FREE + 1) + [REPEAT_DECAY, REPEAT_DECAY**2]
    # A week later they weigh in full again.
    later = replace(wins[0], game_id="later", finished_us=start + 30 * DAY)
    assert fold([*pool, *wins, later])["new"].history[-1].weight == 1.0


def _handed(sources: list[SourceEvent], seats: dict[int, str | None]) -> list[SourceEvent]:
    """The game's events with seat-control changes (seat -> bot, None: taken back) right after
    the joins (the fourth join is event 5), numbered on."""
    changes = [SeatControlChanged(seat, bot) for seat, bot in seats.items()]
    events = [s.event for s in sources[:5]] + changes + [s.event for s in sources[5:]]
    time = sources[0].time
    return [SourceEvent(sources[0].game_id, i + 1, e, time) for i, e in enumerate(events)]


def test_the_scoreboard_records_who_left_and_short_games_are_unrated() -> None:
    names = ["ann", "bob", "cy", "dee"]
    ids = [IDS[n] for n in names]
    plan = _sources(play_game("h", RATED, random.Random(4), names=names, player_ids=ids))
    # Handed to a bot and taken back: left all the same.
    done = fold_game(_handed(plan, {1: "random", 2: "heuristic"}))
    assert [s.left for s in done.board.seats] == [False, True, True, False]
    (rated,) = done.rated
    assert rated.left == {ids[1], ids[2]}
    back = _handed(plan, {1: "random"})
    back.insert(6, SourceEvent("h", 7, SeatControlChanged(1, None), back[0].time))
    back = [SourceEvent("h", i + 1, s.event, s.time) for i, s in enumerate(back)]
    assert fold_game(back).rated[0].left == {ids[1]}
    assert RatedGame.from_json(rated.to_json(), rated.finished_us) == rated
    # Every seat left: not recorded at all.
    assert fold_game(_handed(plan, dict.fromkeys(range(4), "random"))).rated == ()
    # Below the rated score limit: unrated.
    short = replace(RATED, score_limit=MIN_RATED_SCORE_LIMIT - 1)
    quick = play_game("q", short, random.Random(4), names=names, player_ids=ids)
    assert fold_game(_sources(quick)).board.status == "finished"
    assert fold_game(_sources(quick)).rated == ()


def test_a_seat_away_after_timeouts_in_a_row_has_left_too() -> None:
    names = ["ann", "bob", "cy", "dee"]
    ids = [IDS[n] for n in names]
    plan = _sources(play_game("w", RATED, random.Random(5), names=names, player_ids=ids))
    at = plan[0].time
    # Seat 3 timed out three times in a row: the clock hands it to its timeout bot.
    timed_out = [SeatTimedOut(3, at)] * 3 + [SeatControlChanged(3, "heuristic")]
    events = [s.event for s in plan[:5]] + timed_out + [s.event for s in plan[5:]]
    away = fold_game([SourceEvent("w", i + 1, e, at) for i, e in enumerate(events)])
    assert [s.left for s in away.board.seats] == [False, False, False, True]
    assert away.rated[0].left == {ids[3]}
    # A timeout alone (the bot makes that one move) is no leaving.
    events = [s.event for s in plan[:5]] + [SeatTimedOut(3, at)] + [s.event for s in plan[5:]]
    once = fold_game([SourceEvent("w", i + 1, e, at) for i, e in enumerate(events)])
    assert not any(s.left for s in once.board.seats) and once.rated[0].left == frozenset()


@given(
    st.lists(st.sampled_from([None, "a", "b", "c", "d", "e"]), min_size=2, max_size=6),
    st.integers(0, 1000),
    st.booleans(),
    st.booleans(),
)
def test_a_table_without_a_turn_clock_is_never_rated(ids, limit, arranged, imported) -> None:
    def rated(seconds: int) -> bool:
        return rated_table(
            ids, limit, seconds_per_decision=seconds, arranged=arranged, imported=imported
        )

    assert not rated(0)  # whoever sits, whatever the limit
    # With a clock, only the other rules decide.
    others = not arranged and not imported and limit >= MIN_RATED_SCORE_LIMIT
    assert rated(60) is (others and None not in ids and len(set(ids)) == len(ids))


_TABLES = st.lists(
    st.tuples(
        st.integers(0, 3 * DAY),  # finish time: many games within a day, to meet the pair limit
        st.lists(st.sampled_from("abcdef"), min_size=3, max_size=4, unique=True),
        st.lists(st.integers(0, 26), min_size=4, max_size=4),
        st.sets(st.integers(0, 3)),  # the seats that left
    ),
    max_size=40,
)


@given(_TABLES, st.integers(0, 40), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_the_fold_is_the_same_in_any_order_and_from_any_cached_prefix(tables, cut, rng) -> None:
    games = [
        _game(
            f"g{i:02}",
            at,
            *zip(table, totals, strict=False),
            left="".join(p for s, p in enumerate(table) if s in left),
        )
        for i, (at, table, totals, left) in enumerate(tables)
    ]
    reference = fold(games)
    rng.shuffle(games)
    assert fold(games) == reference
    ordered = sorted(games, key=lambda g: g.order)
    assert fold(ordered[cut:], fold(ordered[:cut])) == reference
    for rating in reference.values():
        assert rating.games == len(rating.history)
        assert rating.weight == pytest.approx(sum(p.weight for p in rating.history))
        assert rating.provisional is (
            rating.weight < PROVISIONAL_GAMES - 1e-9 or rating.opponents < PROVISIONAL_OPPONENTS
        )
    # No two players share more than PAIR_LIMIT counted games within any window.
    counted = {g.order: g for g in games if any(g.game_id in _ids(r) for r in reference.values())}
    for at, game in counted.items():
        for a, b in itertools.combinations(dict(game.seats), 2):
            together = [
                o
                for o, g in counted.items()
                if at[0] - PAIR_WINDOW_US < o[0] and o <= at and {a, b} <= set(dict(g.seats))
            ]
            assert len(together) <= PAIR_LIMIT


def _ids(rating) -> set[str]:
    return {point.game_id for point in rating.history}
