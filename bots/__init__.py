"""Bots: strategies that play a seat from what that seat may see, and nothing else.

A bot is handed a ``SeatView`` (the seat's own hand, legal cards, the tricks so far, scores) and
the rule options; it never receives the game state, so it cannot see another seat's cards.
Every choice takes a seed, so the same seed gives the same choice.
"""

from __future__ import annotations

from .base import Bot, UnknownBot, bot_names, get_bot
from .commands import bot_command

__all__ = ["Bot", "UnknownBot", "bot_command", "bot_names", "get_bot"]
