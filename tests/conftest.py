"""Shared pytest fixtures.

Keep each group of fixtures in its own section; append new sections at the end.
Tests never touch the shared Redis on 127.0.0.1:6379: anything that needs a real
server uses ``redis_server`` (a throwaway redis-server owned by the test session)
or starts its own with :func:`tests.redis_helpers.start_redis_server`.
"""

from __future__ import annotations

import os
import sys
import threading
import time

# --- Compiled files ---------------------------------------------------------------------------

# A shell with PYTHONDONTWRITEBYTECODE=1 (this workplace's, many containers') made every process
# the suite starts compile every module it imports, and every xdist worker rewrite every test
# module's asserts from source: ~20 CPU-seconds a worker, ~0.7 s a `hearts serve` or child. The
# suite keeps its compiled files (in __pycache__, git-ignored) whatever the shell says: set here,
# before the test modules are imported, and in the environment its workers and children inherit.
if sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import fakeredis
import pytest
import redis
from hypothesis import settings

from service.store.event_store import RedisEventStore
from service.store.redis_server import client_for
from tests import backends
from tests.redis_helpers import (
    RedisServerMissing,
    start_redis_cluster,
    start_redis_server,
    stop_redis_server,
)

# --- Hypothesis profiles -------------------------------------------------

# CI runs the same examples every time (a failure there reproduces, and print_blob says how);
# a local run keeps exploring new ones. HYPOTHESIS_PROFILE picks another profile by name.
# No deadline in either: how long an example takes is not what these tests check, and on a busy
# machine a 200 ms deadline failed examples that pass (issue 34: a suite that holds under load).
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("dev", derandomize=False, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev")
)

# --- Redis ----------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """URL of a throwaway redis-server (no persistence) for the whole session."""
    try:
        process, url = start_redis_server(tmp_path_factory.mktemp("redis-server"))
    except RedisServerMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    yield url
    stop_redis_server(process)


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory):
    """A throwaway 3-master Redis Cluster (no replicas, no persistence) for the whole session."""
    try:
        cluster = start_redis_cluster(tmp_path_factory.mktemp("redis-cluster"))
    except RedisServerMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    yield cluster
    cluster.stop()


@pytest.fixture
def key_prefix() -> str:
    """A unique key prefix per test, so tests sharing a server never collide."""
    return f"test-{uuid.uuid4().hex[:12]}"


REDIS_BACKENDS = ("fake", "real", "cluster")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Every backend for the store's tests, one a test above it (tests/backends.py).
    backends.parametrize(metafunc, "redis_client", REDIS_BACKENDS)


@pytest.fixture
def redis_client(request):
    """A Redis client: a private fakeredis server, the throwaway real server, or a cluster client
    of the throwaway 3-master cluster (the service's own client for a ``redis+cluster://`` URL);
    which ones a test gets: tests/backends.py."""
    if request.param == "fake":
        client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    elif request.param == "real":
        client = redis.Redis.from_url(request.getfixturevalue("redis_server"))
    else:
        client = client_for(request.getfixturevalue("redis_cluster").url)
    yield client
    client.close()


# --- Event store ----------------------------------------------------------


@pytest.fixture
def event_store(redis_client, key_prefix) -> RedisEventStore:
    """A RedisEventStore (16 partitions) on ``redis_client`` under ``key_prefix``."""
    return RedisEventStore(redis_client, prefix=key_prefix)


# --- Rate limits ----------------------------------------------------------

# The suite runs the limits a user of ``hearts serve`` meets (issue 34: a limit the suite turns
# off is a limit nobody tested): an app a test builds from ``Settings(...)`` and every server it
# starts get the defaults. A test (or a module, with ``pytestmark``) that must go beyond them
# says why: ``@pytest.mark.unlimited("creates 40 games a second to race the matchmaker")``.
# Counters live in the app's Redis under its key prefix (``<prefix>:limits``): a test's own
# prefix (``key_prefix``) keeps them from leaking into another test's.


