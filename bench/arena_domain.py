"""Our rules engine on a finished hand: the same deal, passes and plays through ``decide``."""

from __future__ import annotations

from typing import Any

from bench.randomplay import execute, new_game
from domain.cards import Card
from domain.commands import Deal, PassCards, PlayCard
from domain.legal import legal_cards
from domain.rules import RuleOptions
from domain.state import GameState


class DomainHand:
    """One hand replayed in the pure domain, to compare its legal cards and points with
    OpenSpiel's at every play (``replay_record``)."""

    def __init__(
        self, rules: dict[str, Any], dealt: list[list[str]], passes: list[list[str]] | None
    ) -> None:
        self.rules = RuleOptions.from_dict(rules)
        self.state: GameState = new_game("arena-replay", self.rules)
        hands = tuple(tuple(Card(c) for c in hand) for hand in dealt)
        execute(self.state, Deal(seed="arena", hands=hands))
        for seat, cards in enumerate(passes or ()):
            execute(self.state, PassCards(seat, tuple(Card(c) for c in cards)))

    def legal(self, seat: int) -> set[str]:
        hand = self.state.hand
        assert hand is not None
        return {str(c) for c in legal_cards(self.rules, hand, seat)}

    def play(self, seat: int, card: str) -> None:
        execute(self.state, PlayCard(seat, Card(card)))

    def points(self) -> list[int]:
        """Each seat's points for the hand (the game's scores: it was one hand)."""
        return list(self.state.scores)
