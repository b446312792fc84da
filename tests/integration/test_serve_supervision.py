"""``hearts serve`` run like a service (issue 18): it starts before Redis and catches up once
Redis comes; a killed projector is restarted and catches up; a master killed with SIGKILL leaves
no child behind; the data directory is the user's, whatever the working directory."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from service.cli import metrics_dir
from tests.api.helpers import Hearts
from tests.children import start as start_child
from tests.integration.http import HttpClient
from tests.redis_helpers import free_port, start_redis_server, stop_redis_server

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def serve(tmp_path: Path, port: int, *, cwd: Path | None = None, **env: str) -> subprocess.Popen:
    """``hearts serve`` (one worker, with its projector) whose HOME and XDG_DATA_HOME are in
    ``tmp_path``: the user's data directory is the test's own."""
    environment = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "PYTHONPATH": str(ROOT),  # python -m service.cli from another working directory
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    if "REDIS_URL" not in env:
        environment.pop("REDIS_URL", None)
        environment.pop("HEARTS_DATA_DIR", None)
    log = open(tmp_path / f"serve-{port}.log", "ab")  # noqa: SIM115 - closed with the process
    return start_child(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--workers", "1"],
        cwd=cwd or tmp_path,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_for(predicate, timeout: float = 60.0, what: str = "a condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            found = predicate()
            if found:
                return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def answering(process: subprocess.Popen, client: HttpClient, status: int = 200) -> bool:
    assert process.poll() is None, f"hearts serve exited with {process.returncode}"
    return client.get("/healthz").status_code == status


def children(pid: int) -> dict[int, str]:
    """{pid: command line} of the live (not zombie) processes whose parent is ``pid``."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if int(ppid) == pid and state != "Z":
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found[int(entry.name)] = command
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def projector_pid(master: int) -> int | None:
    return next((p for p, cmd in children(master).items() if " project " in cmd + " "), None)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def scoreboard_finished(client: HttpClient, game_id: str) -> bool:
    response = client.get(f"/api/v1/games/{game_id}/scoreboard")
    return response.status_code == 200 and response.get_json()["status"] == "finished"


# One hand: a finished game to score is what these tests need, not a long one (each hand is
# a few seconds of HTTP on a busy machine).
ONE_HAND = {"score_limit": 1}


def play_a_game(client: HttpClient) -> str:
    hearts = Hearts(client)
    game_id, tokens = hearts.new_game(1, rules=ONE_HAND)
    assert hearts.play_out(game_id, tokens)["phase"] == "finished"
    return game_id


def test_serve_started_before_redis_plays_and_scores_once_redis_comes(tmp_path):
    redis_port, port = free_port(), free_port()
    url = f"redis://127.0.0.1:{redis_port}/0"
    server = serve(tmp_path, port, REDIS_URL=url, HEARTS_KEY_PREFIX=f"late-{uuid.uuid4().hex[:8]}")
    client = HttpClient(f"http://127.0.0.1:{port}", timeout=10)
    redis_process = None
    try:
        wait_for(lambda: answering(server, client, 503), what="/healthz 503 without Redis")
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.get_json()["redis"]["status"] == "down"
        time.sleep(2)  # the projector has met the refused connection by now, and must not die
        redis_process, _ = start_redis_server(tmp_path / "redis", port=redis_port)
        wait_for(lambda: answering(server, client), what="/healthz 200 once Redis is up")
        game_id = play_a_game(client)
        wait_for(lambda: scoreboard_finished(client, game_id), timeout=90, what="the scoreboard")
        ready = client.get("/readyz").get_json()
        assert ready["status"] == "ok" and ready["projector"]["status"] == "running"
    finally:
        stop(server)
        if redis_process is not None:
            stop_redis_server(redis_process)