def unlimited_reason(node: pytest.Item | pytest.Collector) -> str | None:
    """The reason of the ``unlimited`` marker closest to ``node``; None: not marked. A marker
    without a reason fails the test: going beyond the limits is a choice someone explains."""
    example = '@pytest.mark.unlimited("creates 40 games a second to race the matchmaker")'
    return backends.marker_reason(node, "unlimited", example)


@contextmanager
def rate_limits_off() -> Iterator[None]:
    """While it lasts, apps built in this process and ``hearts serve`` started from it (a child
    inherits HEARTS_RATE_LIMITS) have no rate limits, whatever their Settings say."""
    from service.api import rate_limits

    install = rate_limits.install

    def install_unlimited(app, settings, client):
        install(app, replace(settings, rate_limits=False), client)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HEARTS_RATE_LIMITS", "0")
        patch.setattr(rate_limits, "install", install_unlimited)
        yield


@pytest.fixture(scope="session", autouse=True)
def _default_rate_limits():
    """The defaults, whatever the environment the suite was started from says."""
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("HEARTS_RATE_LIMIT")]:
            patch.delenv(name)
        yield


@pytest.fixture(scope="module", autouse=True)
def _unlimited_module(request):
    """A module marked ``unlimited`` (``pytestmark``): off for its module-scoped servers too."""
    if unlimited_reason(request.node) is None:
        yield
        return
    with rate_limits_off():
        yield


@pytest.fixture(autouse=True)
def _unlimited_test(request):
    """A test marked ``unlimited``: off for the apps and servers it builds."""
    if unlimited_reason(request.node) is None:
        yield
        return
    with rate_limits_off():
        yield


# --- The log's signing key (service/app/transparency.py) ----------------------------------------


