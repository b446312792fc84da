"""The turn clock (issue 19): when each seat must have decided, from the log alone.

Time is an input. The service records when each event was appended (its envelope's ``time``);
the clock is a fold of the events *with those times*, so any reader of a log (the service, the
audit, an independent verifier) computes the same deadlines from it.

- A seat's decision (a pass, a play, the moon choice) starts when an event makes the seat one of
  those the game awaits (``domain.views.awaiting``) while its own player holds it. A seat a bot
  plays (handed over, or away) has no clock.
- Its deadline is that start plus ``seconds_per_decision`` plus what is left of its reserve.
  A seat that decides late spends the time over ``seconds_per_decision`` from its reserve.
- When a deadline passes, the service asks ``TimeOut(seat, at)``; :func:`decide_timeout`
  checks it against the clock and emits ``SeatTimedOut`` (the reserve is spent), and after
  ``timeouts_until_away`` timeouts in a row also ``SeatControlChanged`` to the rules'
  ``timeout_bot``: the seat is away, its bot plays on until ``ReturnToSeat``. The timed-out
  move itself is the timeout bot's, decided by the service as the events that follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from .commands import TimeOut
from .errors import InvalidCommand, NotYourTurn, TimeNotUp
from .events import (
    CardPlayed,
    CardsPassed,
    Event,
    GameCreated,
    MoonScoringChosen,
    SeatControlChanged,
    SeatTimedOut,
)
from .state import GameState, Phase
from .views import ClockView, SeatClock, awaiting


def moment(at: str) -> float:
    """Seconds since the Unix epoch of an ISO-8601 time with its zone (as envelopes write it)."""
    try:
        parsed = datetime.fromisoformat(at)
    except (TypeError, ValueError):
        raise InvalidCommand(f"not an ISO-8601 time: {at!r}") from None
    if parsed.tzinfo is None:
        raise InvalidCommand(f"a time names its zone: {at!r}")
    return parsed.timestamp()


@dataclass(frozen=True, slots=True)
class Clock:
    """Per seat: when its decision began (None: nothing to decide, or a bot decides), the
    reserve seconds it has left, its timeouts in a row and in all."""

    started: tuple[float | None, ...]
    reserve: tuple[float, ...]
    in_a_row: tuple[int, ...]
    timeouts: tuple[int, ...]
    # The seat whose next move is the timeout bot's (set by SeatTimedOut, cleared by the move):
    # that move neither spends its reserve nor counts as the seat deciding in time.
    standing_in: int | None = None

    @classmethod
    def start(cls, players: int, reserve_seconds: int) -> Clock:
        return cls(
            (None,) * players, (float(reserve_seconds),) * players, (0,) * players, (0,) * players
        )


def _deciding(state: GameState) -> set[int]:
    """The seats whose own player must decide now."""
    return {s for s in awaiting(state) if state.seats[s].bot is None}


def _actor(event: Event) -> int | None:
    if isinstance(event, CardsPassed | CardPlayed | MoonScoringChosen):
        return event.seat
    return None


def tick(clock: Clock | None, state: GameState, event: Event, at: float) -> Clock | None:
    """The clock after ``event``, appended at ``at`` (seconds), ``state`` being the game just
    after it. None for a game without a clock."""
    if isinstance(event, GameCreated):
        rules = event.rules
        return Clock.start(rules.players, rules.reserve_seconds) if rules.clocked else None
    if clock is None:
        return None
    rules = state.rules
    reserve, in_a_row, timeouts = list(clock.reserve), list(clock.in_a_row), list(clock.timeouts)
    standing_in = clock.standing_in
    if isinstance(event, SeatTimedOut):
        seat = event.seat
        reserve[seat] = 0.0
        in_a_row[seat] += 1
        timeouts[seat] += 1
        standing_in = seat
    elif isinstance(event, SeatControlChanged) and event.bot is None:
        in_a_row[event.seat] = 0  # back at the table
    else:
        seat = _actor(event)
        if seat is not None:
            if standing_in == seat:
                standing_in = None  # the timeout bot's move
            else:
                began = clock.started[seat]
                if began is not None:
                    over = max(0.0, at - began - rules.seconds_per_decision)
                    reserve[seat] = max(0.0, reserve[seat] - over)
                in_a_row[seat] = 0
    deciding = _deciding(state)
    started = tuple(
        (began if began is not None else at) if s in deciding else None
        for s, began in enumerate(clock.started)
    )
    return Clock(started, tuple(reserve), tuple(in_a_row), tuple(timeouts), standing_in)


def deadline(clock: Clock | None, state: GameState, seat: int) -> float | None:
    """When ``seat`` must have decided (seconds since the epoch), or None if it has nothing to
    decide against the clock."""
    if clock is None or state.phase in (Phase.FINISHED, Phase.EXPIRED):
        return None
    began = clock.started[seat] if 0 <= seat < len(clock.started) else None
    if began is None or seat not in _deciding(state):
        return None
    return began + state.rules.seconds_per_decision + clock.reserve[seat]


def deadlines(clock: Clock | None, state: GameState) -> dict[int, float]:
    """Every seat's deadline that runs now."""
    if clock is None:
        return {}
    found = {s: deadline(clock, state, s) for s in range(len(clock.started))}
    return {s: d for s, d in found.items() if d is not None}


