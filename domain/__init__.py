"""The rules of Hearts: pure, no I/O. ``decide(command, state) -> events``, ``evolve``, views."""

from .cards import DECK, Card, InvalidCard, Suit, parse_cards, sort_cards
from .commands import (
    ChooseMoonScoring,
    Command,
    CreateGame,
    Deal,
    JoinGame,
    PassCards,
    PlayCard,
    SetSeatBot,
)
from .decider import (
    apply,
    decide,
    decide_and_evolve,
    draft,
    evolve,
    first_leader,
    fold,
    is_terminal,
    needed,
)
from .errors import RuleViolation
from .events import EVENT_TYPES, Event, event_from_dict, event_to_dict, event_type
from .legal import legal_plays, play_violation
from .rules import PRESETS, MoonScoring, PassDirection, RuleOptions
from .state import INITIAL_STATE, GameState, HandState, Phase, SeatInfo
from .views import awaiting, public_view, seat_view

__all__ = [
    "DECK",
    "EVENT_TYPES",
    "INITIAL_STATE",
    "PRESETS",
    "Card",
    "ChooseMoonScoring",
    "Command",
    "CreateGame",
    "Deal",
    "Event",
    "GameState",
    "HandState",
    "InvalidCard",
    "JoinGame",
    "MoonScoring",
    "PassCards",
    "PassDirection",
    "Phase",
    "PlayCard",
    "RuleOptions",
    "RuleViolation",
    "SeatInfo",
    "SetSeatBot",
    "Suit",
    "apply",
    "awaiting",
    "decide",
    "decide_and_evolve",
    "draft",
    "is_terminal",
    "event_from_dict",
    "event_to_dict",
    "event_type",
    "evolve",
    "first_leader",
    "fold",
    "legal_plays",
    "needed",
    "parse_cards",
    "play_violation",
    "public_view",
    "seat_view",
    "sort_cards",
]
