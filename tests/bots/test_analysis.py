"""The analysis of a finished hand (bots/analysis.py): marks, secrecy, determinism."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest

from bots.analysis import (
    AnalysisBudget,
    HandNotFinished,
    analyse_hand,
    evaluate_play,
)
from bots.base import get_bot
from bots.commands import bot_command
from domain import events as e
from domain.cards import Card, cards_of
from domain.commands import Command, CreateGame, Deal, PlayCard
from domain.decider import decide_and_evolve
from domain.rules import MoonScoring, RuleOptions
from domain.state import INITIAL_STATE, GameState, Phase
from domain.views import seat_view

SMALL = AnalysisBudget(samples=24)
HOLD = RuleOptions(cards_passed=0)  # no pass: every hand is played as dealt

Override = Callable[[GameState], Command | None]


def _play_hand(
    rules: RuleOptions,
    seed: str,
    hands: tuple[tuple[Card, ...], ...] | None = None,
    override: Override | None = None,
) -> tuple[list[e.Event], list[GameState]]:
    """One hand played by ``heuristic`` (``override`` may impose a move): its events from the
    game's creation, and the state before each decision."""
    bot = get_bot("heuristic")
    events: list[e.Event] = []
    states: list[GameState] = []

    def apply(state: GameState, command: Command) -> GameState:
        new, state = decide_and_evolve(command, state)
        events.extend(new)
        return state

    state = apply(INITIAL_STATE, CreateGame("g", rules, ("heuristic",) * rules.players))
    state = apply(state, Deal(seed=seed, hands=hands))
    while state.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
        states.append(state)
        command = override(state) if override is not None else None
        if command is None:
            hand = state.hand
            assert hand is not None
            if state.phase is Phase.PASSING:
                seat = next(s for s, p in enumerate(hand.passed) if p is None)
            elif state.phase is Phase.PLAYING:
                assert hand.turn is not None
                seat = hand.turn
            else:
                assert state.moon_shooter is not None
                seat = state.moon_shooter
            command = bot_command(bot, state, seat, f"{seed}/{len(states)}")
        state = apply(state, command)
    return events, states


def test_a_hand_of_forced_or_equal_decisions_marks_nothing() -> None:
    # One suit a seat: the clubs lead every trick and win it, whatever anyone discards.
    suits = tuple(cards_of(0x1FFF << (13 * u)) for u in range(4))
    events, _ = _play_hand(HOLD, "forced", hands=suits)
    analysis = analyse_hand(events, 1, budget=SMALL)
    plays = [d for d in analysis.decisions if d.kind == "play"]
    assert len(plays) == 52
    assert [d for d in analysis.decisions if d.mark] == []
    assert all(d.loss == pytest.approx(0.0, abs=1e-9) for d in analysis.decisions)
    assert all(s.accuracy == 100.0 for s in analysis.seats)


