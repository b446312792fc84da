"""Player ratings: an OpenSkill model over the standings of rated games.

The model is OpenSkill's Bradley-Terry full-pairing model (every seat compared with every other
seat of the game), not its Plackett-Luce one: openskill.py 6.x's Plackett-Luce mis-rates tied
places (two seats tied first, the third place moves as much as they do; openskill.py issues
#155 and #173, fix proposed in PR #176), and equal totals are common in Hearts. Switching back
is one line (``_MODEL``) and a rebuild, once a release fixes it.

A finished game is *rated* when every seat was joined with a registered player's key (each seat
a different player), the game was played here (not imported) and its deals were not arranged by
its creator (a seed or explicit deals). A game with a guest or a bot seat (a seat the game
created for a bot; a registered program that plays as a bot is a player) is not rated for
anyone: a rating says how one did against other rated players, and a table of strategy bots
would be a free source of points. A seat a player left to a bot still counts for the player.

The projector records each rated game once (:class:`RatedGame`, its finish time and each seat's
player and final total); the ratings are a fold of those records in one deterministic order
(finish time, then game id), so a rebuild of the read models gives the same ratings as the live
projector, whatever order the partitions were applied in. In Hearts the lowest total wins:
the totals are the ranks given to the model (lower is better), so tied totals are ties.

The figure shown and ranked by is the conservative rating ``mu - 3 sigma`` (OpenSkill's
``ordinal``): about 0 for a newcomer (mu 25, sigma 25/3), rising as games make the model surer.
A rating is *provisional* until the player has :data:`PROVISIONAL_GAMES` rated games.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from openskill.models import BradleyTerryFull

PROVISIONAL_GAMES = 10
_MODEL = BradleyTerryFull()  # defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300


@dataclass(frozen=True, slots=True)
class RatedGame:
    """A finished rated game as the ratings need it."""

    game_id: str
    finished_us: int  # the finish time, microseconds since the Unix epoch (the fold's order)
    finished_at: str  # the same, as recorded (ISO-8601 UTC)
    seats: tuple[tuple[str, int], ...]  # per seat: (player id, final total)

    @property
    def order(self) -> tuple[int, str]:
        return (self.finished_us, self.game_id)

    def to_json(self) -> str:
        return json.dumps(
            {"g": self.game_id, "t": self.finished_at, "s": [list(s) for s in self.seats]},
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, raw: str, finished_us: int) -> RatedGame:
        data = json.loads(raw)
        seats = tuple((str(p), int(t)) for p, t in data["s"])
        return cls(data["g"], finished_us, data["t"], seats)


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A player's rating right after one rated game."""

    game_id: str
    finished_at: str
    mu: float
    sigma: float
    rank: int  # the player's place in that game (1 = lowest total; ties share a place)
    players: int

    @property
    def rating(self) -> float:
        return conservative(self.mu, self.sigma)


@dataclass(frozen=True, slots=True)
class PlayerRating:
    player_id: str
    mu: float
    sigma: float
    games: int  # rated games
    history: tuple[RatingPoint, ...] = field(default=(), repr=False)

    @property
    def rating(self) -> float:
        """The conservative rating, mu - 3 sigma."""
        return conservative(self.mu, self.sigma)

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES


def conservative(mu: float, sigma: float) -> float:
    return mu - 3 * sigma


def places(totals: tuple[int, ...]) -> list[int]:
    """Each seat's place: 1 for the lowest total, tied totals share the better place."""
    return [1 + sum(1 for other in totals if other < total) for total in totals]


def fold(
    games: Iterable[RatedGame], start: dict[str, PlayerRating] | None = None
) -> dict[str, PlayerRating]:
    """Every rated player's rating after ``games``, folded in (finish time, game id) order,
    onto ``start`` (the ratings after earlier games: every one of ``games`` must sort after
    them, so the result equals a fold of all from the beginning)."""
    ratings: dict[str, PlayerRating] = dict(start or {})
    history: dict[str, list[RatingPoint]] = {p: list(r.history) for p, r in ratings.items()}
    for game in sorted(games, key=lambda g: g.order):
        ids = [player for player, _ in game.seats]
        if len(set(ids)) != len(ids) or len(ids) < 2:
            continue  # not a rated game (the projector records none such; be safe)
        before = [ratings.get(p) for p in ids]
        teams = [
            [_MODEL.rating() if r is None else _MODEL.rating(mu=r.mu, sigma=r.sigma)]
            for r in before
        ]
        totals = tuple(total for _, total in game.seats)
        after = _MODEL.rate(teams, ranks=[float(t) for t in totals])
        ranks = places(totals)
        for i, (player, old) in enumerate(zip(ids, before, strict=True)):
            new = after[i][0]
            point = RatingPoint(
                game.game_id, game.finished_at, new.mu, new.sigma, ranks[i], len(ids)
            )
            history.setdefault(player, []).append(point)
            played = old.games if old is not None else 0
            ratings[player] = PlayerRating(player, new.mu, new.sigma, played + 1)
    return {
        p: PlayerRating(r.player_id, r.mu, r.sigma, r.games, tuple(history[p]))
        for p, r in ratings.items()
    }
