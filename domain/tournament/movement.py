"""The movement: who sits at which table and seat in each round of a duplicate tournament.

A movement is a tuple of rounds; a round a tuple of tables; a table a tuple of four seats, each
the index of a player in the roster or None for a house bot (a table short of players).

- **16 players, at most 5 rounds**: the affine plane of order 4. The players are the points
  (x, y) of GF(4)^2 (player ``4x + y``); round r's four tables are the four lines of the r-th
  parallel class (slopes 0, 1, a, a^2, then the vertical lines). Two points lie on exactly one
  line, so over five rounds every pair of players meets exactly once, and never twice in fewer.
- **Any other size** (or more rounds): each round is searched, deterministically from the
  ``key`` (the tournament's id): many greedy partitions from shuffled orders, then swaps of two
  players while they lower the cost, the cost being the sum over the round's tables of
  ``meetings^2`` for each pair already met (so a repeat is spread before any pair meets a third
  time). Tables are filled as evenly as possible (14 players: 4, 4, 3, 3); the house bots take
  the empty seats.
- **Seats** (directions): at each table the seat order is the permutation that gives each player
  the seats they have held least (the sum of their counts); for 16 players the whole movement's
  seats are searched with backtracking so that with 4 or more rounds every player holds every
  seat at least once.

All of it is a pure function of (players, rounds, key): deciding a round twice gives the same
tables, which is what makes starting a round idempotent.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from itertools import combinations, permutations

SEATS = 4

Table = tuple[int | None, ...]
Round = tuple[Table, ...]
Movement = tuple[Round, ...]

# GF(4) = {0, 1, a, a^2} as 0, 1, 2, 3: addition is XOR, multiplication by this table.
_GF4_MUL = (
    (0, 0, 0, 0),
    (0, 1, 2, 3),
    (0, 2, 3, 1),
    (0, 3, 1, 2),
)


def affine_plane_4() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """The five parallel classes of AG(2, 4): each four lines of four points (0..15)."""
    classes = []
    for slope in range(4):  # y = slope * x + c
        lines = []
        for c in range(4):
            lines.append(tuple(4 * x + (_GF4_MUL[slope][x] ^ c) for x in range(4)))
        classes.append(tuple(lines))
    classes.append(tuple(tuple(4 * c + y for y in range(4)) for c in range(4)))  # x = c
    return tuple(classes)


def movement(players: int, rounds: int, key: str) -> Movement:
    """The tables of every round for ``players`` players (see the module docstring)."""
    if players < 1 or rounds < 1:
        raise ValueError("a movement needs players and rounds")
    rng = random.Random(hashlib.sha256(f"movement:{key}".encode()).digest())
    if players == 16 and rounds <= 5:
        return _affine_movement(rounds, rng)
    return _seat(_search_groups(players, rounds, rng), players)


def _affine_movement(rounds: int, rng: random.Random) -> Movement:
    """Rounds from AG(2, 4)'s parallel classes, seated so every player holds every seat.

    In class r < 4 (the line y = r x + c, on which x takes each value once) point (x, y) sits
    in seat ``x XOR r``: a bijection on each line, and over r = 0..3 each point holds the four
    seats. In the vertical class (x = c) the seat is y. Which player is which point is drawn
    from ``rng``, so the roster's order does not fix who meets whom in which round."""
    point_of = list(range(16))
    rng.shuffle(point_of)
    player_at = {point: player for player, point in enumerate(point_of)}
    out = []
    for r, lines in enumerate(affine_plane_4()[:rounds]):
        tables = []
        for line in lines:
            seats: list[int | None] = [None] * SEATS
            for point in line:
                x, y = divmod(point, 4)
                seats[(x ^ r) if r < 4 else y] = player_at[point]
            tables.append(tuple(seats))
        out.append(tuple(tables))
    return tuple(out)


