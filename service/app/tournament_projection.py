"""Tournaments' read models, folded by the projector (projections/tournaments.py, stored by
service/store/tournament_models.py).

Every append to a tournament's log marks it due (the append script adds it to its partition's
``tournaments-dirty`` set); the projector's every poll folds the due tournaments of the
partitions it reads into the current generation and clears each one whose log is still where
it folded it. ``hearts projections rebuild`` folds every listed tournament into the new
generation before it is swapped in, so a rebuild equals the live models. A fold reads the log
alone (the archived one once it has moved), whatever its format.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from domain.tournament.events import event_from_dict
from projections.tournaments import project
from service.store.read_models import ProjectionStore
from service.store.tournament_archive import games_key
from service.store.tournament_models import TournamentModels
from service.store.tournaments import TournamentStore

log = logging.getLogger(__name__)


def tournament_store_of(projections: ProjectionStore) -> TournamentStore:
    store = projections.store
    return TournamentStore(
        store.redis,
        store.keys,
        lambda: store.archive.blobs if store.archive is not None else None,
    )


class TournamentProjection:
    def __init__(self, projections: ProjectionStore, logs: TournamentStore | None = None) -> None:
        self.projections = projections
        self.logs = logs or tournament_store_of(projections)
        self.models = TournamentModels(projections)

    def fold(self, tournament_id: str) -> dict[str, Any] | None:
        entries = self.logs.read(tournament_id)
        return project(tournament_id, [event_from_dict(e.event) for e in entries])

    def project(self, generation: str, tournament_id: str) -> int | None:
        """Fold the tournament into ``generation``; the version folded (None: nothing to)."""
        doc = self.fold(tournament_id)
        if doc is None:
            return None
        self.models.write(generation, tournament_id, doc)
        return int(doc["version"])

    def catch_up(self, generation: str, partitions: Iterable[int]) -> int:
        """Fold every due tournament of ``partitions``; how many were folded."""
        folded = 0
        for ids in self.models.dirty(sorted(partitions)).values():
            for tournament_id in ids:
                try:
                    version = self.project(generation, tournament_id)
                except Exception:  # one bad log must not stop the others: it stays due
                    log.exception("tournament %s: read model not folded", tournament_id)
                    continue
                self.models.clean(tournament_id, version or 0)
                folded += 1
        return folded

    def rebuild(self, generation: str) -> int:
        """Fold every listed tournament into ``generation`` (a rebuild's); how many."""
        count = 0
        for tournament_id in self.logs.listed(10**9):
            if self.project(generation, tournament_id) is not None:
                count += 1
        return count

    def table_games(self) -> set[str]:
        """Every table game of every listed tournament, from its games set, or from its
        archived object once it has moved (whatever its format)."""
        out: set[str] = set()
        keys = self.projections.store.keys
        archive = self.logs.archive()
        for tournament_id in self.logs.listed(10**9):
            members = self.projections.redis.smembers(games_key(keys, tournament_id))
            out |= {m.decode() if isinstance(m, bytes) else m for m in members}
            if not members and archive is not None:
                record = archive.record_of(tournament_id)
                if record is not None:
                    out |= set(archive.check(tournament_id, record).get("games", ()))
        return out

    def read(self, tournament_id: str) -> dict[str, Any] | None:
        generation = self.projections.current_generation()
        return self.models.read(generation, tournament_id) if generation is not None else None
