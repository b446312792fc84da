"""The pure folds: scoreboard, statistics, leaderboard ordering and pagination (no Redis)."""

from __future__ import annotations

import io
import random
from dataclasses import replace

import pytest

from domain import RuleOptions
from domain.cards import Card, Suit
from domain.events import (
    CardPlayed,
    GameCreated,
    GameEnded,
    HandDealt,
    HandScored,
    PlayerJoined,
    SeatControlChanged,
    TrickTaken,
    event_from_dict,
)
from domain.rules import MoonScoring, PassDirection
from projections import stats
from projections.leaderboard import (
    BadQuery,
    Order,
    decode_cursor,
    encode_cursor,
    ordered,
    page,
    parse_limit,
    parse_order,
)
from projections.ratings import RatedGame, fold
from projections.scoreboard import (
    ProjectionGap,
    Scoreboard,
    SourceEvent,
    apply,
    fold_game,
    skip,
)
from projections.stats import FIGURES, PlayerStats, StatDelta, apply_deltas, merge_stats
from service.cli.progress import ProgressBar
from tests.projections.games import play_game

C = Card


def _source(game_id: str, events) -> list[SourceEvent]:
    return [
        SourceEvent(game_id, seq, e, f"2024-05-01T12:00:{seq:02d}Z")
        for seq, e in enumerate(events, start=1)
    ]


def _scripted_game() -> list[SourceEvent]:
    """Two hands by hand: a plain one with the kitty-less queen, then a moon and a shared win."""
    rules = RuleOptions(score_limit=26)
    hands = tuple(tuple(C(c) for c in row) for row in (["2C"], ["3C"], ["4C"], ["5C"]))
    events = [
        GameCreated("g", rules, (None, None, "random", None)),
        PlayerJoined(0, "ann"),
        PlayerJoined(1, "bob"),
        PlayerJoined(3, "ann"),  # one name, two seats: each seat counts
        HandDealt(1, 0, PassDirection.LEFT, hands, (), "s1", "c1", True),
        CardPlayed(0, C("2C")),
        TrickTaken(1, 1, ((0, C("QS")), (1, C("AH")), (2, C("2H")), (3, C("3D"))), 15),
        TrickTaken(2, 2, ((0, C("KH")), (1, C("4H")), (2, C("AS")), (3, C("5H"))), 3),
        HandScored(1, (0, 15, 3, 0), None, None, None, (0, 15, 3, 0), (), (0, 15, 3, 0)),
        SeatControlChanged(1, "random"),  # bob's seat handed to a bot: still bob's
        HandDealt(2, 1, PassDirection.RIGHT, hands, (), "s2", "c2", True),
        TrickTaken(1, 3, ((0, C("QS")), (1, C("2H")), (2, C("3H")), (3, C("AH"))), 16),
        HandScored(
            2,
            (0, 0, 0, 26),
            3,
            "moon",
            MoonScoring.ADD_TO_OTHERS,
            (26, 26, 26, 0),
            (),
            (26, 41, 29, 0),
        ),
        GameEnded((3,), (26, 41, 29, 0)),
    ]
    return _source("g", events)


def test_scoreboard_records_each_hand_and_the_standings():
    result = fold_game(_scripted_game())
    board = result.board
    assert board is not None and board.status == "finished" and board.seq == 14
    first, second = board.hands
    assert first.pass_direction == "left" and second.pass_direction == "right"
    assert first.points_taken == (0, 15, 3, 0) and first.totals == (0, 15, 3, 0)
    assert first.queen_of_spades == 1 and first.penalty_cards_taken == (0, 2, 3, 0)
    assert first.tricks_won == (0, 1, 1, 0)
    assert (second.shot, second.shooter, second.moon_scoring) == ("moon", 3, "add_to_others")
    assert second.score_changes == (26, 26, 26, 0) and second.totals == (26, 41, 29, 0)
    assert board.seats[1].name == "bob" and board.seats[1].bot == "random"
    assert board.winners == (3,)
    standings = [(s.rank, s.seat, s.name, s.total, s.winner) for s in board.standings]
    assert standings == [
        (1, 3, "ann", 0, True),
        (2, 0, "ann", 26, False),
        (3, 2, "random", 29, False),
        (4, 1, "bob", 41, False),
    ]
    assert Scoreboard.from_dict(board.to_dict()) == board


