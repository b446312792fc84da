"""A throwaway Redis Cluster with a replica per master, for the tests that kill a master."""

from __future__ import annotations

import os
import signal

import pytest

from tests.redis_helpers import RedisServerMissing, start_redis_cluster


@pytest.fixture
def cluster_with_replicas(tmp_path):
    try:
        cluster = start_redis_cluster(tmp_path, masters=3, replicas=1)
    except RedisServerMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    yield cluster
    for process in cluster.nodes.values():
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)  # none left stopped for stop() to wait on
    cluster.stop()
