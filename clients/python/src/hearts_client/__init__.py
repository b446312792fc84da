"""A typed Python client for the hearts server's HTTP API."""

from .client import HeartsClient, Player, Seat
from .errors import HeartsProblem, RateLimited

__all__ = ["HeartsClient", "HeartsProblem", "Player", "RateLimited", "Seat"]