def test_statistics_count_per_seat_shared_name_moons_queens_and_hearts():
    stats = apply_deltas({}, fold_game(_scripted_game()).deltas)
    ann, bob, bot = stats["ann"], stats["bob"], stats["random"]
    assert ann.count("games_played") == 2 and ann.count("games_finished") == 2
    assert ann.count("wins") == 1 and ann.win_rate == 0.5
    assert ann.average_final_score == 13.0
    assert ann.count("hands_played") == 4 and ann.average_points_per_hand == 26 / 4
    assert ann.count("moons_shot") == 1 and ann.count("qs_taken") == 1
    assert ann.count("hearts_taken") == 3  # 2H 3H AH with the moon (3D is no heart)
    assert bob.count("qs_taken") == 1 and bob.count("hearts_taken") == 2
    assert bob.average_final_score == 41.0 and bob.count("wins") == 0
    assert bot.count("hearts_taken") == 3 and bot.count("points_taken_sum") == 3


def test_the_longest_clean_streak_is_the_best_run_of_pointless_hands():
    """Points taken per seat: hand 1 (0, 15, 3, 0), hand 2 the moon at seat 3 (0, 0, 0, 26)."""
    board = fold_game(_scripted_game()).board
    assert [h.points_taken for h in board.hands] == [(0, 15, 3, 0), (0, 0, 0, 26)]
    stats = apply_deltas({}, fold_game(_scripted_game()).deltas)
    # ann: two clean hands at seat 0 (a run of 2) and one at seat 3 (1): the best, not the sum.
    assert stats["ann"].count("longest_clean_streak") == 2
    assert stats["bob"].count("longest_clean_streak") == 1  # 15 points, then a clean hand
    assert stats["random"].figure("longest_clean_streak") == 1


def test_a_shared_win_counts_as_a_win_for_each_winner():
    events = _scripted_game()
    ended = events[-1]
    shared = SourceEvent("g", ended.seq, GameEnded((0, 3), (0, 41, 29, 0)), ended.time)
    stats = apply_deltas({}, fold_game([*events[:-1], shared]).deltas)
    assert stats["ann"].count("wins") == 2 and stats["ann"].win_rate == 1.0


def test_applied_events_are_no_ops_and_gaps_are_refused():
    events = _scripted_game()
    board = fold_game(events[:5]).board
    again = apply(board, events[3])
    assert not again.applied and again.board is board and again.deltas == ()
    with pytest.raises(ProjectionGap):
        apply(board, events[6])
    with pytest.raises(ProjectionGap):
        apply(None, events[1])


def test_events_the_projections_ignore_still_move_the_seq_on():
    events = _scripted_game()
    board = fold_game(events[:4]).board
    plan = SourceEvent("g", 5, None, events[4].time)  # a service record (the deal plan)
    after = apply(board, plan)
    assert after.board is not None and after.board.seq == 5 and after.deltas == ()


def test_a_random_game_fold_agrees_with_the_domain_scores():
    rng = random.Random(11)
    plan = play_game("r", RuleOptions(score_limit=40), rng, names=["ann", None, "bob", "cy"])
    events = [
        SourceEvent("r", seq, event_from_dict(e.type, e.payload), "2024-05-01T12:00:00Z")
        for seq, e in enumerate((e for b in plan.batches for e in b), start=1)
    ]
    board = fold_game(events).board
    scored = [e.event for e in events if isinstance(e.event, HandScored)]
    assert [h.totals for h in board.hands if h.scored] == [p.totals for p in scored]
    ended = next(e.event for e in events if isinstance(e.event, GameEnded))
    assert board.totals == ended.totals and board.winners == ended.winners
    hearts = sum(
        1
        for e in events
        if isinstance(e.event, TrickTaken)
        for _, c in e.event.plays
        if c.suit is Suit.HEARTS
    )
    assert sum(sum(h.penalty_cards_taken) for h in board.hands) == hearts


def _players() -> list[PlayerStats]:
    return [
        PlayerStats("ann", {"wins": 3, "games_finished": 4, "final_score_sum": 200}),
        PlayerStats("bob", {"wins": 3, "games_finished": 3, "final_score_sum": 90}),
        PlayerStats("cy", {"wins": 0, "games_played": 1}),
        PlayerStats("dee", {"wins": 5, "games_finished": 10, "final_score_sum": 500}),
    ]


