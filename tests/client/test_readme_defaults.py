"""Issue 34: the client README's example, verbatim, against ``hearts serve`` as a new user starts
it: its default settings (rate limits on), its own data directory (the embedded redis-server),
a free port, and none of the suite's environment (no HEARTS_RATE_LIMITS=0, no log key of the
session's: only PATH, and HOME pointing into the test's directory)."""

from __future__ import annotations

import json
import os
import re
import shutil
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


def readme_curl_block() -> str:
    """The README's curl session, as the reader copies it (``## With curl``'s sh block)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## With curl") :]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match, "the README's curl session is gone"
    return match.group(1)


def test_the_readme_curl_session_runs_verbatim_against_the_defaults(default_server):
    """Issue 44: run as written (only the port is this server's), whatever the deal: the pass
    and the play take their cards from the answers, and the last play is refused as shown."""
    if not (shutil.which("curl") and shutil.which("jq")):
        # .ci/run installs both and sets this: in CI the README's session always runs.
        if os.environ.get("HEARTS_REQUIRE_CURL"):
            pytest.fail("HEARTS_REQUIRE_CURL is set but curl or jq is not installed")
        pytest.skip("the session needs curl and jq (apt-get install curl jq)")
    script = readme_curl_block().replace("http://127.0.0.1:8000", default_server)
    env = {"PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        ["bash", "-e", "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["phase"] == "passing" and len(lines[0]["hand"]) == 13
    assert lines[1]["legal"] and lines[1]["version"] > lines[0]["version"]
    assert lines[2]["version"] > lines[1]["version"]
    assert lines[3]["code"] == "card-not-in-hand"
