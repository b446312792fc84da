"""Matchpoints: the duplicate score of a board, and the standings.

On each board (a round's deal k, played at every table of the round) a player's result is the
score the hand gave their seat: the points taken with a shot of the moon (or sun) applied as it
was scored (``HandScored.score_changes``), fewer being better. Each player is compared with
every other *ranked* player who held the same seat of that board at another table: 1 matchpoint
for each they beat (took fewer points), 1/2 for each tie. House bots (seats of short tables) are
neither compared nor ranked.

A player's percentage is their matchpoints over the most they could have had (one per
comparison), over every board they played. Standings: percentage, higher first; then total
points taken over those boards, fewer first; then the player's id (only to order the list). A
place is shared by players equal on both of the first two.

Matchpoints are kept in halves (integers) so that sums are exact.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True, slots=True)
class BoardResult:
    """One seat's result on one board: who held it (None: a house bot) and the score."""

    round: int
    board: int
    table: int
    seat: int
    player: str | None
    score: int


@dataclass(frozen=True, slots=True)
class Standing:
    place: int
    player: str
    half_matchpoints: int  # matchpoints x 2
    half_top: int  # the most this player could have had, x 2
    points: int  # total points taken on the boards played
    boards: int

    @property
    def matchpoints(self) -> Fraction:
        return Fraction(self.half_matchpoints, 2)

    @property
    def percentage(self) -> Fraction:
        """Matchpoints over the top, x 100 (50 when there was nothing to compare)."""
        if not self.half_top:
            return Fraction(50)
        return Fraction(100 * self.half_matchpoints, self.half_top)


def half_matchpoints(
    results: Iterable[BoardResult],
) -> dict[tuple[int, int, int, str], tuple[int, int]]:
    """(round, board, seat, player) -> (matchpoints x 2, top x 2) for each ranked result."""
    groups: dict[tuple[int, int, int], list[BoardResult]] = defaultdict(list)
    for r in results:
        if r.player is not None:
            groups[(r.round, r.board, r.seat)].append(r)
    out: dict[tuple[int, int, int, str], tuple[int, int]] = {}
    for (rnd, board, seat), group in groups.items():
        for mine in group:
            half = sum(
                2 if mine.score < other.score else 1 if mine.score == other.score else 0
                for other in group
                if other is not mine
            )
            out[(rnd, board, seat, mine.player)] = (half, 2 * (len(group) - 1))  # type: ignore[index]
    return out


def standings(results: Iterable[BoardResult], players: Iterable[str]) -> tuple[Standing, ...]:
    """Every one of ``players`` (ranked players; one with no board yet at 50%), in order."""
    results = list(results)
    half: dict[str, int] = defaultdict(int)
    top: dict[str, int] = defaultdict(int)
    points: dict[str, int] = defaultdict(int)
    boards: dict[str, int] = defaultdict(int)
    for (_, _, _, player), (mp, most) in half_matchpoints(results).items():
        half[player] += mp
        top[player] += most
    for r in results:
        if r.player is not None:
            points[r.player] += r.score
            boards[r.player] += 1
    rows = [Standing(0, p, half[p], top[p], points[p], boards[p]) for p in players]
    rows.sort(key=lambda s: (-s.percentage, s.points, s.player))
    placed: list[Standing] = []
    for i, row in enumerate(rows):
        prev = placed[-1] if placed else None
        same = prev is not None and (prev.percentage, prev.points) == (row.percentage, row.points)
        placed.append(
            Standing(
                prev.place if same and prev else i + 1,
                row.player,
                row.half_matchpoints,
                row.half_top,
                row.points,
                row.boards,
            )
        )
    return tuple(placed)
