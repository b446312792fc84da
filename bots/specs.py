"""A strategy with parameters, written as one word: ``name:key=value:key=value``.

``montecarlo:ms=50`` is montecarlo with 50 ms per decision; ``montecarlo:plays=1000`` with a
budget of 1,000 simulated plays; ``montecarlo:ms=200:max_samples=500:settle_z=0``. A plain name
(``heuristic``) is the registry's bot (``bots.get_bot``). Colons, not commas, so that a lineup
stays a comma-separated list (``hearts simulate --seats montecarlo:ms=50,heuristic,...``).

Self-play and benchmarks take specs; the service's seats take plain names only (a seat's bot
plays the same move for the same state and seed wherever it runs, which a time budget would not).
A time budget reads the clock the caller hands :func:`make_bot`: bots never read the time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .base import Bot, get_bot
from .montecarlo import Budget, Clock, MonteCarloBot


class BadBotSpec(ValueError):
    """A strategy spec that names no bot or a parameter it does not take."""


def _montecarlo(params: dict[str, str], clock: Clock | None) -> Bot:
    types = {f.name: f.type for f in dataclasses.fields(Budget)}
    values: dict[str, Any] = {}
    for key, text in params.items():
        kind = types.get(key)
        if kind is None:
            raise BadBotSpec(f"montecarlo takes {', '.join(types)}, not {key!r}")
        number = float if "float" in str(kind) else int
        try:
            values[key] = number(text)
        except ValueError:
            raise BadBotSpec(f"montecarlo {key}={text!r}: not a number") from None
    try:
        budget = Budget(**values)
    except ValueError as exc:
        raise BadBotSpec(f"montecarlo: {exc}") from None
    if budget.ms is not None and clock is None:
        raise BadBotSpec("montecarlo:ms=... needs a clock, and this caller has none")
    return MonteCarloBot(budget, clock)


# The strategies that take parameters, and how.
_PARAMETERS: dict[str, Callable[[dict[str, str], Clock | None], Bot]] = {
    "montecarlo": _montecarlo,
}


def make_bot(spec: str, clock: Clock | None = None) -> Bot:
    """The bot a spec names. ``clock`` (seconds, e.g. ``time.process_time``) is what a time
    budget is read on. UnknownBot for an unknown name, BadBotSpec for bad parameters."""
    name, colon, rest = spec.partition(":")
    if not colon:
        return get_bot(spec)
    get_bot(name)  # UnknownBot if there is no such strategy at all
    parse = _PARAMETERS.get(name)
    if parse is None:
        raise BadBotSpec(f"{name} takes no parameters")
    params: dict[str, str] = {}
    for part in rest.split(":"):
        key, equals, value = part.partition("=")
        if not equals or not key or not value:
            raise BadBotSpec(f"{spec!r}: parameters are key=value, not {part!r}")
        if key in params:
            raise BadBotSpec(f"{spec!r}: {key} given twice")
        params[key] = value
    return parse(params, clock)
