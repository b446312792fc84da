"""The store's tests run on every Redis backend, a test above it on one, the same each run, and
a test marked ``every_backend`` on all (tests/backends.py)."""

from __future__ import annotations

import os
from collections import Counter
from types import SimpleNamespace

import pytest

from tests.backends import ALL_ENV, backends_for

OFFERED = ("fake", "real", "cluster")


def definition(nodeid: str, *marks: pytest.MarkDecorator) -> SimpleNamespace:
    found = {mark.mark.name: mark.mark for mark in marks}
    return SimpleNamespace(nodeid=nodeid, get_closest_marker=found.get)


@pytest.mark.parametrize(
    "nodeid",
    [
        "tests/store/test_store_contract.py::test_append",
        "tests/archive/test_readers.py::test_read",
        "tests/cluster/test_failover.py::test_x",
        "tests/projections/test_projector.py::TestX::test_claims",
        "tests/projections/test_apply_script.py::test_lua",
    ],
)
def test_the_stores_own_tests_run_on_every_backend(nodeid):
    assert backends_for(definition(nodeid), OFFERED) == list(OFFERED)


def test_a_test_above_the_store_runs_on_one_backend_the_same_every_time(monkeypatch):
    monkeypatch.delenv(ALL_ENV, raising=False)
    names = [f"tests/api/test_games.py::test_{n}" for n in range(300)]
    picked = [backends_for(definition(name), OFFERED) for name in names]
    assert all(len(backends) == 1 for backends in picked)
    assert picked == [backends_for(definition(name), OFFERED) for name in names]
    # Spread over the three: the upper layers as a whole still meet each one.
    counts = Counter(backends[0] for backends in picked)
    assert set(counts) == set(OFFERED) and min(counts.values()) > 60, counts


def test_a_test_marked_every_backend_runs_on_all(monkeypatch):
    monkeypatch.delenv(ALL_ENV, raising=False)
    marked = definition(
        "tests/api/test_games.py::test_x", pytest.mark.every_backend("the cluster routes it")
    )
    assert backends_for(marked, OFFERED) == list(OFFERED)


def test_the_marker_needs_its_reason():
    marked = definition("tests/api/test_games.py::test_x", pytest.mark.every_backend())
    with pytest.raises(pytest.fail.Exception, match="needs its reason"):
        backends_for(marked, OFFERED)


def test_every_test_on_every_backend_when_asked(monkeypatch):
    monkeypatch.setenv(ALL_ENV, "all")
    assert backends_for(definition("tests/api/test_games.py::test_x"), OFFERED) == list(OFFERED)


def test_this_test_got_the_backend_its_name_picks(request, redis_client):
    # The function's id, without the backend's "[...]": what the backend is picked by.
    expected = backends_for(definition(request.node.nodeid.split("[", 1)[0]), OFFERED)
    assert request.node.callspec.params["redis_client"] in expected
    assert len(expected) == (3 if os.environ.get(ALL_ENV) == "all" else 1)
    assert redis_client.ping()