def test_a_killed_projector_is_restarted_and_catches_up(tmp_path):
    redis_process, url = start_redis_server(tmp_path / "redis")
    port = free_port()
    server = serve(tmp_path, port, REDIS_URL=url, HEARTS_KEY_PREFIX=f"kp-{uuid.uuid4().hex[:8]}")
    client = HttpClient(f"http://127.0.0.1:{port}", timeout=10)
    try:
        wait_for(lambda: answering(server, client), what="hearts serve")
        first = wait_for(lambda: projector_pid(server.pid), what="the projector")
        mid_game = Hearts(client)
        game_id, tokens = mid_game.new_game(1, rules=ONE_HAND)
        for _ in range(8):  # into the hand, then the projector dies mid-run
            # The bots move in the background: the seat awaited may be one of theirs until then.
            public = mid_game.wait_for_humans(game_id, tokens)
            seat = next(s for s in public["awaiting"] if s in tokens)
            mid_game.act(game_id, seat, tokens[seat])
        os.kill(first, signal.SIGKILL)
        second = wait_for(
            lambda: (p := projector_pid(server.pid)) not in (None, first) and p,
            what="a new projector",
        )
        assert not alive(first)
        assert mid_game.play_out(game_id, tokens)["phase"] == "finished"
        wait_for(lambda: scoreboard_finished(client, game_id), timeout=90, what="the scoreboard")
        wait_for(lambda: client.get("/readyz").get_json()["projector"]["lag"] == 0, what="lag 0")
        assert projector_pid(server.pid) == second
        log = (tmp_path / f"serve-{port}.log").read_text()
        assert "projector exited (status" in log and "restarting" in log
    finally:
        stop(server)
        stop_redis_server(redis_process)


def test_sigkill_of_the_master_leaves_no_child_and_the_next_start_takes_its_files(tmp_path):
    port = free_port()
    temporary = tmp_path / "tmp"  # where its workers' metrics files go
    temporary.mkdir()
    # The embedded redis-server, in the test's data directory.
    server = serve(tmp_path, port, TMPDIR=str(temporary))
    client = HttpClient(f"http://127.0.0.1:{port}", timeout=10)
    try:
        wait_for(lambda: answering(server, client), what="hearts serve")
        try:
            wait_for(lambda: projector_pid(server.pid), what="the projector")
        except AssertionError as missing:
            # Seen once on a loaded machine and not since (issue 34): say what was running.
            log = (tmp_path / f"serve-{port}.log").read_text()[-3000:]
            running = children(server.pid)
            raise AssertionError(f"{missing}: children {running}, log:\n{log}") from None
        kids = children(server.pid)
        commands = " ".join(kids.values())
        assert "redis-server" in commands and " project " in commands and len(kids) >= 3, kids
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        wait_for(
            lambda: not any(alive(pid) for pid in kids),
            timeout=30,
            what=f"the children to end: {[kids[p] for p in kids if alive(p)]}",
        )
        # Its metrics files stay (no finally ran), named by it: a master starting removes them.
        left = list(temporary.glob(f"hearts-metrics-{server.pid}-*"))
        assert len(left) == 1 and any(left[0].iterdir()), left
        assert metrics_dir.remove_orphans(temporary) == left
        assert not left[0].exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


def test_the_data_directory_is_the_same_from_any_working_directory(tmp_path):
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    port = free_port()
    first = serve(tmp_path, port, cwd=here)
    client = HttpClient(f"http://127.0.0.1:{port}", timeout=10)
    try:
        wait_for(lambda: answering(first, client), what="hearts serve in one directory")
        game_id = Hearts(client).create([None, {"bot": "random"}] * 2)["id"]
    finally:
        stop(first)
    log = (tmp_path / f"serve-{port}.log").read_text()
    data_dir = tmp_path / "xdg" / "hearts"
    assert f"data       {data_dir}" in log  # the start-up banner says where the data is
    port = free_port()
    second = serve(tmp_path, port, cwd=there)
    client = HttpClient(f"http://127.0.0.1:{port}", timeout=10)
    try:
        wait_for(lambda: answering(second, client), what="hearts serve in another directory")
        assert client.get(f"/api/v1/games/{game_id}").status_code == 200
    finally:
        stop(second)
    assert not (here / ".hearts").exists() and not (there / ".hearts").exists()


def test_the_start_up_sweep_waits_for_redis(tmp_path):
    import redis

    from service.app.bot_runner import start_sweep
    from service.store.event_store import RedisEventStore

    port = free_port()
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
    store = RedisEventStore(client, prefix=f"sweep-{uuid.uuid4().hex[:8]}")
    handed_over: list[str] = []
    thread = start_sweep(store, None, handed_over.append, f"{store.prefix}:sweep-lock")  # type: ignore[arg-type]
    redis_process = None
    try:
        time.sleep(1.5)
        assert thread.is_alive()  # waiting, not given up
        redis_process, _ = start_redis_server(tmp_path / "redis", port=port)
        thread.join(60)
        assert not thread.is_alive()
        assert client.exists(f"{store.prefix}:sweep-lock") == 0  # swept, lock given back
    finally:
        client.close()
        if redis_process is not None:
            stop_redis_server(redis_process)
