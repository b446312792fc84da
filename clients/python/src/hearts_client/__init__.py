"""A typed Python client for the hearts server's HTTP API."""

from .client import DEFAULT_LEVEL, LEVELS, HeartsClient, Player, Seat
from .errors import HeartsProblem, RateLimited

__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "HeartsClient",
    "HeartsProblem",
    "Player",
    "RateLimited",
    "Seat",
]
