"""Operating the archive: its figures in /metrics and `hearts archive status|run|backfill`."""

from __future__ import annotations

import json

from service.cli import main
from tests.archive.helpers import ON_A_REAL_REDIS, World


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def test_metrics_count_games_archived_and_waiting(hub: World):
    first = hub.bot_game()
    hub.project()
    text = hub.app.test_client().get("/metrics").get_data(as_text=True)
    assert _metric(text, "hearts_archive_ended_hot") == 1
    assert _metric(text, "hearts_archive_oldest_ended_seconds") > 0
    hub.archiver().run_once()
    text = hub.app.test_client().get("/metrics").get_data(as_text=True)
    assert _metric(text, "hearts_archive_games") == 1
    assert _metric(text, "hearts_archive_ended_hot") == 0
    assert _metric(text, "hearts_archive_log_entries") == hub.store.version(first)


def test_a_game_ended_before_the_index_is_found_by_a_backfill(hub: World):
    game_id = hub.bot_game()
    hub.project()
    hub.store.redis.delete(hub.archive.ended_key(hub.store.partition_of(game_id)))
    archiver = hub.archiver()
    assert archiver.run_once().archived == []
    assert archiver.backfill() == 1
    assert archiver.run_once().archived == [game_id]
    assert archiver.backfill() == 1  # its end is still read from the archive: marked again
    assert archiver.run_once().archived == [game_id]  # and only forgotten again
    assert hub.archive.counts()["archived"] == 1


@ON_A_REAL_REDIS
def test_the_archive_commands(hub: World, redis_server, monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", hub.store.prefix)
    monkeypatch.setenv("HEARTS_ARCHIVE_URL", hub.archive_url)
    monkeypatch.setenv("HEARTS_ARCHIVE_AFTER", "3600")
    game_id = hub.bot_game()
    hub.project()
    assert main(["archive", "run", "--once"]) == 0  # ended less than an hour ago: stays
    assert json.loads(capsys.readouterr().out)["archived"] == 0
    assert main(["archive", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["games"], status["archived"], status["ended_hot"]) == (1, 0, 1)
    assert main(["archive", "run", "--once", "--after", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["archived"] == 1
    assert main(["archive", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["archived"], status["hot"], status["ended_hot"]) == (1, 0, 0)
    assert status["archived_bytes"] == hub.archive.record_of(game_id).bytes > 0
    assert main(["archive", "run"]) == 2
    hub.archive.blobs.put("tile/0/007", b"\0" * 32 * 256)  # a lost future's tile
    assert main(["archive", "prune-tiles"]) == 0
    assert json.loads(capsys.readouterr().out)["past"] == ["tile/0/007"]
    assert hub.archive.blobs.get("tile/0/007") is not None  # only listed
    assert main(["archive", "prune-tiles", "--yes"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == ["tile/0/007"]
    assert hub.archive.blobs.get("tile/0/007") is None