def _queen_blunder(state: GameState) -> Command | None:
    """Last to a spade trick that no higher spade is winning, holding the queen and a spade
    under the winning one: take the trick with the queen."""
    hand = state.hand
    if state.phase is not Phase.PLAYING or hand is None or hand.turn is None:
        return None
    trick = hand.trick
    if len(trick) != state.players - 1 or trick[0][1].index // 13 != 2:
        return None
    top = max(c.index for _, c in trick if c.index // 13 == 2)
    held = hand.held_by(hand.turn)
    queen = 2 * 13 + 10
    if top > queen or not held >> queen & 1 or not held & ((1 << top) - (1 << 26)):
        return None
    return PlayCard(hand.turn, Card("QS"))


def test_taking_the_queen_when_a_safe_card_existed_is_a_blunder() -> None:
    for n in range(300):
        events, _ = _play_hand(HOLD, f"blunder/{n}", override=_queen_blunder)
        planted = [
            ev
            for i, ev in enumerate(events)
            if isinstance(ev, e.CardPlayed)
            and ev.card == Card("QS")
            and isinstance(events[i + 1], e.TrickTaken)
            and events[i + 1].winner == ev.seat  # type: ignore[attr-defined]
        ]
        if planted:
            break
    else:
        pytest.fail("no deal gave the chance to plant the blunder")
    analysis = analyse_hand(events, 1, budget=AnalysisBudget(samples=40))
    queen = [d for d in analysis.decisions if d.kind == "play" and d.played == "QS"]
    assert len(queen) == 1
    decision = queen[0]
    assert decision.seat == planted[0].seat
    assert decision.mark == "blunder", decision
    assert decision.loss > 8.0
    assert decision.best != "QS"
    summary = analysis.seats[decision.seat]
    assert summary.blunders >= 1 and summary.accuracy < 100.0


def _swap_unseen(state: GameState, seat: int) -> GameState | None:
    """The same game for ``seat``: two other seats exchange a card of a suit both still hold
    (so every void stays as it was), a card ``seat`` neither holds nor saw."""
    hand = state.hand
    assert hand is not None
    others = [s for s in range(state.players) if s != seat]
    for a in others:
        for b in others:
            if b <= a:
                continue
            ha, hb = hand.held_by(a), hand.held_by(b)
            for u in range(4):
                suit = 0x1FFF << (13 * u)
                xa, xb = ha & suit, hb & suit
                if xa and xb and xa != xb:
                    ca = xa & -xa
                    cb = (xb & ~xa) & -(xb & ~xa) if xb & ~xa else 0
                    if not cb or ca & hb:
                        continue
                    ha2, hb2 = (ha & ~ca) | cb, (hb & ~cb) | ca
                    cards = hand.cards
                    cards &= ~((((1 << 52) - 1) << (52 * a)) | (((1 << 52) - 1) << (52 * b)))
                    cards |= (ha2 << (52 * a)) | (hb2 << (52 * b))
                    swapped = dataclasses.replace(hand, cards=cards)
                    return dataclasses.replace(state, hand=swapped)
    return None


def test_the_evaluation_reads_only_what_the_seat_could_know() -> None:
    _, states = _play_hand(HOLD, "secrecy")
    checked = 0
    for state in states:
        hand = state.hand
        assert hand is not None
        if state.phase is not Phase.PLAYING or hand.turn is None:
            continue
        seat = hand.turn
        view = seat_view(state, seat)
        if len(view.legal_cards) < 3 or len(hand.tricks) < 3:
            continue
        swapped = _swap_unseen(state, seat)
        if swapped is None:
            continue
        assert seat_view(swapped, seat) == view  # the seat cannot tell the two apart
        assert [swapped.hand.held_by(s) for s in range(4)] != [hand.held_by(s) for s in range(4)]
        played = view.legal_cards[0]
        one = evaluate_play(view, state.rules, played, 4, random.Random("x"), SMALL)
        two = evaluate_play(
            seat_view(swapped, seat), swapped.rules, played, 4, random.Random("x"), SMALL
        )
        assert one == two
        # Other deals (another seed) agree within the intervals.
        three = evaluate_play(
            seat_view(swapped, seat), swapped.rules, played, 4, random.Random("y"), SMALL
        )
        for a, b in zip(
            sorted(one.options, key=lambda o: o.option),
            sorted(three.options, key=lambda o: o.option),
            strict=True,
        ):
            assert abs(a.value - b.value) <= a.half_width + b.half_width + 1e-9
        checked += 1
    assert checked >= 3


def test_the_same_seed_gives_the_same_analysis_and_only_finished_hands() -> None:
    events, _ = _play_hand(RuleOptions(), "seeded")
    # Sameness, not accuracy, is checked: a few deals a decision show it (a hand with passes
    # costs seconds at SMALL's), and the second run reports its progress as it goes.
    few = AnalysisBudget(samples=6)
    one = analyse_hand(events, 1, seed="s", budget=few)
    seen: list[tuple[int, int]] = []
    two = analyse_hand(events, 1, seed="s", budget=few, progress=lambda d, t: seen.append((d, t)))
    assert one.to_dict() == two.to_dict()
    passes = [d for d in one.decisions if d.kind == "pass"]
    assert len(passes) == 4 and all(2 <= len(d.options) <= 6 for d in passes)
    assert all(d.played in [o.option for o in d.options] for d in one.decisions)
    assert seen[-1][0] == seen[-1][1] == len(one.decisions)
    unfinished = [ev for ev in events if not isinstance(ev, e.HandScored | e.GameEnded)]
    with pytest.raises(HandNotFinished):
        analyse_hand(unfinished, 1, budget=SMALL)
    with pytest.raises(HandNotFinished):
        analyse_hand(events, 2, budget=SMALL)


def test_a_budget_in_milliseconds_reads_the_clock_handed_in() -> None:
    events, _ = _play_hand(HOLD, "clock")
    ticks = iter(range(10**6))
    analysis = analyse_hand(
        events,
        1,
        budget=AnalysisBudget(samples=1000, ms=5.0, min_samples=3),
        clock=lambda: next(ticks) / 1000,  # one millisecond a reading
    )
    chosen = [d for d in analysis.decisions if not d.forced and d.kind == "play"]
    assert chosen and all(3 <= d.samples <= 8 for d in chosen)
    with pytest.raises(ValueError):
        analyse_hand(events, 1, budget=AnalysisBudget(ms=5.0))


def test_a_tick_follows_every_sampled_deal() -> None:
    events, _ = _play_hand(HOLD, "ticks")
    ticks: list[int] = []
    # One tick a deal, however many: a few deals a decision show it.
    analysis = analyse_hand(
        events, 1, budget=AnalysisBudget(samples=6), tick=lambda: ticks.append(1)
    )
    sampled = [d for d in analysis.decisions if not d.forced and d.kind == "play"]
    assert len(ticks) == sum(d.samples for d in sampled) > 0


def test_the_moon_choice_is_weighed_exactly() -> None:
    # The clubs take every trick, so seat 0 shoots; the rules let it choose how that scores.
    rules = RuleOptions(cards_passed=0, moon_scoring=MoonScoring.SHOOTERS_CHOICE)
    suits = tuple(cards_of(0x1FFF << (13 * u)) for u in range(4))
    events, _ = _play_hand(rules, "moon", hands=suits)
    analysis = analyse_hand(events, 1, budget=SMALL)
    moon = [d for d in analysis.decisions if d.kind == "moon"]
    assert len(moon) == 1
    decision = moon[0]
    assert decision.seat == 0 and decision.note is not None and "exact" in decision.note
    assert {o.option for o in decision.options} == {
        MoonScoring.ADD_TO_OTHERS.value,
        MoonScoring.SUBTRACT_FROM_SHOOTER.value,
    }
    assert all(o.half_width == 0.0 for o in decision.options)
    assert decision.played in {o.option for o in decision.options}
    assert decision.loss >= 0.0 and decision.mark is None
