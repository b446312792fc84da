"""A long-work child (service/offload.py) whose worker left before its answer says so in one
line and exits: no BrokenPipeError traceback in the server's log (issue 34, "quiet failure")."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from service.offload import read_frame, serve_child, write_frame
from tests import children

ROOT = Path(__file__).resolve().parent.parent


def _slow_echo(value: Any) -> Any:
    time.sleep(0.5)  # the worker leaves meanwhile
    return value


def main() -> None:
    """The test child's entry, as service/api/long_work.py's is the service's."""
    serve_child(lambda bootstrap: {"echo": _slow_echo, "now": lambda: bootstrap})


def child() -> subprocess.Popen:
    return children.start(
        [sys.executable, "-c", "import tests.test_offload as jobs; jobs.main()"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_a_child_answers_its_worker():
    process = child()
    write_frame(process.stdin, "boot")
    write_frame(process.stdin, ("now", ()))
    assert read_frame(process.stdout) == ("ok", "boot")
    write_frame(process.stdin, ("echo", ("x" * 10,)))
    assert read_frame(process.stdout) == ("ok", "x" * 10)
    process.stdin.close()
    assert process.wait(10) == 0
    assert process.stderr.read() == b""
    process.stdout.close()
    process.stderr.close()


def test_a_child_whose_worker_left_says_so_in_one_line_without_a_traceback():
    process = child()
    write_frame(process.stdin, "boot")
    # A big answer: more than a pipe's buffer, as an export's is, so the write itself breaks.
    write_frame(process.stdin, ("echo", ("x" * 1_000_000,)))
    process.stdout.close()  # the worker is gone: its end of the pipe with it
    process.stdin.close()
    assert process.wait(10) == 0
    lines = process.stderr.read().decode().splitlines()
    process.stderr.close()
    assert len(lines) == 1, lines
    assert "the worker left before 'echo' was answered" in lines[0]
    assert "Traceback" not in lines[0] and "Exception ignored" not in lines[0]