def test_ordering_best_first_by_default_names_break_ties_and_missing_values_go_last():
    players = _players()
    assert [p.name for p in ordered(players, parse_order("wins", None))] == [
        "dee",
        "ann",
        "bob",
        "cy",
    ]
    assert [p.name for p in ordered(players, parse_order("average_final_score", None))] == [
        "bob",
        "ann",
        "dee",
        "cy",
    ]
    assert [p.name for p in ordered(players, parse_order("average_final_score", "desc"))] == [
        "ann",
        "dee",
        "bob",
        "cy",
    ]
    assert [p.name for p in ordered(players, parse_order("win_rate", "asc"))][-1] == "cy"


def _rated(players: list[PlayerStats]) -> list[PlayerStats]:
    """The players, the first seven of them rated (a day apart, so no pair limit): forty games
    among the first six establish them (newcomers' results weigh little at first), the seventh
    played one (provisional)."""
    rng = random.Random(3)
    ids = [p.name for p in players[:7]]
    day = 24 * 3600 * 1_000_000
    tables = [rng.sample(ids[:6], 4) for _ in range(40)] + [ids[3:7]]
    games = [
        RatedGame(f"g{i}", i * day, f"t{i}", tuple((p, rng.randrange(90)) for p in table))
        for i, table in enumerate(tables)
    ]
    ratings = fold(games)
    return [replace(p, rating=ratings.get(p.name)) for p in players]


def test_ranked_by_rating_the_board_lists_established_ratings_only():
    players = _rated(_players() + [PlayerStats(f"p{i}", {"wins": i % 3}) for i in range(7)])
    established = [p.name for p in players if p.rating is not None and not p.rating.provisional]
    provisional = [p.name for p in players if p.rating is not None and p.rating.provisional]
    assert established and provisional  # both kinds are there
    rows = ordered(players, parse_order("rating", None))
    assert sorted(p.name for p in rows) == sorted(established)
    assert [p.conservative_rating for p in rows] == sorted(
        (p.conservative_rating for p in rows), reverse=True
    )
    # Ranked by any other figure, everyone has a row (the rating shown, provisional or not).
    assert len(ordered(players, parse_order("wins", None))) == len(players)


def test_players_without_a_value_come_last_most_wins_first():
    # Issue 34: players without a value for the figure were ranked by name, so a name with 0
    # wins came above one with 2. (Ranked by rating, such players have no row at all.)
    players = [PlayerStats("aaron", {"wins": 0}), PlayerStats("zed", {"wins": 2})]
    players.append(PlayerStats("mia", {"wins": 1}))
    by_average = parse_order("average_final_score", None)
    assert [p.average_final_score for p in players] == [None, None, None]
    assert [p.name for p in ordered(players, by_average)] == ["zed", "mia", "aaron"]
    first = page(players, by_average, 1, None)
    rest = page(players, by_average, 5, first.next_cursor)
    assert [p.name for p in first.rows + rest.rows] == ["zed", "mia", "aaron"]


@pytest.mark.parametrize("sort", list(FIGURES))
@pytest.mark.parametrize("direction", ["asc", "desc", None])
def test_paging_with_cursors_walks_the_whole_order_once(sort, direction):
    players = _rated(_players() + [PlayerStats(f"p{i}", {"wins": i % 3}) for i in range(7)])
    order = parse_order(sort, direction)
    listed = ordered(players, order)
    assert listed
    seen, cursor = [], None
    while True:
        result = page(players, order, 3, cursor)
        assert result.start == len(seen) and result.total == len(listed)
        seen += [p.name for p in result.rows]
        cursor = result.next_cursor
        if cursor is None:
            break
    assert seen == [p.name for p in listed]


def test_bad_queries_name_the_rule_broken():
    for call, code in [
        (lambda: parse_order("bogus", None), "invalid-sort"),
        (lambda: parse_order("wins", "up"), "invalid-order"),
        (lambda: parse_limit("0"), "invalid-limit"),
        (lambda: parse_limit("101"), "invalid-limit"),
        (lambda: parse_limit("-3"), "invalid-limit"),
        (lambda: parse_limit("2.5"), "invalid-limit"),
        (lambda: parse_limit("ten"), "invalid-limit"),
        (lambda: decode_cursor("not a cursor!", Order("wins", True)), "invalid-cursor"),
        (
            lambda: decode_cursor(
                encode_cursor(Order("wins", True), 3, 0, "a"), Order("wins", False)
            ),
            "invalid-cursor",
        ),
    ]:
        with pytest.raises(BadQuery) as caught:
            call()
        assert caught.value.code == code
    assert parse_limit(None) == 20 and parse_limit("100") == 100


