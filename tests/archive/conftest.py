from __future__ import annotations

import pytest

from tests.archive.helpers import World, world


@pytest.fixture
def hub(redis_client, key_prefix, tmp_path) -> World:
    """The service on fakeredis, the throwaway redis-server and the cluster, archiving to a
    directory of the test's own."""
    built = world(redis_client, key_prefix, str(tmp_path / "archive"))
    yield built
    built.app.extensions["hearts.stop"]()
