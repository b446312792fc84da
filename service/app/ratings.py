"""Players' ratings, read from the projector's read models (see :mod:`projections.ratings`).

:class:`RatingBook` is what the rest of the service asks: the conservative rating of a player
(matchmaking filters seekers by it) and a player's rating history (the player page). Both are as
current as the read models (the projection lag).
"""

from __future__ import annotations

from projections.ratings import PlayerRating
from service.store.read_models import ProjectionStore


class RatingBook:
    def __init__(self, projections: ProjectionStore) -> None:
        self.projections = projections

    def ratings(self) -> dict[str, PlayerRating]:
        """Every rated player's rating, by player id."""
        return self.projections.ratings(self.projections.as_of())

    def get(self, player_id: str) -> PlayerRating | None:
        return self.ratings().get(player_id)

    def rating(self, player_id: str) -> float | None:
        """The player's conservative rating (mu - 3 sigma); None while it has no rated game."""
        found = self.get(player_id)
        return found.rating if found is not None and found.games else None