def next_deadline(clock: Clock | None, state: GameState) -> float | None:
    """The first deadline to pass, if any runs."""
    return min(deadlines(clock, state).values(), default=None)


def decide_timeout(
    command: TimeOut, state: GameState, clock: Clock | None, *, check_deadline: bool = True
) -> list[Event]:
    """The events of a timeout: ``SeatTimedOut``, and ``SeatControlChanged`` to the rules'
    timeout bot once the seat has timed out ``timeouts_until_away`` times in a row. Raises
    (emitting nothing) if the game has no clock, the seat has nothing to decide, or its
    deadline has not passed at ``command.at``. ``check_deadline=False``: for a copy whose
    times are not the original ones (an import, whose source's audit checked the deadlines)."""
    if clock is None or not state.rules.clocked:
        raise InvalidCommand("this game has no turn clock")
    seat = command.seat
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state.players:
        raise InvalidCommand(f"seats are 0 to {state.players - 1}")
    due = deadline(clock, state, seat)
    if due is None:
        raise NotYourTurn(f"seat {seat} has nothing to decide against the clock")
    if check_deadline and moment(command.at) < due:
        raise TimeNotUp(f"seat {seat}'s time runs until {due:.3f}")
    events: list[Event] = [SeatTimedOut(seat, command.at)]
    if clock.in_a_row[seat] + 1 >= state.rules.timeouts_until_away:
        events.append(SeatControlChanged(seat, state.rules.timeout_bot))
    return events


def clock_view(clock: Clock | None, state: GameState) -> ClockView | None:
    """What a view shows of the clock (anyone may see it): the per-decision seconds, each
    seat's reserve, deadline (ISO-8601 UTC, None if its clock does not run) and timeouts."""
    if clock is None:
        return None
    due = deadlines(clock, state)
    return ClockView(
        seconds_per_decision=state.rules.seconds_per_decision,
        seats=tuple(
            SeatClock(
                seat=s,
                reserve_seconds=round(clock.reserve[s], 3),
                deadline=iso(due[s]) if s in due else None,
                timeouts=clock.timeouts[s],
                timeouts_in_a_row=clock.in_a_row[s],
                away=state.seats[s].player and state.seats[s].bot is not None,
            )
            for s in range(len(clock.started))
        ),
    )


def iso(seconds: float) -> str:
    """ISO-8601 UTC (as envelopes write times) of seconds since the epoch."""
    when = datetime.fromtimestamp(seconds, UTC)
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")
