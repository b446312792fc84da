"""Player statistics: raw counters (what the projector adds up) and the figures derived from them.

Counters only ever grow by integer increments, so partial sums kept in different places (one per
log partition) merge by addition, in any order. The derived figures (rates and averages) are
computed from the merged counters, never stored.

Figures are kept per *who*: a registered player's seats under ``PLAYER_MARK`` + its player id
(:func:`who`; a name can never start with a control character, so no typed name can be one), a
guest's or a bot's under the name. A guest typing a registered player's name (before it was
registered) thus counts apart from the player.

A *participation* is one seat in one game: a name holding two seats of one game (three ``random``
bots at one table, say) counts once per seat, so every average divides like by like.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .ratings import PlayerRating

PLAYER_MARK = "\x1f"  # starts a registered player's who: names refuse control characters


def who(name: str, player_id: str | None) -> str:
    """Whose figures a seat counts in: the registered player's, else the name's."""
    return PLAYER_MARK + player_id if player_id else name


def player_of(who: str) -> str | None:
    """The player id of a registered player's who; None for a guest's or a bot's name."""
    return who[len(PLAYER_MARK) :] if who.startswith(PLAYER_MARK) else None


# The counters, in the order they are shown. Each is the sum over participations of:
COUNTERS: tuple[str, ...] = (
    "games_played",  # games started (first hand dealt) with the player in a seat
    "games_finished",  # of those, games that ended
    "wins",  # finished games the seat won (a shared win counts as a win)
    "final_score_sum",  # final totals of finished games
    "hands_played",  # hands scored
    "points_sum",  # score changes of those hands (moon and sun scoring applied)
    "points_taken_sum",  # points taken in those hands, as taken (before moon scoring)
    "moons_shot",
    "suns_shot",
    "qs_taken",  # tricks taken holding the queen of spades
    "hearts_taken",  # cards of the penalty suit taken (hearts, or diamonds if those are penalty)
    "timeouts",  # decisions whose turn clock ran out (the timeout bot moved instead)
)


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
        return self.rating.rating if self.rating is not None else None

    def count(self, counter: str) -> int:
        return int(self.counters.get(counter, 0))

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
        return PlayerStats(
            self.name, add_counters(self.counters, other.counters), self.rating or other.rating
        )

    def to_dict(self) -> dict[str, Any]:
        rating = self.rating
        return {
            "name": self.name,
            **self.figures(),
            "mu": rating.mu if rating is not None else None,
            "sigma": rating.sigma if rating is not None else None,
            "rated_games": rating.games if rating is not None else 0,
            "rated_opponents": rating.opponents if rating is not None else 0,
            "provisional": rating.provisional if rating is not None else True,
        }


def add_counters(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0) + value
    return out


def merge_stats(parts: Iterable[PlayerStats]) -> dict[str, PlayerStats]:
    """Partial statistics (e.g. one per partition) summed per name."""
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
        mine[delta.counter] = mine.get(delta.counter, 0) + delta.amount
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
