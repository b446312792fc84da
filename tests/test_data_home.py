"""What outlives a test's Redis (an archive, the public log's tiles, the log's key) is written
under the session's data home, never the user's data directory: a server of theirs would meet
the tests' tiles there as another log's (tests/conftest.py ``_data_home``; a benchmark's server:
bench/common.py ``HeartsServer``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

from bench.common import HeartsServer, RedisServer
from service.settings import data_directory
from tests import children

PRINT_DATA_DIRECTORY = "from service.settings import data_directory; print(data_directory(None)[0])"


def test_a_server_the_tests_start_keeps_its_data_in_the_sessions_data_home(_data_home: Path):
    # A child inherits the environment, as every `hearts serve` a test starts does.
    done = children.run(
        [sys.executable, "-c", PRINT_DATA_DIRECTORY], capture_output=True, text=True, check=True
    )
    assert Path(done.stdout.strip()) == _data_home / "hearts"
    assert data_directory(None)[0] == _data_home / "hearts"
    assert Path(platformdirs.user_data_dir("hearts", appauthor=False)).is_relative_to(_data_home)


def test_a_benchmarks_server_has_a_data_directory_of_its_own_thrown_away_with_it(
    _data_home: Path,
):
    with RedisServer() as redis, HeartsServer(redis.url, workers=1) as server:
        assert server.process is not None
        environ = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
        given = dict(line.decode().split("=", 1) for line in environ if b"=" in line)
        data = Path(given["HEARTS_DATA_DIR"])
        assert data.is_dir() and not data.is_relative_to(_data_home)
        assert data != data_directory(None)[0]
        assert "HEARTS_ARCHIVE_URL" not in given and "HEARTS_LOG_KEY_FILE" not in given
    assert not data.exists()
    assert os.environ["XDG_DATA_HOME"] == str(_data_home)  # the session's, left as it was
