"""A service whose ended games move to an archive: the app, its projector and its archiver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import fakeredis
import pytest
from flask import Flask

from service.api.factory import create_app
from service.app.archiver import Archiver
from service.app.projector import Projector
from service.app.transparency import Appender
from service.settings import Settings
from service.settings import archive_url as default_archive_url
from service.store.archive import GameArchive
from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from service.store.redis_server import client_for
from tests.api.helpers import Hearts
from tests.projections.helpers import drain

FAST = {"hand_limit": 1}  # a complete game in one hand: its length is not what is tested

# The ``hub`` (tests/archive/conftest.py) of a test that needs a Redis other processes reach (a
# subprocess, the CLI): the throwaway redis-server, archiving to disk and to S3.
ON_A_REAL_REDIS = pytest.mark.parametrize("hub", ["real-disk", "real-s3"], indirect=True)


@dataclass
class World:
    app: Flask
    hearts: Hearts
    store: RedisEventStore
    archive: GameArchive
    projections: ProjectionStore
    projector: Projector
    archive_url: str  # HEARTS_ARCHIVE_URL (an s3:// one keeps its endpoint: the store's .url not)

    def archiver(self, **kwargs: Any) -> Archiver:
        return Archiver(
            self.store, self.archive, after_seconds=0, projections=self.projections, **kwargs
        )

    def bot_game(self, **rules: Any) -> str:
        """A game of four bots, played to its end."""
        game = self.hearts.create([{"bot": "random"}] * 4, rules={**FAST, **rules})
        self.hearts.wait_for(game["id"], lambda v: v["phase"] == "finished", timeout=120)
        return game["id"]

    def project(self) -> None:
        drain(self.projector)


def redis_of(request: pytest.FixtureRequest, kind: str):
    """A client of a private fakeredis, the throwaway redis-server or the throwaway cluster."""
    if kind == "fake":
        return fakeredis.FakeRedis(server=fakeredis.FakeServer())
    if kind == "real":
        return client_for(request.getfixturevalue("redis_server"))
    return client_for(request.getfixturevalue("redis_cluster").url)


def world(redis: Any, prefix: str, archive_url: str | None, **more: Any) -> World:
    """The service on ``redis`` archiving to ``archive_url`` (None: ``archive/`` in the
    directory of the ``data_dir`` setting in ``more``, as a deployment's default)."""
    settings = Settings(key_prefix=prefix, archive_url=archive_url, **more)
    app = create_app(settings, redis=redis)
    store = app.extensions["hearts"].store
    projections = ProjectionStore(store)
    log = app.extensions["hearts.log"]
    projector = Projector(projections, public_log=Appender(log.store, log.origin), blocking=False)
    hearts = Hearts(app.test_client())
    url = default_archive_url(settings)
    return World(app, hearts, store, store.archive, projections, projector, url)
