"""Player statistics: raw counters (what the projector adds up) and the figures derived from them.

Each counter declares, in ``COUNTER_MERGES``, how partial values kept in different places (one
per log partition) combine: ``sum`` for the counts (addition, in any order), ``max`` or ``min``
for a best or worst, ``latest`` for the value counted last, ``set`` for the union of what was
counted. ``merge_counters`` is the one merge every read path uses. The derived
figures (rates and averages) are computed from the merged counters, never stored.

Figures are kept per *who*: a registered player's seats under ``PLAYER_MARK`` + its player id
(:func:`who`; a name can never start with a control character, so no typed name can be one), a
guest's or a bot's under the name. A guest typing a registered player's name (before it was
registered) thus counts apart from the player.

A *participation* is one seat in one game: a name holding two seats of one game (three ``random``
bots at one table, say) counts once per seat, so every average divides like by like.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from .ratings import PlayerRating

PLAYER_MARK = "\x1f"  # starts a registered player's who: names refuse control characters


def who(name: str, player_id: str | None) -> str:
    """Whose figures a seat counts in: the registered player's, else the name's."""
    return PLAYER_MARK + player_id if player_id else name


def player_of(who: str) -> str | None:
    """The player id of a registered player's who; None for a guest's or a bot's name."""
    return who[len(PLAYER_MARK) :] if who.startswith(PLAYER_MARK) else None


class Merge(StrEnum):
    """How a counter's partial values (one per partition) combine into the player's figure."""

    SUM = "sum"  # a count: the parts add up
    MAX = "max"  # a best: the largest part
    MIN = "min"  # a worst (or first): the smallest part
    # The value counted last: each part is a value and when it was counted, packed by
    # ``latest(when, value)``; the merge keeps the later (``count`` gives its value back).
    LATEST = "latest"
    # Which of some small numbers (0 to 52: a seat, a player count, a card) were ever counted: a
    # bit mask of ``member(n)``; the merge is the union (``members`` lists them).
    SET = "set"


_COMBINE: dict[Merge, Callable[[int, int], int]] = {
    Merge.SUM: operator.add,
    Merge.MAX: max,
    Merge.MIN: min,
    Merge.LATEST: max,  # the packed part with the later time is the greater
    Merge.SET: operator.or_,
}

# The operation the store applies to a part, as generic as the store is (service/store/
# read_models.py knows no counter and no merge but these): a latest is the greater packed part.
STORE_OPERATION: dict[Merge, str] = {
    Merge.SUM: "sum",
    Merge.MAX: "max",
    Merge.MIN: "min",
    Merge.LATEST: "max",
    Merge.SET: "or",
}

# A latest part: the time (whole seconds since the epoch) above, the value (offset so a negative
# one packs too) in the low bits; under 2**53, so Redis's Lua compares it exactly.
_VALUE_BITS = 21
_VALUE_OFFSET = 1 << (_VALUE_BITS - 1)
MAX_SET_MEMBER = 52


def latest(when: float, value: int) -> int:
    """A part of a ``Merge.LATEST`` counter: ``value`` (under 2**20 either way), counted at
    ``when`` (seconds since the epoch); the merge keeps the part counted later."""
    if not -_VALUE_OFFSET <= value < _VALUE_OFFSET:
        raise ValueError(f"a latest value is under 2**20 either way, not {value}")
    return (int(when) << _VALUE_BITS) | (value + _VALUE_OFFSET)


def latest_value(part: int) -> int:
    """The value of a packed latest part."""
    return (part & ((1 << _VALUE_BITS) - 1)) - _VALUE_OFFSET


def member(n: int) -> int:
    """A part of a ``Merge.SET`` counter: the set of ``n`` alone."""
    if not 0 <= n <= MAX_SET_MEMBER:
        raise ValueError(f"a set counter holds 0 to {MAX_SET_MEMBER}, not {n}")
    return 1 << n


def members(mask: int) -> frozenset[int]:
    """The numbers of a set counter's mask."""
    return frozenset(n for n in range(MAX_SET_MEMBER + 1) if mask >> n & 1)


# The counters, in the order they are shown, each with its merge: the one place a counter is
# declared. Each sum is over participations of:
COUNTER_MERGES: dict[str, Merge] = {
    "games_played": Merge.SUM,  # games started (first hand dealt) with the player in a seat
    "games_finished": Merge.SUM,  # of those, games that ended
    "wins": Merge.SUM,  # finished games the seat won (a shared win counts as a win)
    "final_score_sum": Merge.SUM,  # final totals of finished games
    "hands_played": Merge.SUM,  # hands scored
    "points_sum": Merge.SUM,  # score changes of those hands (moon and sun scoring applied)
    "points_taken_sum": Merge.SUM,  # points taken in those hands, as taken (before moon scoring)
    "moons_shot": Merge.SUM,
    "suns_shot": Merge.SUM,
    "qs_taken": Merge.SUM,  # tricks taken holding the queen of spades
    "hearts_taken": Merge.SUM,  # cards of the penalty suit taken (hearts, or diamonds)
    "timeouts": Merge.SUM,  # decisions whose turn clock ran out (the timeout bot moved instead)
    # The longest run of consecutive hands of one game in which the seat took no point: the best
    # of the runs, wherever their games' partitions are.
    "longest_clean_streak": Merge.MAX,
}
COUNTERS: tuple[str, ...] = tuple(COUNTER_MERGES)


