"""Backup and restore of a whole deployment, step by step as docs/operations.md tells it.

A deployment (a redis-server with its append-only file on, the data directory's archive and log
key) plays games, archives some and keeps others live; it is backed up Redis first, then the
archive, with a game archived between the two copies; and it is restored into an empty
redis-server and an empty archive: every game reads, replays, audits and exports as before, the
game archived between the copies is moved again by the archiver's next pass (it is merely in
both places), and ``hearts projections rebuild`` gives the read models there were.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.cli import main
from service.store.redis_server import client_for
from tests.api.helpers import poll
from tests.archive.helpers import FAST, World, world
from tests.redis_helpers import start_redis_server, stop_redis_server

API = "/api/v1"
KEY_FILE = "log-key.pem"  # the public log's signing key, in the data directory


@contextlib.contextmanager
def deployment(data: Path, prefix: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """A deployment whose files are in ``data``: a redis-server (append-only file on) with its
    directory there, and the service with its archive and log key there too (the defaults);
    the CLI (``main``) sees the same."""
    process, url = start_redis_server(data, appendonly=True)
    client = client_for(url)
    hub = world(client, prefix, None, data_dir=str(data))
    environment = {"REDIS_URL": url, "HEARTS_KEY_PREFIX": prefix, "HEARTS_DATA_DIR": str(data)}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    try:
        yield hub
    finally:
        hub.app.extensions["hearts.stop"]()
        client.close()
        stop_redis_server(process)


def backup_redis(client: Any, to: Path) -> None:
    """Backup, step 1: Redis's append-only directory, copied while no rewrite runs."""
    previous = client.config_get("auto-aof-rewrite-percentage")["auto-aof-rewrite-percentage"]
    client.config_set("auto-aof-rewrite-percentage", 0)
    try:
        poll(
            lambda: client.info("persistence"),
            lambda info: (
                info["aof_rewrite_in_progress"] == 0 and info["aof_rewrite_scheduled"] == 0
            ),
        )
        directory = Path(client.config_get("dir")["dir"])
        name = client.config_get("appenddirname")["appenddirname"]
        shutil.copytree(directory / name, to / name)
    finally:
        client.config_set("auto-aof-rewrite-percentage", previous)


def restore(redis_copy: Path, archive_copy: Path, data: Path) -> None:
    """Restore into an empty redis-server and an empty archive: the server is stopped, its
    append-only directory replaced by the copy; the archive and the log key put back."""
    process, url = start_redis_server(data, appendonly=True)
    empty = client_for(url)
    assert empty.dbsize() == 0
    empty.close()
    stop_redis_server(process)
    shutil.rmtree(data / "appendonlydir")
    shutil.copytree(redis_copy / "appendonlydir", data / "appendonlydir")
    assert not (data / "archive").exists()
    shutil.copytree(archive_copy, data / "archive")
    shutil.copy2(redis_copy.parent / KEY_FILE, data / KEY_FILE)


def seen(hub: World, game_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """What anyone can read of a game: its events, the API's view, audit, export and scoreboard,
    and ``hearts replay|audit|export`` (exports without the time they were made)."""
    http = hub.app.test_client()
    found: dict[str, Any] = {"events": hub.store.read(game_id)}
    for name in ("", "/audit", "/export", "/scoreboard"):
        answer = http.get(f"{API}/games/{game_id}{name}")
        body = answer.get_json()
        if isinstance(body, dict):
            body.pop("exported_at", None)
        found[f"GET {name or '/'}"] = (answer.status_code, body)
    for argv in (["replay", game_id], ["audit", game_id, "--json"], ["export", game_id]):
        code = main(argv)
        out = re.sub(r'"exported_at": "[^"]*"', "", capsys.readouterr().out)
        found[f"hearts {argv[0]}"] = (code, out)
    return found


def in_play(hub: World) -> str:
    """A game of four humans in its first hand: passed, two cards played."""
    game_id, tokens = hub.hearts.new_game(humans=4, rules=FAST)
    for _ in range(6):
        seat = hub.hearts.view(game_id)["awaiting"][0]
        hub.hearts.act(game_id, seat, tokens[seat])
    return game_id


def test_a_deployment_restored_from_its_backup_reads_and_rebuilds_the_same(
    tmp_path, key_prefix, monkeypatch, capsys
):
    data, backup = tmp_path / "data", tmp_path / "backup"
    with deployment(data, key_prefix, monkeypatch) as hub:
        archived = [hub.bot_game(), hub.bot_game()]
        hub.project()
        assert sorted(hub.archiver().run_once().archived) == sorted(archived)
        between = hub.bot_game()  # ended: archived after the Redis copy, before the archive's
        live = [hub.hearts.create([None, None, None, {"bot": "random"}])["id"], in_play(hub)]
        hub.project()
        games = [*archived, between, *live]
        before = {game_id: seen(hub, game_id, capsys) for game_id in games}
        models = hub.projections.dump(hub.projections.current_generation())

        shutil.copytree(data / "archive", backup / "early-archive")  # the wrong order's
        backup_redis(hub.store.redis, backup / "redis")  # 1. Redis
        assert hub.archiver().run_once().archived == [between]
        shutil.copytree(data / "archive", backup / "archive")  # 2. then the archive
        shutil.copy2(data / KEY_FILE, backup / KEY_FILE)  # 3. the log's key
        backup_redis(hub.store.redis, backup / "late-redis")  # the wrong order's

    restore(backup / "redis", backup / "archive", tmp_path / "restored")
    with deployment(tmp_path / "restored", key_prefix, monkeypatch) as hub:
        current = hub.projections.current_generation()
        assert hub.projections.dump(current) == models  # Redis as it was at its copy
        # In both places: hot in the Redis copy, its object (the same bytes) in the archive's.
        assert hub.store.redis.exists(hub.store.game_key(between))
        assert hub.archive.blobs.exists(hub.archive.blob_name(between))
        assert {game_id: seen(hub, game_id, capsys) for game_id in games} == before
        assert hub.archiver().run_once().archived == [between]  # the next pass resolves it
        assert not hub.store.redis.exists(hub.store.game_key(between))
        assert {game_id: seen(hub, game_id, capsys) for game_id in games} == before
        for game_id in games:
            codes = [before[game_id][name][0] for name in ("GET /audit", "GET /export")]
            codes += [before[game_id][f"hearts {name}"][0] for name in ("replay", "audit")]
            exported = 409 if game_id in live else 200  # a game is exported once it has ended
            assert codes == [200, exported, 0, 0], (game_id, before[game_id]["GET /export"])
        live_models = hub.projections.dump(current)

        assert main(["projections", "rebuild", "--no-progress", "--grace", "0"]) == 0
        rebuilt = json.loads(capsys.readouterr().out)
        assert rebuilt["replaced"] == current
        assert hub.archiver().run_once().archived == []  # drops the archived games' boards
        assert hub.projections.dump(rebuilt["generation"]) == live_models
        assert sorted(hub.store.list_games(limit=100).game_ids) == sorted(games)

    # The wrong order: an archive copied before Redis lacks the object of a game archived in
    # between, which the Redis copy records as archived and no longer holds: that game is lost.
    restore(backup / "late-redis", backup / "early-archive", tmp_path / "wrong")
    with deployment(tmp_path / "wrong", key_prefix, monkeypatch) as hub:
        lost = hub.app.test_client().get(f"{API}/games/{between}")
        assert lost.status_code == 409 and lost.get_json()["type"].endswith("corrupt-game")
        assert seen(hub, archived[0], capsys) == before[archived[0]]
