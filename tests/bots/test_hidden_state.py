"""A bot cannot reach another seat's cards: it is handed a SeatView, which holds none.

Everything reachable from a seat's view (following every reference, as a bot could) is walked:
no game or hand state is among it, and the only cards in it are the seat's own hand, the cards
played so far, and the cards it passed and received.
"""

from __future__ import annotations

import gc
import types

from bots.tournament import play_game
from domain.cards import Card
from domain.decider import fold
from domain.rules import MoonScoring, RuleOptions
from domain.state import CompletedTrick, GameState, HandState, SeatInfo
from domain.views import SeatView

_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)


def reachable(root: object) -> list[object]:
    """Every object reachable from ``root`` through references (classes and modules aside)."""
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _OPAQUE):
            continue
        seen[id(obj)] = obj
        stack.extend(gc.get_referents(obj))
        for name in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, name):
                stack.append(getattr(obj, name))
    return list(seen.values())


class Inspector:
    """A bot that plays the first legal card and inspects every view it is handed."""

    name = "inspector"

    def __init__(self) -> None:
        self.views = 0

    def inspect(self, view: SeatView) -> None:
        assert type(view) is SeatView
        objects = reachable(view)
        forbidden = (GameState, HandState, CompletedTrick, SeatInfo)
        assert not [o for o in objects if isinstance(o, forbidden)]
        public = {c for t in view.public.tricks for _, c in t.plays}
        public |= {c for _, c in view.public.current_trick}
        public |= {o for o in reachable(view.public.rules) if isinstance(o, Card)}  # bonus card
        own = set(view.hand) | set(view.passed_cards or ()) | set(view.received_cards)
        cards = {o for o in objects if isinstance(o, Card)}
        assert cards <= own | public, cards - own - public
        self.views += 1

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        self.inspect(view)
        return view.legal_cards[: view.cards_to_pass]

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        self.inspect(view)
        return view.legal_cards[0]

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        self.inspect(view)
        return MoonScoring.ADD_TO_OTHERS


def test_reachable_finds_cards_inside_a_state() -> None:
    """The walk itself works: from a game state it does reach every seat's cards."""
    game = play_game("walk", RuleOptions(), ["heuristic"] * 4, "d", max_hands=1, keep_events=True)
    state = fold(game.events[:2])  # created, dealt
    assert state.hand is not None
    cards = {o for o in reachable(state) if isinstance(o, Card)}
    assert len(cards) == 52


def test_views_handed_to_bots_hold_only_what_the_seat_may_see() -> None:
    inspector = Inspector()
    rules = RuleOptions.from_dict({"preset": "omnibus", "kitty": True, "score_limit": 20})
    lineup = ["inspector", "heuristic", "random", "heuristic"]
    play_game("hidden", rules, lineup, "deal", bots={"inspector": inspector}, max_hands=2)
    assert inspector.views > 20
