"""The turn clock: given events appended at given times, when a timeout, then events (or not).

Time is an input: each event is folded with the time it was appended (seconds here), as the
service folds its envelopes' times; nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from domain.clock import Clock, clock_view, deadline, decide_timeout, iso, next_deadline, tick
from domain.commands import ReturnToSeat, SetSeatBot, TimeOut
from domain.decider import apply, decide, draft
from domain.errors import InvalidCommand, InvalidRules, NotAway, NotYourTurn, TimeNotUp
from domain.events import Event, SeatControlChanged, SeatTimedOut
from domain.rules import TIME_CONTROLS, RuleOptions
from domain.state import GameState, Phase
from tests.domain.given import HOLD, Story, opts, play_card, seated

T0 = 1_800_000_000.0  # an append time, in seconds since the epoch
QUICK = opts(pass_cycle="hold_always", time_control="quick")  # 15 s a decision + 60 s reserve


class Timed:
    """A game's events with the time each was appended, and the state and clock they fold to."""

    def __init__(self, story: Story, at: float = T0) -> None:
        self.state: GameState = draft(Story.of([]).state)
        self.clock: Clock | None = None
        self.events: list[Event] = []
        self.add(story.events, at)

    def add(self, events: Iterable[Event], at: float) -> Timed:
        for event in events:
            apply(self.state, event)
            self.clock = tick(self.clock, self.state, event, at)
            self.events.append(event)
        return self

    def do(self, command: object, at: float) -> Timed:
        return self.add(decide(command, self.state), at)  # type: ignore[arg-type]

    def time_out(self, seat: int, at: float) -> list[Event]:
        events = decide_timeout(TimeOut(seat, iso(at)), self.state, self.clock)
        self.add(events, at)
        return events


def dealt(rules: RuleOptions = QUICK) -> Timed:
    return Timed(seated(rules).deal(None, None, None, None))


def test_a_game_without_a_clock_has_no_deadline():
    game = Timed(seated(HOLD).deal(None, None, None, None))
    assert game.clock is None
    assert next_deadline(game.clock, game.state) is None
    assert clock_view(game.clock, game.state) is None
    with pytest.raises(InvalidCommand, match="no turn clock"):
        decide_timeout(TimeOut(0, iso(T0 + 10_000)), game.state, game.clock)


def test_the_seat_to_act_has_its_decision_time_plus_its_reserve():
    game = dealt()
    assert game.state.hand.turn == 0  # dealt the clubs: holds 2C
    assert deadline(game.clock, game.state, 0) == T0 + 15 + 60
    assert deadline(game.clock, game.state, 1) is None  # not its turn
    view = clock_view(game.clock, game.state)
    assert view is not None and view.seconds_per_decision == 15
    assert view.seats[0].deadline == iso(T0 + 75)
    assert view.seats[0].reserve_seconds == 60


def test_a_timeout_before_the_deadline_is_refused_and_after_it_is_recorded():
    game = dealt()
    with pytest.raises(TimeNotUp):
        decide_timeout(TimeOut(0, iso(T0 + 74.9)), game.state, game.clock)
    with pytest.raises(NotYourTurn):
        decide_timeout(TimeOut(1, iso(T0 + 500)), game.state, game.clock)
    assert game.time_out(0, T0 + 75) == [SeatTimedOut(0, iso(T0 + 75))]
    assert game.clock.reserve[0] == 0  # the reserve is spent
    assert game.clock.timeouts[0] == 1


def test_a_late_move_spends_the_reserve_and_the_next_decision_starts_when_the_turn_comes():
    game = dealt().do(play_card(0, "2C"), T0 + 40)  # 25 s over its 15
    assert game.clock.reserve[0] == 35
    assert game.clock.in_a_row[0] == 0
    # Seat 1's decision began when seat 0 played.
    assert deadline(game.clock, game.state, 1) == T0 + 40 + 15 + 60


def test_a_move_in_time_keeps_the_reserve():
    game = dealt().do(play_card(0, "2C"), T0 + 14)
    assert game.clock.reserve[0] == 60


