"""A duplicate tournament's log: given events, when a command, then events (or a refusal)."""

from __future__ import annotations

import pytest

from domain.shuffle import seed_commitment
from domain.tournament.commands import (
    Cancel,
    CreateTournament,
    EndRound,
    Enter,
    LinkTable,
    RecordMiss,
    RecordTable,
    Start,
    Withdraw,
)
from domain.tournament.decider import Status, Tournament, decide, fold
from domain.tournament.errors import (
    AlreadyEntered,
    NotOrganiser,
    TooFewPlayers,
    TournamentClosed,
    TournamentFull,
    TournamentInvalid,
    TournamentStepRefused,
)
from domain.tournament.events import (
    PlayerMissed,
    PlayerWithdrew,
    RoundEnded,
    RoundStarted,
    TableGameLinked,
    TableResultRecorded,
    TournamentFinished,
    event_from_dict,
    event_to_dict,
)

AT = "2026-01-01T00:00:00.000000Z"
SALT = "0" * 32


def create(**kw) -> CreateTournament:
    args = dict(
        tournament_id="t1",
        name="Friday duplicate",
        organiser="org",
        rules=None,
        rounds=2,
        boards=2,
        min_players=8,
        max_players=16,
        house_bot="random",
        at=AT,
    )
    args.update(kw)
    return CreateTournament(**args)  # type: ignore[arg-type]


def run(*commands, state: Tournament | None = None):
    """Decide and apply each command in turn: the log and the state after it."""
    state = state or Tournament()
    log = []
    for command in commands:
        events = decide(command, state)
        log += events
        state = fold(events, state)
    return log, state


def entered(n: int):
    return run(create(), *[Enter(f"p{i}", f"P{i}") for i in range(n)])


def test_create_fixes_the_table_rules_to_the_boards() -> None:
    log, state = run(create(rules={"pass_cycle": ["left", "right"]}))
    rules = state.created.rules  # type: ignore[union-attr]
    assert rules["hand_limit"] == 2 and rules["players"] == 4 and rules["score_limit"] == 500
    assert state.status is Status.UPCOMING


@pytest.mark.parametrize(
    "bad",
    [
        dict(rounds=0),
        dict(rounds=9),
        dict(boards=9),
        dict(min_players=3),
        dict(min_players=20, max_players=16),
        dict(name=""),
        dict(name="a\x00b"),
        dict(format="arena"),
        dict(rules={"players": 5}),
        dict(rules={"hand_limit": 3}),
        dict(rules={"kitty": "nonsense"}),
        dict(rules=[1]),
    ],
)
def test_create_refuses_settings_out_of_range(bad) -> None:
    with pytest.raises(TournamentInvalid):
        run(create(**bad))


def test_entries_are_refused_twice_when_full_and_after_the_start() -> None:
    _, state = run(create(max_players=8), *[Enter(f"p{i}", f"P{i}") for i in range(8)])
    with pytest.raises(AlreadyEntered):
        decide(Enter("p0", "P0"), state)
    with pytest.raises(TournamentFull):
        decide(Enter("p9", "P9"), state)
    _, state = run(Start("org", "s1", SALT), state=state)
    with pytest.raises(TournamentClosed):
        decide(Enter("p9", "P9"), state)


def test_only_the_organiser_starts_and_only_with_enough_players() -> None:
    _, state = entered(7)
    with pytest.raises(TooFewPlayers):
        decide(Start("org", "s1", SALT), state)
    _, state = run(Enter("p7", "P7"), state=state)
    with pytest.raises(NotOrganiser):
        decide(Start("p0", "s1", SALT), state)


def test_the_start_commits_round_one_and_seats_everyone() -> None:
    _, state = entered(8)
    events = decide(Start("org", "seed-one", SALT), state)
    rnd = events[1]
    assert isinstance(rnd, RoundStarted)
    assert rnd.seed_commitment == seed_commitment("seed-one", SALT)
    seated = sorted(p for table in rnd.tables for p in table if p is not None)
    assert seated == sorted(f"p{i}" for i in range(8))


def _play_round(state: Tournament, number: int, seed: str):
    rnd = state.rounds[number - 1]
    commands = []
    for t in range(len(rnd.tables)):
        commands += [
            LinkTable(number, t, f"g{number}{t}"),
            RecordTable(number, t, f"g{number}{t}", ((t, 26 - t, 0, 0), (1, 2, 3, 20))),
        ]
    return run(*commands, EndRound(number, seed, SALT, AT), state=state)