def test_partial_statistics_merge_by_addition():
    a = PlayerStats("ann", {"wins": 1, "games_finished": 2})
    b = PlayerStats("ann", {"wins": 2, "games_finished": 2, "moons_shot": 1})
    merged = merge_stats([a, b, PlayerStats("bob", {"wins": 1})])
    assert merged["ann"].counters == {"wins": 3, "games_finished": 4, "moons_shot": 1}
    assert merged["ann"].win_rate == 0.75 and merged["bob"].win_rate is None


def test_each_counter_merges_as_it_declares(monkeypatch):
    """One merge function over the declarations (issue 35): a counter declared max or min
    combines its parts so, whatever the order of the parts."""
    assert set(stats.COUNTER_MERGES) == set(stats.COUNTERS)
    monkeypatch.setitem(stats.COUNTER_MERGES, "wins", stats.Merge.MAX)
    monkeypatch.setitem(stats.COUNTER_MERGES, "timeouts", stats.Merge.MIN)
    parts = [{"wins": 2, "timeouts": 5, "hands_played": 1}, {"wins": 7, "timeouts": 3}, {}]
    expected = {"wins": 7, "timeouts": 3, "hands_played": 1}
    assert stats.merge_counters(parts) == expected
    assert stats.merge_counters(reversed(parts)) == expected
    assert stats.merge_counters([]) == {}


def test_a_latest_counter_keeps_the_value_counted_last_whatever_the_order(monkeypatch):
    monkeypatch.setitem(stats.COUNTER_MERGES, "final_score_sum", stats.Merge.LATEST)
    parts = [
        {"final_score_sum": stats.latest(1_800_000_200, -26)},  # the latest, in partition 0
        {"final_score_sum": stats.latest(1_800_000_100, 104)},
        {"final_score_sum": stats.latest(1_700_000_000, 7)},
    ]
    for order in (parts, list(reversed(parts))):
        merged = PlayerStats("ann", stats.merge_counters(order))
        assert merged.count("final_score_sum") == -26
    assert PlayerStats("bob", {}).count("final_score_sum") == 0
    assert stats.STORE_OPERATION[stats.Merge.LATEST] == "max"  # the store keeps the greater
    with pytest.raises(ValueError, match="2\\*\\*20"):
        stats.latest(1_800_000_000, 1 << 20)


def test_a_set_counter_is_the_union_of_what_was_counted(monkeypatch):
    monkeypatch.setitem(stats.COUNTER_MERGES, "moons_shot", stats.Merge.SET)
    deltas = [StatDelta("ann", "moons_shot", stats.member(n)) for n in (3, 4, 3, 52)]
    merged = apply_deltas({}, deltas)["ann"].count("moons_shot")
    assert stats.members(merged) == {3, 4, 52}
    parts = [{"moons_shot": stats.member(0)}, {"moons_shot": merged}]
    assert stats.members(stats.merge_counters(parts)["moons_shot"]) == {0, 3, 4, 52}
    assert stats.STORE_OPERATION[stats.Merge.SET] == "or"
    with pytest.raises(ValueError, match="0 to 52"):
        stats.member(53)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_shows_events_done_rate_and_time_left():
    now = [100.0]
    stream = _Tty()
    bar = ProgressBar(stream, width=10, clock=lambda: now[0])
    now[0] = 105.0
    bar(50, 100)
    assert stream.getvalue() == "\r[#####.....] 50/100 events  10/s  5s left"
    now[0] = 110.0
    bar(100, 100)
    bar.finish()
    assert stream.getvalue().endswith("\r[##########] 100/100 events  10/s  0s left\n")


def test_skipping_a_run_of_ignored_events_is_applying_them_one_by_one():
    # The projector copies a board once for a run of plays: the same board as one step each.
    events = _scripted_game()
    board = fold_game(events[:5]).board
    plays = [SourceEvent("g", seq, None, "", f"{seq}-0") for seq in range(6, 10)]
    one_by_one = fold_game(plays, board).board
    assert skip(board, "g", 6, 9, "9-0").board == one_by_one
    assert skip(one_by_one, "g", 6, 9, "9-0").applied is False  # delivered again: a no-op
    assert skip(board, "g", 4, 7, "7-0").board == fold_game(plays[:2], board).board
    with pytest.raises(ProjectionGap):
        skip(board, "g", 7, 9, "9-0")
    with pytest.raises(ProjectionGap):
        skip(None, "g", 1, 3, "3-0")
