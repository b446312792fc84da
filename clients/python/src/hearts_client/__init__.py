"""A typed Python client for the hearts server's HTTP API."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import DEFAULT_LEVEL, LEVELS, HeartsClient, Player, Seat
    from .errors import HeartsProblem, RateLimited

# Imported when first asked for: the server and the verifier use this package's merkle, tiles
# and note modules, and importing the client with them brought httpx in (~0.3 s a process).
_FROM = {
    "DEFAULT_LEVEL": ".client",
    "LEVELS": ".client",
    "HeartsClient": ".client",
    "Player": ".client",
    "Seat": ".client",
    "HeartsProblem": ".errors",
    "RateLimited": ".errors",
}


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "HeartsClient",
    "HeartsProblem",
    "Player",
    "RateLimited",
    "Seat",
]
