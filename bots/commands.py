"""A bot's choice as a command: the one place a strategy's answer becomes a move.

The service's bot runner, the tournament and the self-play benchmark all drive bots through
``bot_command``, so a bot plays the same move for the same state and seed wherever it runs.
"""

from __future__ import annotations

from domain.commands import ChooseMoonScoring, Command, PassCards, PlayCard
from domain.state import GameState, Phase
from domain.views import seat_view

from .base import Bot


def bot_command(bot: Bot, state: GameState, seat: int, seed: str) -> Command:
    """What ``bot`` does for ``seat`` now (a pass, a play or a moon choice), from that seat's
    view only. The command is not checked against the rules: ``decide`` does that."""
    view = seat_view(state, seat)
    if state.phase is Phase.PASSING:
        return PassCards(seat, tuple(bot.choose_pass(view, state.rules, seed)))
    if state.phase is Phase.MOON_CHOICE:
        return ChooseMoonScoring(seat, bot.choose_moon_scoring(view, state.rules, seed))
    return PlayCard(seat, bot.choose_play(view, state.rules, seed))
