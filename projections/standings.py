"""A group's standings: the games among a chosen group of players only (issue 44), pure.

Four friends who play among themselves may never reach the leaderboard (a rating is
provisional until enough weighted games against enough distinct opponents:
:mod:`projections.ratings`); their own board counts only the finished games whose every seat
was one of them, each member by its *who* (a registered player's id, a guest's name:
:func:`projections.stats.who`). Arranged and imported games count as they count in the
statistics: not at all (``Scoreboard.arranged`` / ``imported``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .scoreboard import STATUS_FINISHED, Scoreboard

MAX_GROUP = 8  # members a group may name
MAX_GAMES = 200  # the most recent games of each member read for it


@dataclass(frozen=True, slots=True)
class GroupRow:
    who: str
    games: int
    wins: int
    points: int  # final totals summed

    @property
    def average_points(self) -> float | None:
        return self.points / self.games if self.games else None


def group_games(boards: Iterable[Scoreboard], group: Sequence[str]) -> list[Scoreboard]:
    """The finished, counted games among the group only, each once, in game id order."""
    members = set(group)
    found: dict[str, Scoreboard] = {}
    for board in boards:
        whos = [seat.who for seat in board.seats]
        if (
            board.status == STATUS_FINISHED
            and not board.arranged
            and not board.imported
            and whos
            and all(w in members for w in whos)
        ):
            found[board.game_id] = board
    return [found[g] for g in sorted(found)]


def standings(games: Iterable[Scoreboard], group: Sequence[str]) -> list[GroupRow]:
    """Each member's games, wins and points over ``games`` (those of :func:`group_games`),
    most wins first, then the lower average, then the member's order in the group."""
    rows = {who: [0, 0, 0] for who in group}
    for board in games:
        for seat in board.seats:
            row = rows.get(seat.who or "")
            if row is None:
                continue
            row[0] += 1
            row[1] += seat.seat in board.winners
            row[2] += board.totals[seat.seat]
    out = [GroupRow(who, *rows[who]) for who in group]
    order = {who: i for i, who in enumerate(group)}
    return sorted(
        out,
        key=lambda r: (-r.wins, r.average_points is None, r.average_points or 0, order[r.who]),
    )