def test_the_timeout_bots_move_after_a_timeout_spends_nothing_and_does_not_reset_the_count():
    game = dealt()
    game.time_out(0, T0 + 75)
    game.do(play_card(0, "2C"), T0 + 75)  # the timeout bot's move, in the same append
    assert game.clock.in_a_row[0] == 1
    assert game.clock.standing_in is None


def test_timeouts_in_a_row_mark_the_seat_away_and_its_bot_plays_on():
    rules = opts(pass_cycle="hold_always", seconds_per_decision=10, timeouts_until_away=2)
    game = dealt(rules)
    game.time_out(0, T0 + 10)
    game.do(play_card(0, "2C"), T0 + 10)
    # Round the table, back to seat 0 (the others play in time).
    at = T0 + 11
    while game.state.hand.turn != 0:
        seat = game.state.hand.turn
        legal = sorted(Story.of(game.events).legal(seat), key=str)
        game.do(play_card(seat, str(legal[0])), at)
    assert game.state.phase is Phase.PLAYING  # seat 0 holds every club: it took the trick
    due = deadline(game.clock, game.state, 0)
    assert due == at + 10  # no reserve: the decision time alone
    events = game.time_out(0, due)
    assert events == [SeatTimedOut(0, iso(due)), SeatControlChanged(0, "heuristic")]
    assert game.state.seats[0].bot == "heuristic"
    assert deadline(game.clock, game.state, 0) is None  # a bot plays it: no clock runs
    view = clock_view(game.clock, game.state)
    assert view is not None and view.seats[0].away is True
    # I'm back: the seat is its player's again, and its count starts over.
    game.do(ReturnToSeat(0), due + 5)
    assert game.state.seats[0].bot is None
    assert game.clock.in_a_row[0] == 0
    assert deadline(game.clock, game.state, 0) == due + 5 + 10


def test_back_from_a_seat_nobody_took_away_is_refused():
    game = dealt()
    with pytest.raises(NotAway):
        decide(ReturnToSeat(0), game.state)


def test_a_seat_handed_to_a_bot_has_no_clock_until_taken_back():
    game = dealt().do(SetSeatBot(0, "random"), T0 + 5)
    assert deadline(game.clock, game.state, 0) is None
    game.do(SetSeatBot(0, None), T0 + 30)
    assert deadline(game.clock, game.state, 0) == T0 + 30 + 15 + 60


def test_while_passing_every_seat_that_has_not_passed_has_its_own_deadline():
    game = Timed(seated(opts(time_control="relaxed")).deal_seeded("s"))
    assert game.state.phase is Phase.PASSING
    due = {s: deadline(game.clock, game.state, s) for s in range(4)}
    assert due == dict.fromkeys(range(4), T0 + 60 + 300)


def test_decide_alone_never_decides_a_timeout():
    with pytest.raises(InvalidCommand, match="clock"):
        decide(TimeOut(0, iso(T0)), dealt().state)


def test_time_controls_are_named_presets_and_options_override_them():
    assert RuleOptions.from_dict({"time_control": "relaxed"}).seconds_per_decision == 60
    quick = RuleOptions.from_dict({"time_control": "quick", "reserve_seconds": 5})
    assert (quick.seconds_per_decision, quick.reserve_seconds) == (15, 5)
    assert TIME_CONTROLS["off"] == (0, 0)
    with pytest.raises(InvalidRules, match="time_control"):
        RuleOptions.from_dict({"time_control": "bullet"})
    with pytest.raises(InvalidRules, match="seconds_per_decision"):
        RuleOptions.from_dict({"reserve_seconds": 30})
    with pytest.raises(InvalidRules):
        RuleOptions.from_dict({"time_control": "quick", "timeout_bot": "montecarlo"})


def test_every_timeout_bot_is_a_registered_bot():
    from bots import bot_names
    from domain.rules import TIMEOUT_BOTS

    assert set(TIMEOUT_BOTS) <= set(bot_names())
