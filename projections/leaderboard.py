"""Leaderboard ordering and keyset pagination, over merged player statistics.

Players are ordered by one figure, best first by default (most wins, lowest average score ...),
then by name. A player with no value for the figure (an average before any finished game) comes
last whatever the direction, most wins first among them. Ranked by rating, the board lists
established ratings only: a provisional rating (too few games, or too few opponents:
:mod:`projections.ratings`) ranks nobody, so a handful of games among a handful of accounts puts
no one on it, and a player flagged for fair play (fed by its opponents) is off it until an
operator clears the flag. A page's cursor names the last row's (value, wins, name), so the next
page starts right after it even if players were added in between.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .stats import FIGURES, PlayerStats

DEFAULT_SORT = "rating"
DEFAULT_LIMIT = 20
MAX_LIMIT = 100


class BadQuery(ValueError):
    """A leaderboard query the caller got wrong; ``code`` names the rule broken."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Order:
    sort: str
    descending: bool

    @property
    def direction(self) -> str:
        return "desc" if self.descending else "asc"


def parse_order(sort: str | None, order: str | None) -> Order:
    """``sort`` is a figure name; ``order`` is ``asc`` or ``desc`` (default: best first)."""
    name = DEFAULT_SORT if sort is None or sort == "" else sort
    figure = FIGURES.get(name)
    if figure is None:
        raise BadQuery(
            "invalid-sort", f"cannot sort by {name!r}; sort by one of {', '.join(FIGURES)}"
        )
    if order is None or order == "":
        return Order(name, figure.better == "high")
    if order not in ("asc", "desc"):
        raise BadQuery("invalid-order", f"order is 'asc' or 'desc', not {order!r}")
    return Order(name, order == "desc")


def parse_limit(raw: str | None) -> int:
    if raw is None or raw == "":
        return DEFAULT_LIMIT
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_LIMIT or not raw.strip().isdigit():
        raise BadQuery("invalid-limit", f"limit is an integer from 1 to {MAX_LIMIT}, not {raw!r}")
    return limit


def _key(order: Order, value: int | float | None, wins: int, name: str) -> tuple:
    if value is None:
        return (1, -wins, name)
    return (0, -value if order.descending else value, name)


def listed(player: PlayerStats, order: Order) -> bool:
    """Whether the player has a row: by rating, only an established rating of a player not
    flagged for fair play (:mod:`projections.ratings`) has one."""
    if order.sort != "rating":
        return True
    rating = player.rating
    return rating is not None and not rating.provisional and rating.flagged is None


def _key_of(order: Order, player: PlayerStats) -> tuple:
    return _key(order, player.figure(order.sort), player.count("wins"), player.name)


def ordered(players: Iterable[PlayerStats], order: Order) -> list[PlayerStats]:
    rows = (p for p in players if listed(p, order))
    return sorted(rows, key=lambda p: _key_of(order, p))


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[PlayerStats]
    start: int  # how many rows come before this page
    next_cursor: str | None
    total: int  # players on the whole leaderboard


def page(players: Iterable[PlayerStats], order: Order, limit: int, cursor: str | None) -> Page:
    rows = ordered(players, order)
    start = 0
    if cursor is not None:
        value, wins, name = decode_cursor(cursor, order)
        after = _key(order, value, wins, name)
        start = next((i for i, p in enumerate(rows) if _key_of(order, p) > after), len(rows))
    chosen = rows[start : start + limit]
    more = start + limit < len(rows)
    last = chosen[-1] if chosen else None
    next_cursor = (
        encode_cursor(order, last.figure(order.sort), last.count("wins"), last.name)
        if more and last
        else None
    )
    return Page(chosen, start, next_cursor, len(rows))


def encode_cursor(order: Order, value: int | float | None, wins: int, name: str) -> str:
    raw = json.dumps({"s": order.sort, "d": order.direction, "v": value, "w": wins, "n": name})
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, order: Order) -> tuple[int | float | None, int, str]:
    """The (value, wins, name) a cursor resumes after; BadQuery if it is not one for this
    order. A cursor given before wins were in it (no "w") resumes as if at 0 wins."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data: Any = json.loads(raw)
        value, name, wins = data["v"], data["n"], data.get("w", 0)
        sort, direction = data["s"], data["d"]
    except (binascii.Error, ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise BadQuery("invalid-cursor", "the cursor is not one this API gave") from None
    if (
        not isinstance(name, str)
        or not (value is None or (isinstance(value, int | float) and not isinstance(value, bool)))
        or not isinstance(wins, int)
        or isinstance(wins, bool)
    ):
        raise BadQuery("invalid-cursor", "the cursor is not one this API gave")
    if sort != order.sort or direction != order.direction:
        raise BadQuery(
            "invalid-cursor",
            f"the cursor belongs to sort={sort} order={direction}; repeat that query or start over",
        )
    return value, wins, name