def test_a_round_ends_when_every_table_is_recorded_revealing_its_seed() -> None:
    _, state = entered(8)
    _, state = run(Start("org", "seed-one", SALT), state=state)
    with pytest.raises(TournamentStepRefused):
        decide(EndRound(1, "seed-two", SALT, AT), state)
    log, state = _play_round(state, 1, "seed-two")
    ended = [e for e in log if isinstance(e, RoundEnded)]
    assert ended == [RoundEnded(1, "seed-one", SALT)]
    assert isinstance(log[-1], RoundStarted) and log[-1].round == 2
    log, state = _play_round(state, 2, "unused")
    assert isinstance(log[-1], TournamentFinished) and state.status is Status.FINISHED
    # A step taken late (a process that read the log before the end) decides nothing.
    assert decide(EndRound(2, "late", SALT, AT), state) == []
    assert decide(LinkTable(2, 0, "g20"), state) == []
    assert len(state.results()) == 2 * 2 * 2 * 4  # rounds x tables x boards x seats
    assert [s.player for s in state.standings()]  # everyone ranked


def test_every_progress_step_taken_again_decides_nothing() -> None:
    _, state = entered(8)
    _, state = run(Start("org", "s", SALT), state=state)
    _, state = run(LinkTable(1, 0, "g0"), state=state)
    assert decide(LinkTable(1, 0, "g0"), state) == []
    with pytest.raises(TournamentStepRefused):
        decide(LinkTable(1, 0, "g-other"), state)
    scores = ((0, 0, 0, 26), (0, 0, 26, 0))
    _, state = run(RecordTable(1, 0, "g0", scores), state=state)
    assert decide(RecordTable(1, 0, "g0", scores), state) == []
    with pytest.raises(TournamentStepRefused):
        decide(RecordTable(1, 1, "g0", scores), state)  # not that table's game
    _, state = run(
        LinkTable(1, 1, "g1"),
        RecordTable(1, 1, "g1", scores),
        EndRound(1, "s2", SALT, AT),
        state=state,
    )
    assert decide(EndRound(1, "s3", SALT, AT), state) == []  # ended already
    assert decide(LinkTable(1, 1, "g1"), state) == []


def test_a_withdrawn_player_is_replaced_by_a_house_bot_from_the_next_round() -> None:
    _, state = entered(8)
    _, state = run(Start("org", "s", SALT), state=state)
    log, state = run(Withdraw("p3"), state=state)
    assert log == [PlayerWithdrew("p3", 1)]
    assert state.seat_of("p3", 1) is not None
    _, state = _play_round(state, 1, "s2")
    assert state.seat_of("p3", 2) is None
    assert sum(p is None for t in state.rounds[1].tables for p in t) == 1
    assert "p3" in [s.player for s in state.standings()]  # ranked on what they played


def test_cancel_by_the_organiser_closes_it() -> None:
    _, state = entered(8)
    with pytest.raises(NotOrganiser):
        decide(Cancel("p1", "no", AT), state)
    _, state = run(Cancel("org", "rain", AT), state=state)
    assert state.status is Status.CANCELLED
    with pytest.raises(TournamentClosed):
        decide(Enter("p9", "P9"), state)


def test_events_read_back_as_written() -> None:
    log, state = entered(8)
    more, _ = run(Start("org", "s", SALT), LinkTable(1, 0, "g0"), state=state)
    for event in log + more:
        assert event_from_dict(event_to_dict(event)) == event
    recorded = TableResultRecorded(1, 0, "g0", ((1, 2, 3, 20),))
    assert event_from_dict(event_to_dict(recorded)) == recorded
    assert event_from_dict(event_to_dict(TableGameLinked(1, 0, "g"))) == TableGameLinked(1, 0, "g")


def test_a_miss_is_recorded_once_a_round_and_the_second_withdraws() -> None:
    _, state = entered(8)
    _, state = run(Start("org", "s1", SALT), state=state)
    log, state = run(RecordMiss("p3", 1), state=state)
    assert [type(e).__name__ for e in log] == ["PlayerMissed"]
    assert decide(RecordMiss("p3", 1), state) == []  # the same round again: nothing
    _, state = _play_round(state, 1, "s2")
    log, state = run(RecordMiss("p3", 2), state=state)
    assert log == [PlayerMissed("p3", 2), PlayerWithdrew("p3", 2)]
    assert state.entrant("p3").missed == (1, 2) and not state.entrant("p3").active
    assert decide(RecordMiss("p3", 2), state) == []  # withdrawn: nothing more


def test_a_miss_needs_a_seat_in_the_current_round() -> None:
    _, state = entered(8)
    _, state = run(Start("org", "s1", SALT), state=state)
    with pytest.raises(TournamentStepRefused):
        decide(RecordMiss("nobody", 1), state)
    with pytest.raises(TournamentStepRefused):
        decide(RecordMiss("p3", 2), state)
