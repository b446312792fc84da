"""The views' JSON form comes from their declaration (domain/wire.py): every view of a played
game reads back as the same view, names and types are the declared ones, and a declaration JSON
cannot hold is refused when it is read, not when a reader meets it."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pytest

from bots import get_bot
from domain import CreateGame, Deal, JoinGame, PassCards, Phase, PlayCard, RuleOptions
from domain.commands import ChooseMoonScoring, Command
from domain.decider import decide_and_evolve
from domain.state import INITIAL_STATE, GameState
from domain.views import (
    VIEWS,
    Play,
    PublicView,
    SeatView,
    ShotView,
    TrickView,
    public_view,
    seat_view,
)
from domain.wire import from_json, json_fields, to_json, wire


def _states(seed: int, preset: str) -> list[GameState]:
    """Every state of one game that random bots play to its end."""
    rng = random.Random(seed)
    bot = get_bot("random")
    rules = RuleOptions.from_dict({"preset": preset})
    state = decide_and_evolve(CreateGame("g1", rules, (None,) * rules.players), INITIAL_STATE)[1]
    for seat in range(rules.players):
        state = decide_and_evolve(JoinGame(f"p{seat}", seat), state)[1]
    states = [state]
    while state.phase is not Phase.FINISHED:
        command: Command
        if state.phase is Phase.DEALING:
            command = Deal(seed=str(rng.random()))
        elif state.phase is Phase.PASSING:
            assert state.hand is not None
            seat = next(s for s, p in enumerate(state.hand.passed) if p is None)
            command = PassCards(seat, bot.choose_pass(seat_view(state, seat), rules, "s"))
        elif state.phase is Phase.PLAYING:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            command = PlayCard(seat, bot.choose_play(seat_view(state, seat), rules, "s"))
        else:
            assert state.moon_shooter is not None
            seat = state.moon_shooter
            choice = bot.choose_moon_scoring(seat_view(state, seat), rules, "s")
            command = ChooseMoonScoring(seat, choice)
        state = decide_and_evolve(command, state)[1]
        states.append(state)
    return states


@pytest.mark.parametrize("preset", ["standard", "omnibus"])
def test_every_view_of_a_game_reads_back_as_itself(preset: str) -> None:
    for state in _states(3, preset)[::3]:
        public = public_view(state)
        assert from_json(PublicView, json.loads(json.dumps(public.to_dict()))) == public
        for seat in range(len(state.seats)):
            view = seat_view(state, seat)
            assert from_json(SeatView, json.loads(json.dumps(view.to_dict()))) == view


def test_the_json_names_are_the_declared_ones() -> None:
    trick = TrickView(1, 2, (Play(2, "QS"), Play(3, "2S")), winner=2, points=13)  # type: ignore[arg-type]
    assert to_json(trick) == {
        "number": 1,
        "leader": 2,
        "cards": [{"seat": 2, "card": "QS"}, {"seat": 3, "card": "2S"}],  # wire("cards")
        "winner": 2,
        "points": 13,
    }
    assert to_json(ShotView("sun", 52)) == {"kind": "sun", "points": 52}
    names = [f.name for f in json_fields(*VIEWS["SeatView"])]
    assert names[0] == "id" and "public" not in names  # SeatView.public is flattened
    assert names[-6:] == ["version", "arranged", "imported", "clock", "next_deal", "imported_from"]


def test_a_name_declared_twice_in_one_json_object_is_refused() -> None:
    @dataclass(frozen=True)
    class Twice:
        public: PublicView = wire(flatten=True)
        phase: str = wire("turn")

    with pytest.raises(TypeError, match=r"\['turn'\] declared twice"):
        json_fields(Twice)


def test_a_type_json_cannot_hold_is_refused_by_name() -> None:
    @dataclass(frozen=True)
    class Odd:
        when: complex

    with pytest.raises(TypeError, match="complex"):
        to_json(Odd(1j))