@pytest.fixture(scope="session", autouse=True)
def _log_key_file(tmp_path_factory):
    """Servers the tests start (in this process or as children, which inherit the environment)
    sign with a key of the session's, never one in the user's data directory."""
    path = tmp_path_factory.mktemp("log-key") / "log-key.pem"
    previous = os.environ.get("HEARTS_LOG_KEY_FILE")
    os.environ["HEARTS_LOG_KEY_FILE"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("HEARTS_LOG_KEY_FILE", None)
    else:
        os.environ["HEARTS_LOG_KEY_FILE"] = previous


# --- The data directory (service/settings.py data_directory) ----------------------------------


@pytest.fixture(scope="session", autouse=True)
def _data_home(tmp_path_factory):
    """The per-user data directory of every app and server the tests start (in this process or
    as children, which inherit the environment) is the session's: ``hearts serve`` keeps its
    archive there (ended games, the public log's tiles), and a run must never write into the
    user's own, where a server of theirs would meet the tests' tiles as another log's. The
    default's own code path still runs (platformdirs under XDG_DATA_HOME), only its root moves;
    a test that checks that path sets its own."""
    home = tmp_path_factory.mktemp("data-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(home))
        patch.delenv("HEARTS_DATA_DIR", raising=False)
        patch.delenv("HEARTS_ARCHIVE_URL", raising=False)
        yield home


# --- Blob stores (service/store/blobs.py): local disk and S3 ------------------------------------


@pytest.fixture(scope="session")
def s3_server():
    """A throwaway S3-protocol server with one bucket, for the session: the one .ci/run started
    (HEARTS_TEST_S3_SERVER), else moto in a thread of this process. The AWS credential
    variables are dummies while it runs (children the tests start inherit them)."""
    from tests.blob_helpers import CREDENTIALS, s3_server_from_env, start_s3_server

    with pytest.MonkeyPatch.context() as patch:
        for name, value in CREDENTIALS.items():
            patch.setenv(name, value)
        server = s3_server_from_env() or start_s3_server()
        yield server
        server.stop()


@pytest.fixture(params=["disk", "s3"])
def blob_store(request, tmp_path):
    """An empty blob store of each backend: a directory of the test's, or a prefix of its own in
    the session's S3 bucket (moto's, or a real store's: HEARTS_TEST_S3_URL), made by
    ``blob_store_from_url`` as the service makes one."""
    from tests.blob_helpers import make_blob_store

    return make_blob_store(request, request.param, tmp_path)


# --- How many workers ------------------------------------------------------------------------

# Two workers a core (`-n auto` in pyproject.toml asks this hook). Half of the suite's time is
# waiting, not computing: servers starting, failovers electing, arenas and clocks running their
# real seconds, Chromium painting. With one worker a core the cores idled through those waits
# (a quiet 2-core run: 510 CPU-s in 457 s, 56% busy); with two, one worker's wait is another's
# work (364 s). Under CPU hogs the workers also win a larger share of the cores.
WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return WORKERS_PER_CORE * (cores or 1)


# --- The order files are handed to xdist's workers ---------------------------------------------

# `--dist loadfile` hands each worker a whole file at a time, in the order of the collection
# (`--no-loadscope-reorder` in pyproject.toml: xdist's own order, most tests first, put a file of
# one long test, as the arena's, last, where it was the run's tail on one worker while the
# others had nothing left). The files that take longest on their worker go first, longest first
# (measured with `--junitxml`, docs/testing.md); the rest keep the most-tests-first order, so
# the many short files even out the workers at the end.
LONGEST_FIRST = (
    # By their time in a whole run on 28 November 2026 (quiet, two workers a core: 334 s), longest
    # first. The SIGKILLed arena's 30 s + waits are real time however fast the machine.
    "tests/web/test_pages.py",
    "tests/web/test_table.py",
    "tests/integration/test_serve_supervision.py",
    "tests/openapi/test_conformance.py",
    "tests/web/test_defaults.py",
    "tests/tournaments/test_arena_serve.py",
    "tests/store/test_partitions_change.py",
    "tests/projections/test_projector.py",
    "tests/web/test_xss.py",
    "tests/cluster/test_replayed_durability.py",
    "tests/cluster/test_failover.py",
    "tests/web/test_analysis.py",
    "tests/web/test_card_table.py",
    "tests/test_checklists.py",
    "tests/web/test_challenges.py",
    "tests/archive/test_crash.py",
    "tests/security/test_long_work.py",
    "tests/security/test_streams.py",
    "tests/web/test_ratings.py",
    "tests/cluster/test_tree_failover.py",
    "tests/web/test_turn_clock.py",
    "tests/security/test_bounded_reads.py",
    "tests/archive/test_archiver.py",
    "tests/client/test_client_analysis.py",
    "tests/client/test_readme_defaults.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.pluginmanager.has_plugin("randomly"):
        return  # `-p randomly`: a shuffled order is the point of that run
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    order = sorted(files, key=lambda path: (rank.get(path, len(rank)), -len(files[path])))
    items[:] = [item for path in order for item in files[path]]


# --- Background threads ---------------------------------------------------------------------------

# The app's sweepers and the in-process projector wake on a timer for as long as they run: one
# left running by a test works on for the rest of its worker's run (an expiry sweep at 20 a
# second took 4% of a core). The bot runners wait on their work, not a timer. A live reader
# ends once its last stream is closed: a test closes the streams it reads (``with
# client.get(...) as response``, as a WSGI server closes every response), or a reader of its
# logs on in later tests (an outage of its Redis said in another test's log).
TIMED_QUIET = ("hearts-bots",)


def _timed_threads() -> dict[int, threading.Thread]:
    timed = [t for t in threading.enumerate() if t.name.startswith(("hearts-", "projector"))]
    return {t.ident or 0: t for t in timed if not t.name.startswith(TIMED_QUIET)}


@pytest.fixture(autouse=True)
def _no_timed_thread_left_running() -> Iterator[None]:
    """A test stops the sweepers and projector it started (``app.extensions["hearts.stop"]``)."""
    before = _timed_threads()
    yield
    left = [t for ident, t in _timed_threads().items() if ident not in before]
    deadline = time.monotonic() + 5  # a stopped thread ends at its next wake-up
    for thread in left:
        thread.join(max(deadline - time.monotonic(), 0))
    running = sorted(t.name for t in left if t.is_alive())
    assert not running, f"left running by this test (stop them: hearts.stop): {running}"
