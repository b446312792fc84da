"""An arena's log: given events, when a command, then events (or a refusal); and properties of
its pairing and place points (domain/tournament/arena.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.tournament.arena import PLACE_POINTS, pair, place_points, standings, waiting
from domain.tournament.arena_events import (
    ArenaGameRecorded,
    ArenaPaired,
    ArenaStarted,
    FinishArena,
    PairArena,
    RecordArenaGame,
    StartArena,
)
from domain.tournament.commands import CreateTournament, Enter, Withdraw
from domain.tournament.decider import Status, Tournament, decide, fold
from domain.tournament.errors import TournamentInvalid, TournamentStepRefused
from domain.tournament.events import (
    PlayerEntered,
    PlayerWithdrew,
    TournamentFinished,
    event_from_dict,
    event_to_dict,
)

T0 = "2026-01-01T00:00:00.000000Z"


def at(seconds: float) -> str:
    whole, frac = divmod(round(seconds * 1_000_000), 1_000_000)
    minutes, secs = divmod(whole, 60)
    return f"2026-01-01T00:{minutes:02d}:{secs:02d}.{frac:06d}Z"


def create(**kw) -> CreateTournament:
    args = dict(
        tournament_id="t1",
        name="Arena",
        organiser="p00",
        rules=None,
        rounds=0,
        boards=1,
        min_players=4,
        max_players=64,
        house_bot="random",
        at=T0,
        format="arena",
        duration_seconds=600,
        grace_seconds=60,
    )
    args.update(kw)
    return CreateTournament(**args)  # type: ignore[arg-type]


def run(*commands, state: Tournament | None = None) -> Tournament:
    state = state or Tournament()
    for command in commands:
        state = fold(decide(command, state), state)
    return state


def started(players: int = 8) -> Tournament:
    names = [f"p{i:02d}" for i in range(players)]
    return run(create(), *(Enter(p, p.upper()) for p in names), StartArena("p00", at(0)))


def ids(n: int, prefix: str = "g") -> tuple[str, ...]:
    return tuple(f"{prefix}{i:020d}" for i in range(n))


# -- given / when / then -----------------------------------------------------------------------


def test_an_arena_starts_its_clock_from_the_command_time() -> None:
    given = run(create(), *(Enter(f"p{i:02d}", "x") for i in range(4)))
    events = decide(StartArena("p00", at(5)), given)
    assert events[1] == ArenaStarted(at(5), at(605), at(665))
    assert fold(events, given).status is Status.RUNNING


def test_four_waiting_players_are_paired_at_once_and_a_fifth_waits() -> None:
    given = started(5)
    events = decide(PairArena(at(1), (), ids(1)), given)
    assert len(events) == 1 and isinstance(events[0], ArenaPaired)
    assert events[0].game == 1 and len(set(events[0].seats)) == 4
    after = fold(events, given)
    assert len(waiting(after)) == 1
    assert decide(PairArena(at(2), (), ids(1, "h")), after) == []  # one waits: nobody to pair


def test_a_player_in_a_game_in_play_is_never_paired_again() -> None:
    given = started(8)
    after = fold(decide(PairArena(at(1), (), ids(2)), given), given)
    assert len(after.arena.in_play) == 2 and waiting(after) == []
    assert decide(PairArena(at(2), (), ids(2, "h")), after) == []


def test_a_finished_game_is_recorded_once_with_points_by_place() -> None:
    given = run(PairArena(at(1), (), ids(1)), state=started(4))
    game = given.arena.games[0]
    when = RecordArenaGame(1, game.game_id, (10, 0, 16, 0), at(30))
    events = decide(when, given)
    assert events == [
        ArenaGameRecorded(1, game.game_id, (10, 0, 16, 0), (2, 5, 0, 5), at(30), True)
    ]
    then = fold(events, given)
    assert decide(when, then) == []  # a second record decides nothing
    assert len(waiting(then)) == 4  # all four wait again


def test_a_record_for_another_game_id_is_refused() -> None:
    given = run(PairArena(at(1), (), ids(1)), state=started(4))
    with pytest.raises(TournamentStepRefused):
        decide(RecordArenaGame(1, "g" + "f" * 20, (0, 0, 0, 26), at(3)), given)


def test_players_closest_in_score_meet() -> None:
    points = {"a": 12, "b": 11, "c": 10, "d": 9, "e": 2, "f": 1, "g": 0, "h": 0}
    tables = pair(points, {}, points, {}, first_number=4)
    assert {frozenset(t) for t in tables} == {frozenset("abcd"), frozenset("efgh")}


def test_ratings_break_ties_of_score() -> None:
    players = "abcdefgh"
    ratings = {"a": 1.0, "c": 30.0, "e": 29.0, "g": 28.0, "h": 27.0}
    tables = pair(players, {}, {}, ratings, first_number=0)
    assert frozenset(tables[0]) == frozenset("cegh")


def test_those_waiting_longest_are_paired_first() -> None:
    free_since = {"a": 5, "b": 1, "c": 2, "d": 3, "e": 4}
    tables = pair("abcde", free_since, {}, {}, first_number=1)
    assert len(tables) == 1 and "a" not in tables[0]


def test_the_clock_stops_pairing_and_the_grace_decides_what_counts() -> None:
    given = run(PairArena(at(1), (), ids(1)), state=started(8))
    assert decide(PairArena(at(600), (), ids(1, "h")), given) == []  # the clock has ended
    game = given.arena.games[0]
    late = decide(RecordArenaGame(1, game.game_id, (0, 26, 0, 0), at(660.5)), given)
    assert late[0].counted is False
    in_grace = decide(RecordArenaGame(1, game.game_id, (0, 26, 0, 0), at(660)), given)
    assert in_grace[0].counted is True


def test_the_arena_finishes_at_the_end_of_the_grace_or_once_no_game_is_in_play() -> None:
    given = run(PairArena(at(1), (), ids(1)), state=started(4))
    assert decide(FinishArena(at(620)), given) == []  # a game in play, grace running
    assert decide(FinishArena(at(660)), given) == [TournamentFinished(at(660))]
    game = given.arena.games[0]
    quiet = run(RecordArenaGame(1, game.game_id, (0, 0, 0, 26), at(30)), state=given)
    assert decide(FinishArena(at(599)), quiet) == []
    assert decide(FinishArena(at(600)), quiet) == [TournamentFinished(at(600))]


def test_entering_a_running_arena_and_withdrawing_keeps_the_games() -> None:
    given = started(4)
    assert decide(Enter("late", "Late"), given) == [PlayerEntered("late", "Late", None)]
    after = run(Enter("late", "Late"), PairArena(at(1), (), ids(1)), state=given)
    assert decide(Withdraw("p01"), after) == [PlayerWithdrew("p01", 1)]
    gone = run(Withdraw("p01"), state=after)
    assert "p01" in {s.player for s in standings(gone)}
    assert "p01" not in waiting(gone)


def test_a_rated_arena_needs_a_clock_and_hands_are_short() -> None:
    with pytest.raises(TournamentInvalid, match="clock"):
        decide(create(rated=True), Tournament())
    assert decide(create(rated=True, rules={"time_control": "quick"}), Tournament())
    with pytest.raises(TournamentInvalid, match="hands"):
        decide(create(boards=5), Tournament())
    with pytest.raises(TournamentInvalid, match="duration"):
        decide(create(duration_seconds=10), Tournament())


def test_arena_events_round_trip_and_old_created_events_read() -> None:
    state = run(PairArena(at(1), (), ids(1)), state=started(4))
    created = event_to_dict(decide(create(), Tournament())[0])
    assert event_from_dict(created).duration_seconds == 600
    for key in ("duration_seconds", "grace_seconds", "rated"):
        del created["data"][key]  # a duplicate written before the arena
    assert event_from_dict(created).duration_seconds == 0
    paired = ArenaPaired(1, state.arena.games[0].game_id, state.arena.games[0].seats, at(1))
    assert event_from_dict(event_to_dict(paired)) == paired


def test_standings_share_places_and_count_only_counted_games() -> None:
    state = run(PairArena(at(1), (), ids(1)), state=started(4))
    game = state.arena.games[0]
    state = run(RecordArenaGame(1, game.game_id, (0, 0, 13, 13), at(2)), state=state)
    rows = standings(state)
    assert [r.place for r in rows] == [1, 1, 3, 3]
    assert [r.points for r in rows] == [5, 5, 1, 1]
    assert rows[0].firsts == 1 and rows[2].firsts == 0


# -- properties --------------------------------------------------------------------------------


@given(st.lists(st.integers(0, 26), min_size=4, max_size=4))
def test_place_points_share_the_table_and_reward_fewer_points(scores: list[int]) -> None:
    points = place_points(scores)
    assert sum(points) == sum(PLACE_POINTS)
    for a in range(4):
        for b in range(4):
            if scores[a] < scores[b]:
                assert points[a] > points[b]
            if scores[a] == scores[b]:
                assert points[a] == points[b]


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(4, 14),
    steps=st.lists(
        st.tuples(st.sampled_from(["pair", "record", "enter", "withdraw"]), st.integers(0, 99)),
        max_size=40,
    ),
)
def test_no_player_is_ever_in_two_games_in_play_and_each_game_counts_once(
    players: int, steps: list[tuple[str, int]]
) -> None:
    state = started(players)
    clock = 1.0
    for n, (what, pick) in enumerate(steps):
        clock += 1
        if what == "pair":
            command = PairArena(at(clock), (), ids(4, f"g{n:02d}"))
        elif what == "record" and state.arena.in_play:
            game = state.arena.in_play[pick % len(state.arena.in_play)]
            scores = tuple((pick * (s + 3)) % 27 for s in range(4))
            command = RecordArenaGame(game.number, game.game_id, scores, at(clock))
        elif what == "enter":
            command = Enter(f"late{pick}", "Late")
        elif what == "withdraw" and state.active:
            command = Withdraw(state.active[pick % len(state.active)].player_id)
        else:
            continue
        try:
            events = decide(command, state)
        except Exception:  # a refusal (already entered): the log is unchanged
            continue
        state = fold(events, state)
        in_play = [p for g in state.arena.in_play for p in g.seats]
        assert len(in_play) == len(set(in_play))  # nobody in two games at once
        if what == "record":
            again = decide(command, state)  # a second record of the same game
            assert again == []
    counted = [g for g in state.arena.games if g.counted]
    assert sum(r.points for r in standings(state)) == sum(PLACE_POINTS) * len(counted)
    assert [g.number for g in state.arena.games] == list(range(1, len(state.arena.games) + 1))