def merge_counters(parts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Partial counters (one mapping per partition, or per batch) combined as each counter
    declares; a counter no part holds stays absent."""
    out: dict[str, int] = {}
    for part in parts:
        for counter, value in part.items():
            seen = out.get(counter)
            out[counter] = value if seen is None else _COMBINE[COUNTER_MERGES[counter]](seen, value)
    return out


@dataclass(frozen=True, slots=True)
class StatDelta:
    """Add ``amount`` to the counter ``counter`` of player ``name``."""

    name: str
    counter: str
    amount: int


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass(frozen=True, slots=True)
class PlayerStats:
    name: str  # the who (see :func:`who`)
    counters: Mapping[str, int] = field(default_factory=dict)
    rating: PlayerRating | None = None  # a registered player's, once rated (added at read time)

    @property
    def player_id(self) -> str | None:
        return player_of(self.name)

    @property
    def conservative_rating(self) -> float | None:
        # None before a counted game (a player can be flagged before one counted for it).
        return self.rating.rating if self.rating is not None and self.rating.games else None

    def count(self, counter: str) -> int:
        """The counter's value: a sum, an extreme, the latest value (0 before any), or a set's
        mask (``members`` reads it)."""
        value = int(self.counters.get(counter, 0))
        if value and COUNTER_MERGES.get(counter) is Merge.LATEST:
            return latest_value(value)
        return value

    @property
    def win_rate(self) -> float | None:
        """Wins per finished game (None before the first finished game)."""
        return _ratio(self.count("wins"), self.count("games_finished"))

    @property
    def average_final_score(self) -> float | None:
        return _ratio(self.count("final_score_sum"), self.count("games_finished"))

    @property
    def average_points_per_hand(self) -> float | None:
        """Mean score change per hand played (what the hand added to the total)."""
        return _ratio(self.count("points_sum"), self.count("hands_played"))

    def figure(self, name: str) -> int | float | None:
        return FIGURES[name].value(self)

    def figures(self) -> dict[str, int | float | None]:
        return {name: figure.value(self) for name, figure in FIGURES.items()}

    def merged(self, other: PlayerStats) -> PlayerStats:
        counters = merge_counters((self.counters, other.counters))
        return PlayerStats(self.name, counters, self.rating or other.rating)

    def to_dict(self) -> dict[str, Any]:
        rating = self.rating
        return {
            "name": self.name,
            **self.figures(),
            "mu": rating.mu if rating is not None and rating.games else None,
            "sigma": rating.sigma if rating is not None and rating.games else None,
            "rated_games": rating.games if rating is not None else 0,
            "rated_opponents": rating.opponents if rating is not None else 0,
            "weighted_games": rating.weight if rating is not None else 0.0,
            "provisional": rating.provisional if rating is not None else True,
            "flagged": rating is not None and rating.flagged is not None,
        }


def merge_stats(parts: Iterable[PlayerStats]) -> dict[str, PlayerStats]:
    """Partial statistics (e.g. one per partition) merged per name (``merge_counters``)."""
    merged: dict[str, PlayerStats] = {}
    for part in parts:
        seen = merged.get(part.name)
        merged[part.name] = part if seen is None else seen.merged(part)
    return merged


def apply_deltas(
    stats: Mapping[str, PlayerStats], deltas: Iterable[StatDelta]
) -> dict[str, PlayerStats]:
    """``stats`` with ``deltas`` added (a pure reference of what the projector stores)."""
    counters: dict[str, dict[str, int]] = {n: dict(s.counters) for n, s in stats.items()}
    for delta in deltas:
        mine = counters.setdefault(delta.name, {})
        mine.update(merge_counters((mine, {delta.counter: delta.amount})))
    return {name: PlayerStats(name, c) for name, c in counters.items()}


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure the leaderboard sorts by; ``better`` says which end is the top."""

    name: str
    better: Literal["high", "low"]
    counter: str | None = None  # a plain counter, or None for a derived figure

    def value(self, stats: PlayerStats) -> int | float | None:
        if self.counter is not None:
            return stats.count(self.counter)
        return getattr(stats, self.name)


_SHOWN_COUNTERS = {
    "games_played": "high",
    "games_finished": "high",
    "wins": "high",
    "hands_played": "high",
    "moons_shot": "high",
    "suns_shot": "high",
    "qs_taken": "low",
    "hearts_taken": "low",
    "timeouts": "low",
    "longest_clean_streak": "high",
}

FIGURES: dict[str, Figure] = {
    **{
        name: Figure(name, better, counter=name)  # type: ignore[arg-type]
        for name, better in _SHOWN_COUNTERS.items()
    },
    # The conservative rating (mu - 3 sigma); None for a player never rated (guests, bots).
    "rating": Figure("conservative_rating", "high"),
    "win_rate": Figure("win_rate", "high"),
    # In Hearts points are bad: a low average is the better one.
    "average_final_score": Figure("average_final_score", "low"),
    "average_points_per_hand": Figure("average_points_per_hand", "low"),
}

assert all(f.counter is None or f.counter in COUNTERS for f in FIGURES.values())
