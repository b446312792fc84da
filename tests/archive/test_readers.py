"""Readers do not notice: every read of a game answers the same before and after it moved."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest

from service.app import game_log
from service.app.transparency import HEAD_HEADER
from service.cli import main
from service.store.envelope import NewEvent
from service.store.live import LiveHub
from tests.archive.helpers import ON_A_REAL_REDIS, World
from tests.blob_helpers import drop_object, overwrite_object

API = "/api/v1"


def _answer(response: Any) -> tuple[int, Any]:
    body = response.get_json(silent=True)
    return response.status_code, body if body is not None else response.get_data(as_text=True)


def _reads(hub: World, game_id: str, head: str) -> dict[str, Callable[[], Any]]:
    http = hub.app.test_client()
    get: Callable[[str], Any] = lambda path: _answer(http.get(API + path))  # noqa: E731
    export = http.get(f"{API}/games/{game_id}/export").get_json()
    assert http.post(f"{API}/games/import", json=export).status_code == 201  # the copy, once
    return {
        "view": lambda: get(f"/games/{game_id}"),
        "events": lambda: get(f"/games/{game_id}/events"),
        "events page": lambda: get(f"/games/{game_id}/events?after=7&limit=9"),
        "hand record": lambda: get(f"/games/{game_id}/hands/1"),
        "time travel": lambda: get(f"/games/{game_id}/state?at=12"),
        "audit": lambda: get(f"/games/{game_id}/audit"),
        "export": lambda: _undated(get(f"/games/{game_id}/export")),
        "export text": lambda: _undated(get(f"/games/{game_id}/export?format=text")),
        "verify": lambda: _answer(http.post(f"{API}/games/{game_id}/verify", json={"head": head})),
        "scoreboard": lambda: get(f"/games/{game_id}/scoreboard"),
        "game list": lambda: get("/games?limit=100"),
        "leaderboard": lambda: get("/leaderboard"),
        "public log entry": lambda: get(f"/log/games/{game_id}"),
        "import dedup": lambda: _answer(http.post(f"{API}/games/import", json=export)),
        "store version": lambda: hub.store.version(game_id),
        "store exists": lambda: hub.store.exists(game_id),
        "store verify": lambda: hub.store.verify(game_id),
        "store read_since": lambda: hub.store.read_since(game_id, 5),
        "store follow": lambda: hub.store.follow(game_id, 10, 1),
        "store follow_many": lambda: hub.store.follow_many({game_id: 10}, 1),
        "typed read (fast path)": lambda: game_log.read(hub.store, game_id, 3),
        "service load": lambda: _load(hub, game_id),
    }


def _undated(answer: tuple[int, Any]) -> tuple[int, Any]:
    """An export without the time it was made."""
    status, body = answer
    if isinstance(body, dict):
        return status, {k: v for k, v in body.items() if k != "exported_at"}
    return status, body.split("\n", 1)[1]


def _load(hub: World, game_id: str) -> Any:
    service = hub.app.extensions["hearts"]
    service.cache.forget(game_id)
    cold = service.load(game_id)
    warm = service.load(game_id)  # from the cache, refreshed through read_since
    return cold.version, cold.state == warm.state


def test_every_read_answers_the_same_after_the_game_moved(hub: World):
    game_id = hub.bot_game()
    hub.project()
    head = hub.app.test_client().get(f"{API}/games/{game_id}").headers[HEAD_HEADER]
    reads = _reads(hub, game_id, head)
    before = {name: read() for name, read in reads.items()}
    assert hub.archiver().run_once().archived == [game_id]
    assert not hub.store.redis.exists(hub.store.game_key(game_id))
    after = {name: read() for name, read in reads.items()}
    differ = [name for name in reads if after[name] != before[name]]
    assert differ == []
    assert before["audit"][0] == 200 and before["verify"][0] == 200


class _MovedBetween:
    """A pipeline whose commands run one by one, the archiver's pass landing before the last:
    a read that raced the move (CI met it: a cached fold's check read the entries, then a
    stream already gone, and answered 409 corrupt-game)."""

    def __init__(self, hub: World, real: Callable[..., Any]) -> None:
        self.hub, self.real, self.calls = hub, real, []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))

    def execute(self) -> list[Any]:
        replies = []
        for n, (name, args, kwargs) in enumerate(self.calls):
            if n == len(self.calls) - 1:
                self.hub.store.redis.pipeline = self.real  # the archiver's own, untouched
                assert self.hub.archiver().run_once().archived
            replies.append(getattr(self.hub.store.redis, name)(*args, **kwargs))
        return replies


def test_a_check_that_races_the_move_reads_the_archive(hub: World):
    game_id = hub.bot_game()
    hub.project()
    before = hub.store.read_since(game_id, 5)
    redis = hub.store.redis
    real = redis.pipeline
    redis.pipeline = lambda *args, **kwargs: _MovedBetween(hub, real)
    try:
        after = hub.store.read_since(game_id, 5)
    finally:
        redis.pipeline = real
    assert not redis.exists(hub.store.game_key(game_id))
    assert after == before


def _neighbour(hub: World, game_id: str) -> str:
    """A game in ``game_id``'s partition (one slot on a cluster: followed in one XREAD), still
    played: one event appended."""
    partition = hub.store.partition_of(game_id)
    other = next(
        f"neighbour-{n}"
        for n in itertools.count()
        if hub.store.partition_of(f"neighbour-{n}") == partition
    )
    hub.store.append(other, 0, [NewEvent("Tick", 1, {"n": 1})], "tick-1")
    return other


def test_follow_many_of_a_game_archived_mid_follow_gives_each_event_once(hub: World):
    """The live hub's read: a follower had read half of a game when it moved to the archive;
    following it with a game still played in its partition, it gets the rest of each, once and
    in order, and then nothing more of the archived one."""
    game_id = hub.bot_game()
    hub.project()
    store = hub.store
    events = store.read(game_id)
    half = len(events) // 2
    other = _neighbour(hub, game_id)
    cursors = {game_id: half, other: 0}
    seen = {game_id: events[:half], other: []}
    assert hub.archiver().run_once().archived == [game_id]
    store.append(other, 1, [NewEvent("Tick", 1, {"n": 2})], "tick-2")
    for _ in range(4):
        for followed, found in store.follow_many(dict(cursors), block_ms=1).items():
            assert found[0].seq == cursors[followed] + 1
            seen[followed] += found
            cursors[followed] = found[-1].seq
    assert seen[game_id] == events
    assert [event.payload["n"] for event in seen[other]] == [1, 2]
    assert store.follow_many({game_id: len(events)}, block_ms=1) == {}


def test_a_live_watch_of_a_game_archived_mid_follow_gets_the_rest(hub: World):
    game_id = hub.bot_game()
    hub.project()
    events = hub.store.read(game_id)
    half = len(events) // 2
    assert hub.archiver().run_once().archived == [game_id]
    live = LiveHub(hub.store, block_ms=50)
    got = events[:half]
    with live.watch(game_id, half) as watch:
        while len(got) < len(events):
            found = watch.wait(len(got), timeout=10)
            assert found, f"nothing after seq {len(got)} of {len(events)}"
            got += found
        assert watch.wait(len(got), timeout=0.2) == []
    assert got == events


@ON_A_REAL_REDIS
def test_the_cli_reads_an_archived_game_the_same(hub: World, redis_server, monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", hub.store.prefix)
    monkeypatch.setenv("HEARTS_ARCHIVE_URL", hub.archive_url)
    game_id = hub.bot_game()
    hub.project()

    def outputs() -> list[tuple[int, str]]:
        found = []
        for argv in (["replay", game_id], ["audit", game_id, "--json"], ["export", game_id]):
            code = main(argv)
            out = capsys.readouterr().out
            found.append((code, re.sub(r'"exported_at": "[^"]*"', "", out)))
        return found

    before = outputs()
    assert hub.archiver().run_once().archived == [game_id]
    assert outputs() == before
    assert [code for code, _ in before] == [0, 0, 0]
    assert f'"game_id": "{game_id}"' in before[2][1]


@pytest.mark.parametrize("hub", ["fake-disk", "real-s3"], indirect=True)
@pytest.mark.parametrize("damage", ["lost", "altered"])
def test_an_archived_object_lost_or_altered_is_a_corrupt_game_not_a_500(hub: World, damage):
    game_id = hub.bot_game()
    hub.project()
    hub.archiver().run_once()
    name = hub.archive.blob_name(game_id)
    if damage == "lost":
        drop_object(hub.archive.blobs, name)
    else:
        overwrite_object(hub.archive.blobs, name, hub.archive.blobs.get(name)[:-9] + b"123456789")
    hub.archive._cache.clear()
    hub.app.extensions["hearts"].cache.forget(game_id)
    answer = hub.app.test_client().get(f"{API}/games/{game_id}")
    assert answer.status_code == 409
    assert answer.get_json()["type"].endswith("corrupt-game")


@pytest.mark.parametrize("hub", ["fake-disk", "real-s3"], indirect=True)
def test_a_players_recent_games_keep_an_archived_games_details(hub: World):
    """docs/projections.md: each recent game with its status, hands, times and the player's
    seats; an archived game's board left Redis with it, and is folded from the archive."""
    game_id = hub.bot_game()
    hub.project()
    http = hub.app.test_client()

    def recent() -> dict[str, Any]:
        answer = http.get(f"{API}/players/random?recent=50")
        assert answer.status_code == 200, answer.get_json()
        return next(g for g in answer.get_json()["recent_games"] if g["game_id"] == game_id)

    before = recent()
    assert before["status"] == "finished" and before["started_at"] and before["finished_at"]
    assert len(before["seats"]) == 4  # four random bots: every seat is this name's
    assert hub.archiver().run_once().archived == [game_id]
    generation = hub.projections.current_generation()
    board_key = hub.projections.game_key(generation, game_id)
    assert hub.store.redis.get(board_key) is None  # its board left the read models
    assert recent() == before
