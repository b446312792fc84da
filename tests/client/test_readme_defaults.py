"""Issue 34: the client README's example, verbatim, against ``hearts serve`` as a new user starts
it: its default settings (rate limits on), its own data directory (the embedded redis-server),
a free port, and none of the suite's environment (no HEARTS_RATE_LIMITS=0, no log key of the
session's: only PATH, and HOME pointing into the test's directory)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests import children
from tests.client.test_client import CLIENT, readme_example
from tests.redis_helpers import free_port
from tests.replay.live import stop_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def default_server(tmp_path):
    """``hearts serve --port P --data-dir D`` and nothing else; its base URL."""
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    log = (tmp_path / "serve.log").open("wb")
    command = [sys.executable, "-m", "service.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(tmp_path / "data")]
    process = children.start(
        command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "hearts serve did not answer /readyz in 60 s"
            try:
                if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        yield url
    finally:
        stop_server(process)
        log.close()


def test_the_readme_example_runs_verbatim_against_the_defaults(default_server):
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HEARTS_URL": default_server,
        "PYTHONPATH": str(CLIENT / "src"),  # where `pip install ./clients/python` puts it
    }
    done = subprocess.run(
        [sys.executable, "-c", readme_example()],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"scores: \[[-\d, ]+\] winners: \[[\d, ]+\]\n", done.stdout), done.stdout
