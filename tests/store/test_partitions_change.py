"""``hearts partitions change --to M``: games of every phase and archived games under C=4 move
to M=8; every game reads as before, live ones play on, projections rebuild equal, the old count
is refused, and a run killed midway is run again (service/store/partitions_change.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from domain import RuleOptions
from service.api.factory import create_app
from service.app.archiver import Archiver, archived_scoreboard
from service.app.partitions import change_partitions
from service.app.projector import Projector
from service.app.transparency import HEAD_HEADER, Appender
from service.settings import Settings
from service.store.archive import attach
from service.store.event_store import RedisEventStore
from service.store.layout import (
    LayoutChanging,
    LayoutMismatch,
    check_layout,
    recorded_partitions,
)
from service.store.partitions_change import STEPS, ChangeRefused, PartitionChange
from service.store.read_models import ProjectionStore
from tests.archive.helpers import FAST, World, redis_of, world
from tests.blob_helpers import archive_url
from tests.projections.games import GamePlan, append_all, play_game
from tests.projections.helpers import drain

API = "/api/v1"
BEFORE, AFTER = 4, 8


@pytest.fixture(params=["fake", "real", "cluster"])
def client(request):
    client = redis_of(request, request.param)
    yield client
    client.close()


def _world(client: Any, key_prefix: str, url: str, partitions: int, tmp_path: Path) -> World:
    """The service under ``partitions``; its log's signing key kept across restarts (a file
    of the test's), as a deployment's, so heads signed before the change verify after."""
    key_file = str(tmp_path / "log-key.pem")
    return world(
        client, key_prefix, url, partitions=partitions, rate_limits=False, log_key_file=key_file
    )


def _stop(hub: World) -> None:
    hub.app.extensions["hearts.stop"]()


def _reads(hub: World, game_id: str, head: str) -> dict[str, Any]:
    """What readers see of the game; ``head``: a signed head a player kept (checked by
    ``POST /verify`` against the game wherever it is)."""
    http = hub.app.test_client()
    verified = http.post(f"{API}/games/{game_id}/verify", json={"head": head})

    def get(path: str) -> Any:
        response = http.get(API + path)
        return response.status_code, response.get_json()

    return {
        "view": get(f"/games/{game_id}"),
        "events": get(f"/games/{game_id}/events?limit=1000"),
        "audit": get(f"/games/{game_id}/audit"),
        "state at 5": get(f"/games/{game_id}/state?at=5"),
        "store events": [(e.seq, e.hash) for e in hub.store.read(game_id)],
        "store verify": hub.store.verify(game_id),
        "verify head": (verified.status_code, verified.get_json()),
    }


def _models(hub: World, game_ids: list[str]) -> dict[str, Any]:
    """The read models as readers see them (merged over partitions), and every scoreboard."""
    projections = ProjectionStore(hub.store)
    as_of = projections.as_of()
    boards = {}
    for game_id in game_ids:
        board = projections.scoreboard(game_id) or archived_scoreboard(projections, game_id)
        boards[game_id] = None if board is None else json.dumps(board.to_dict(), sort_keys=True)
    return {
        "players": projections.players(as_of),
        "ratings": projections.ratings(as_of),
        "boards": boards,
        "lag": as_of.lag,
    }


def _games(hub: World) -> dict[str, Any]:
    """Archived games, an ended one not archived yet, and live games in every phase."""
    archived = [hub.bot_game() for _ in range(2)]  # bot games: 3 a minute an address
    while not any(_moves(g) for g in archived) and len(archived) < 12:  # one moves, surely
        game_id, tokens = hub.hearts.new_game(humans=1, rules=FAST)
        hub.hearts.play_out(game_id, tokens)
        archived.append(game_id)
    hub.project()
    moved = hub.archiver().run_once().archived
    assert sorted(moved) == sorted(archived)
    ended_hot = hub.bot_game()
    waiting = hub.hearts.create([None, None, {"bot": "random"}, {"bot": "random"}])["id"]
    hub.hearts.join(waiting, "early")
    more = []  # waiting games enough that several live games move (a game moves at odds 1/2)
    while sum(_moves(g) for g in [waiting, *more]) < 3 and len(more) < 30:
        more.append(hub.hearts.create([None] * 4)["id"])
    # Each played out after the change: one hand does (a game's length is not the point).
    passing, passing_tokens = hub.hearts.new_game(humans=4, rules=FAST)
    playing, playing_tokens = hub.hearts.new_game(humans=1, rules=FAST)
    for _ in range(3):  # into the first hand, mid-trick, waiting on the human
        hub.hearts.act(playing, *next(iter(playing_tokens.items())))
    clocked, clocked_tokens = hub.hearts.new_game(
        humans=4, rules={"time_control": "relaxed", **FAST}
    )
    endpoint, body = hub.hearts.move(hub.hearts.view(passing, passing_tokens[0]))
    path = f"{API}/games/{passing}/{endpoint}"
    answer = hub.hearts.post(path, body, passing_tokens[0], **{"Idempotency-Key": "k-1"})
    assert answer.status_code == 200, answer.get_json()
    retried = (path, body, answer.get_json())
    hub.hearts.wait_for_humans(playing, playing_tokens)
    hub.project()
    return {
        "archived": archived,
        "ended_hot": ended_hot,
        "waiting": waiting,
        "more": more,
        "passing": (passing, passing_tokens),
        "playing": (playing, playing_tokens),
        "clocked": (clocked, clocked_tokens),
        "retried": retried,
    }


def _ids(games: dict[str, Any]) -> list[str]:
    ids = [*games["archived"], games["ended_hot"], games["waiting"], *games["more"]]
    ids += [games[name][0] for name in ("passing", "playing", "clocked")]
    return ids


def test_a_change_to_a_multiple_keeps_every_game(client, key_prefix, tmp_path, request):
    url = archive_url(request, "disk", tmp_path)
    hub = _world(client, key_prefix, url, BEFORE, tmp_path)
    games = _games(hub)
    ids = _ids(games)
    assert {hub.store.partition_of(g) % BEFORE for g in ids} != {0}  # spread over partitions
    http = hub.app.test_client()
    heads = {g: http.get(f"{API}/games/{g}").headers[HEAD_HEADER] for g in ids}
    reads = {g: _reads(hub, g, heads[g]) for g in ids}
    models = _models(hub, ids)
    _stop(hub)

    moved: list[str] = []

    def crash_midway(step: str, game_id: str) -> None:
        if step == "moved":
            moved.append(game_id)
        if len(moved) == 3:
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        change_partitions(client, key_prefix, AFTER, hub.archive, on_step=crash_midway)
    for count in (BEFORE, AFTER):  # no process starts while the change is under way
        with pytest.raises(LayoutChanging, match=f"changing from {BEFORE} to {AFTER}"):
            create_app(Settings(key_prefix=key_prefix, partitions=count), redis=client)
    with pytest.raises(ChangeRefused, match=f"change to {AFTER} partitions is under way"):
        change_partitions(client, key_prefix, 3 * BEFORE, hub.archive)

    result = change_partitions(client, key_prefix, AFTER, hub.archive)  # run again: finishes
    assert (result.before, result.after) == (BEFORE, AFTER)
    movers = [g for g in ids if _moves(g)]
    assert result.moved + 3 >= len(movers) >= 4
    assert any(_moves(g) for g in games["archived"])
    assert recorded_partitions(client, key_prefix) == AFTER
    with pytest.raises(LayoutMismatch, match=f"HEARTS_PARTITIONS is {BEFORE}"):
        create_app(Settings(key_prefix=key_prefix, partitions=BEFORE), redis=client)
    again = change_partitions(client, key_prefix, AFTER, hub.archive)
    assert again.moved == 0 and again.generation is None  # done: nothing to do
    client.hset(f"{key_prefix}:layout", "changing", str(AFTER))  # killed inside finish()
    again = change_partitions(client, key_prefix, AFTER, hub.archive)
    assert again.moved == 0 and client.hget(f"{key_prefix}:layout", "changing") is None

    after = _world(client, key_prefix, url, AFTER, tmp_path)
    try:
        assert {g: _reads(after, g, heads[g]) for g in ids} == reads
        assert _models(after, ids) == models  # players, ratings, every scoreboard, lag
        for game_id in games["archived"]:  # read from the archive, under the new partition
            assert after.archive.record_of(game_id) is not None
            assert not client.exists(after.store.game_key(game_id))
        # An idempotent retry across the change answers as before.
        path, body, answer = games["retried"]
        token = games["passing"][1][0]
        response = after.hearts.post(path, body, token, **{"Idempotency-Key": "k-1"})
        assert response.status_code == 200 and response.get_json() == answer
        # Live games play on, under the new count: the waiting game fills, the others finish.
        waiting = games["waiting"]
        _, late = after.hearts.join(waiting, "late")
        assert after.hearts.view(waiting)["phase"] != "waiting"
        for name in ("playing", "passing", "clocked"):
            game_id, tokens = games[name]
            assert after.hearts.play_out(game_id, tokens)["phase"] == "finished"
        after.project()
        assert after.archiver().run_once().archived  # the ended games move under M
        assert ProjectionStore(after.store).as_of().lag == 0
    finally:
        _stop(after)


def _moves(game_id: str) -> bool:
    import zlib

    crc = zlib.crc32(game_id.encode("utf-8"))
    return crc % BEFORE != crc % AFTER


@pytest.mark.parametrize("to", [6, 2, 4, 0])
def test_only_a_larger_multiple_is_taken(client, key_prefix, to):
    check_layout(RedisEventStore(client, prefix=key_prefix, partitions=BEFORE))
    with pytest.raises(ChangeRefused, match=f"only to a (larger )?multiple of {BEFORE}"):
        PartitionChange(client, key_prefix, to)
    assert recorded_partitions(client, key_prefix) == BEFORE


def test_a_held_lease_refuses_the_change(client, key_prefix):
    from service.store.layout import layout_key

    store = RedisEventStore(client, prefix=key_prefix, partitions=BEFORE)
    check_layout(store)
    client.set(f"{store.log_key(2).removesuffix(':log')}:archivelease", "someone", px=60_000)
    with pytest.raises(ChangeRefused, match="leases are held"):
        PartitionChange(client, key_prefix, AFTER).begin()
    assert client.hget(layout_key(key_prefix), "changing") is None  # nothing marked


def test_the_command_refuses_a_non_multiple_and_changes_to_one(
    redis_server, key_prefix, monkeypatch, capsys, tmp_path
):
    from service.cli import main

    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)
    monkeypatch.setenv("HEARTS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HEARTS_PARTITIONS", str(BEFORE))
    assert main(["archive", "status"]) == 0  # the first use records 4
    capsys.readouterr()
    assert main(["partitions", "change", "--to", "6"]) == 1
    assert f"only to a multiple of {BEFORE}" in capsys.readouterr().err
    assert main(["partitions", "change", "--to", str(AFTER)]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["after"] == AFTER
    assert f"HEARTS_PARTITIONS={AFTER}" in out.err
    with pytest.raises(SystemExit) as exited:  # the old count is refused from now on
        main(["archive", "status"])
    assert exited.value.code == 2
    monkeypatch.setenv("HEARTS_PARTITIONS", str(AFTER))
    assert main(["archive", "status"]) == 0


# Game ids whose partitions under 4 and 8 are fixed: these (crc32 mod 8) move from k to k + 4 or
# stay, so each run moves archived and live games alike.
IDS = [f"pc-{i}" for i in range(10)]


@pytest.mark.parametrize("step", STEPS)
def test_a_run_killed_at_any_step_of_a_game_is_run_again(client, key_prefix, tmp_path, step):
    store = RedisEventStore(client, prefix=key_prefix, partitions=BEFORE)
    check_layout(store)
    attach(store, f"file://{tmp_path / 'archive'}")
    projections = ProjectionStore(store)
    projector = Projector(projections, consumer="p", public_log=Appender(store, "test/log"))
    projector.ensure_groups()
    rng = random.Random(5)
    plans = [play_game(g, RuleOptions(score_limit=15), rng) for g in IDS]
    plans = [  # every other game stays in play, cut midway
        p if i % 2 else GamePlan(p.game_id, p.batches[: len(p.batches) // 2])
        for i, p in enumerate(plans)
    ]
    append_all(store, plans, rng)
    drain(projector)
    archived = Archiver(store, store.archive, after_seconds=0, projections=projections).run_once()
    assert sorted(archived.archived) == IDS[1::2]
    movers = [g for g in IDS if _moves(g)]
    assert set(movers) & set(IDS[1::2]) and set(movers) - set(IDS[1::2])  # both kinds move
    before = {g: ([(e.seq, e.hash) for e in store.read(g)], store.verify(g)) for g in IDS}
    boards = {g: _board(projections, g) for g in IDS}
    players = projections.players(projections.as_of())

    def crash(at: str, game_id: str) -> None:
        if at == step and game_id == movers[1]:
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        change_partitions(client, key_prefix, AFTER, store.archive, on_step=crash)
    result = change_partitions(client, key_prefix, AFTER, store.archive)

    assert result.after == AFTER and 0 < result.moved < len(movers)
    moved = RedisEventStore(client, prefix=key_prefix, partitions=AFTER)
    check_layout(moved)
    attach(moved, f"file://{tmp_path / 'archive'}")
    after = {g: ([(e.seq, e.hash) for e in moved.read(g)], moved.verify(g)) for g in IDS}
    assert after == before
    for game_id in IDS:  # each game in one place: its new partition
        j = moved.partition_of(game_id)
        for p in range(AFTER):
            listed = client.zscore(moved.games_key(p), game_id) is not None
            assert listed == (p == j), (game_id, p)
            assert bool(client.exists(f"{moved.keys.partition_prefix(p)}:game:{game_id}")) == (
                p == j and game_id not in archived.archived
            )
    rebuilt = ProjectionStore(moved)
    assert {g: _board(rebuilt, g) for g in IDS} == boards
    assert rebuilt.players(rebuilt.as_of()) == players
    assert rebuilt.as_of().lag == 0
    total = sum(len(b) for p in plans for b in p.batches)
    assert sum(rebuilt.as_of().log_lengths) == total  # live logs plus archived entries


def _board(projections: ProjectionStore, game_id: str) -> Any:
    board = projections.scoreboard(game_id) or archived_scoreboard(projections, game_id)
    return None if board is None else board.to_dict()