def _capacities(players: int) -> list[int]:
    tables = -(-players // SEATS)
    base, extra = divmod(players, tables)
    return [base + (1 if t < extra else 0) for t in range(tables)]


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def _cost(tables: Sequence[Sequence[int]], met: dict[tuple[int, int], int]) -> int:
    return sum(met.get(_pair(a, b), 0) ** 2 for t in tables for a, b in combinations(t, 2))


def _search_groups(players: int, rounds: int, rng: random.Random) -> list[list[list[int]]]:
    capacities = _capacities(players)
    met: dict[tuple[int, int], int] = {}
    out: list[list[list[int]]] = []
    for _ in range(rounds):
        best: list[list[int]] | None = None
        best_cost = -1
        for _ in range(12):
            order = list(range(players))
            rng.shuffle(order)
            tables: list[list[int]] = [[] for _ in capacities]
            for p in order:
                open_tables = [i for i, t in enumerate(tables) if len(t) < capacities[i]]
                i = min(
                    open_tables, key=lambda i: (sum(met.get(_pair(p, q), 0) for q in tables[i]), i)
                )
                tables[i].append(p)
            cost = _improve(tables, met)
            if best is None or cost < best_cost:
                best, best_cost = [sorted(t) for t in tables], cost
            if best_cost == 0:
                break
        assert best is not None
        for t in best:
            for a, b in combinations(t, 2):
                met[_pair(a, b)] = met.get(_pair(a, b), 0) + 1
        out.append(best)
    return out


def _improve(tables: list[list[int]], met: dict[tuple[int, int], int]) -> int:
    """Swap two players of different tables while a swap lowers the cost; the final cost."""
    cost = _cost(tables, met)
    improved = True
    while improved and cost:
        improved = False
        for i, j in combinations(range(len(tables)), 2):
            for a in range(len(tables[i])):
                for b in range(len(tables[j])):
                    tables[i][a], tables[j][b] = tables[j][b], tables[i][a]
                    new = _cost(tables, met)
                    if new < cost:
                        cost, improved = new, True
                    else:
                        tables[i][a], tables[j][b] = tables[j][b], tables[i][a]
    return cost


def _seat(groups_by_round: Sequence[Sequence[Sequence[int]]], players: int) -> Movement:
    """Each table's seat order: first greedily (the seats each player held least), then passes
    that re-seat one table at a time while that lowers the cost: the seats a player has not
    held (when there are rounds enough to hold them all), then the sum of squared counts."""
    rounds = len(groups_by_round)
    held = [[0] * SEATS for _ in range(players)]
    plan: list[list[tuple[int | None, ...]]] = []

    def cost_of(order: Sequence[int | None]) -> tuple[int, int]:
        missing = squares = 0
        for s, p in enumerate(order):
            if p is None:
                continue
            counts = held[p][:]
            counts[s] += 1
            if rounds >= SEATS:
                missing += sum(1 for c in counts if c == 0)
            squares += sum(c * c for c in counts)
        return missing, squares

    def sit(order: Sequence[int | None], step: int) -> None:
        for s, p in enumerate(order):
            if p is not None:
                held[p][s] += step

    for groups in groups_by_round:
        tables = []
        for group in groups:
            seats = list(group) + [None] * (SEATS - len(group))
            best = min(permutations(seats), key=cost_of)
            sit(best, 1)
            tables.append(tuple(best))
        plan.append(tables)
    for _ in range(10):
        changed = False
        for tables in plan:
            for t, order in enumerate(tables):
                sit(order, -1)
                best = min(permutations(order), key=cost_of)
                if cost_of(best) < cost_of(order):
                    order, changed = best, True
                sit(order, 1)
                tables[t] = tuple(order)
        if not changed:
            break
    return tuple(tuple(tables) for tables in plan)


def meetings(plan: Movement) -> dict[tuple[int, int], int]:
    """How many times each pair of players sat at one table."""
    met: dict[tuple[int, int], int] = {}
    for tables in plan:
        for table in tables:
            seated = [p for p in table if p is not None]
            for a, b in combinations(seated, 2):
                met[_pair(a, b)] = met.get(_pair(a, b), 0) + 1
    return met
