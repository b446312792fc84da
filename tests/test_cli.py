"""The ``hearts`` command itself (issue 18): help when bare, defaults in --help, quiet on a
closed pipe, --data-dir on every subcommand; what a starting master clears of a dead one's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from service.cli import BROKEN_PIPE, build_parser, main, metrics_dir
from tests import children

ROOT = Path(__file__).resolve().parents[1]


def test_bare_hearts_prints_the_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: hearts") and "serve" in out and "simulate" in out


def test_help_shows_the_defaults(capsys):
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]

    def text(name: str) -> str:  # the help, unwrapped
        return " ".join(sub[name].format_help().split())

    assert "(default: 256)" in text("project")
    assert "each played per rotation) (default: 10)" in text("simulate")
    serve_help = text("serve")
    assert "(default: None)" not in serve_help and "(default: False)" not in serve_help


def test_every_subcommand_takes_a_data_dir():
    parser = build_parser()
    for name in ("serve", "project", "replay", "export", "import", "audit", "simulate"):
        args = parser.parse_args(
            [
                name,
                "--data-dir",
                "/x",
                *(["g"] if name in ("replay", "export", "audit") else []),
                *(["f"] if name == "import" else []),
            ]
        )
        assert args.data_dir == "/x"


def test_a_closed_pipe_ends_quietly():
    command = [sys.executable, "-m", "service.cli", "simulate", "--games", "1"]
    command += ["--seats", "random,random,random,random", "--max-hands", "1", "--no-progress"]
    process = children.start(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # `| head -0`: the reader is gone before the first line
    err = process.stderr.read().decode()
    assert process.wait(60) == BROKEN_PIPE
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_projections_status_require_live_here_is_a_health_check(
    redis_server, key_prefix, monkeypatch, capsys
):
    import json
    import socket

    import redis

    from service.app.projector import alive_key

    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)
    command = ["projections", "status", "--require-live-here"]
    assert main(command) == 1  # no projector beats
    assert json.loads(capsys.readouterr().out)["live"] == []
    client = redis.Redis.from_url(redis_server)
    try:
        beat = {f"{socket.gethostname()}-4242": (time.time() + 60) * 1000}
        client.zadd(alive_key(key_prefix), beat)
        assert main(command) == 0
        assert json.loads(capsys.readouterr().out)["live"] == list(beat)
    finally:
        client.delete(alive_key(key_prefix))
        client.close()


def test_a_starting_master_removes_only_the_metrics_files_of_masters_gone(tmp_path):
    ended = children.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = int(ended.stdout)  # a pid no process holds now (none took it again in between)
    orphan = tmp_path / f"hearts-metrics-{dead}-abc"
    live = tmp_path / f"hearts-metrics-{os.getpid()}-abc"  # a master still running
    other = tmp_path / "hearts-metrics-legacy"  # not named by a pid
    target = tmp_path / "kept"
    for directory in (orphan, live, other, target):
        directory.mkdir()
        (directory / "counter_1.db").write_bytes(b"x")
    link = tmp_path / f"hearts-metrics-{dead}-link"  # a link in a shared /tmp: never followed
    link.symlink_to(target)
    plain = tmp_path / f"hearts-metrics-{dead}-file"
    plain.write_text("not a directory")

    assert metrics_dir.remove_orphans(tmp_path) == [orphan]
    assert not orphan.exists()
    assert all(path.exists() for path in (live, other, link, plain, target / "counter_1.db"))
