"""A benchmark killed outright leaves no redis-server behind (bench/common.py ``RedisServer``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.children import start

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import time
from bench.common import RedisServer
with RedisServer() as server:
    print(server.process.pid, flush=True)
    time.sleep(60)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of ours is gone for this purpose; one of init's is reaped at once.
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal (Linux)")
def test_a_benchmark_killed_outright_takes_its_redis_server_with_it(tmp_path):
    # Its server's directory, which no __exit__ removes once it is killed: the test's.
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    bench = start(
        [sys.executable, "-c", HOLD], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        redis = int(bench.stdout.readline())
        assert alive(redis)
        bench.send_signal(signal.SIGKILL)  # no __exit__, no finally: only the kernel can tell
        bench.wait()
        deadline = time.monotonic() + 10
        while alive(redis) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(redis), "the benchmark's redis-server outlived it"
    finally:
        bench.kill()
        bench.wait()
