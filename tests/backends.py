"""Which Redis backends a test runs on.

A test that takes a Redis (the ``redis_client`` fixture: fakeredis, the throwaway redis-server,
the throwaway cluster; the projections' ``redis_url``: the server or the cluster) runs on every
backend where what Redis does is the point: the store's own tests (its Lua, streams, consumer
groups, archive moves, partitions), and any test marked ``@pytest.mark.every_backend("why")``.
Above the store a test runs on one backend, the same one every run, picked by its name: the
upper layers meet Redis only through the store, so three runs of the same use case mostly
re-tested the store at three times the cost (about 450 of the suite's 2,000 test-seconds),
while the upper layers as a whole still run on all three. ``HEARTS_TEST_BACKENDS=all`` runs
every test on every backend (docs/testing.md).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from typing import Any

import pytest

ALL_ENV = "HEARTS_TEST_BACKENDS"
# Where the store's behaviour is the point: every backend, every test.
EVERY_BACKEND_PATHS = (
    "tests/store/",
    "tests/archive/",
    "tests/cluster/",
    "tests/projections/test_projector.py",  # consumer groups, claims, acks
    "tests/projections/test_apply_script.py",  # the read models' Lua
)


def marker_reason(node: Any, name: str, example: str) -> str | None:
    """The reason of the ``name`` marker closest to ``node``; None: not marked. A marker
    without a reason fails the test (``example``: a marker with one, for the message)."""
    marker = node.get_closest_marker(name)
    if marker is None:
        return None
    reason = marker.args[0] if marker.args else marker.kwargs.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        pytest.fail(
            f"{node.nodeid}: @pytest.mark.{name} needs its reason, e.g. {example}", pytrace=False
        )
    return reason


def every_backend_reason(definition: Any) -> str | None:
    """The reason of the ``every_backend`` marker; a marker without one fails the test."""
    example = '@pytest.mark.every_backend("the cluster refuses a multi-key script here")'
    return marker_reason(definition, "every_backend", example)


def backends_for(definition: pytest.Item, offered: Sequence[str]) -> list[str]:
    """The backends of ``offered`` that the test ``definition`` runs on."""
    path = definition.nodeid.split("::", 1)[0]
    marked = every_backend_reason(definition) is not None  # first: a bare marker always fails
    if marked or os.environ.get(ALL_ENV) == "all" or path.startswith(EVERY_BACKEND_PATHS):
        return list(offered)
    # A checksum of the name, not hash(): the same backend in every process and every run, so
    # a failure's rerun of the one file or test meets the backend it failed on.
    return [offered[zlib.crc32(definition.nodeid.encode("utf-8")) % len(offered)]]


def parametrize(metafunc: pytest.Metafunc, fixture: str, offered: Sequence[str]) -> None:
    """Parametrize ``fixture`` (indirect: it reads ``request.param``) with the test's backends,
    unless the test names its own with ``@pytest.mark.parametrize(fixture, [...])``."""
    if fixture not in metafunc.fixturenames:
        return
    for marker in metafunc.definition.iter_markers("parametrize"):
        names = marker.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else names
        if fixture in names:
            return
    metafunc.parametrize(fixture, backends_for(metafunc.definition, offered), indirect=True)
