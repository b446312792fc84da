"""Ended games move to the archive once nothing live needs them, and nothing is lost."""

from __future__ import annotations

import pytest

from service.store.archive_format import decode


def _keys(hub, game_id: str) -> dict:
    store = hub.store
    partition = store.partition_of(game_id)
    raw = store.redis.xrange(store.log_key(partition), "-", "+")  # the log itself, not merged
    log = [i for i, fields in raw if fields[b"game_id"].decode() == game_id]
    return {"stream": store.redis.exists(store.game_key(game_id)), "log": len(log)}


def test_an_ended_game_moves_once_projected_and_nothing_before(hub):
    game_id = hub.bot_game()
    events = hub.store.read(game_id)
    archiver = hub.archiver()
    assert archiver.run_once().archived == []  # not projected yet: no candidate
    hub.project()
    done = archiver.run_once()
    assert done.archived == [game_id] and done.bytes > 0
    assert _keys(hub, game_id) == {"stream": 0, "log": 0}
    record = hub.archive.record_of(game_id)
    assert record is not None and record.version == len(events)
    assert list(decode(hub.archive.blobs.get(record.name), game_id).events) == events
    assert hub.store.read(game_id) == events  # read back through the archive
    assert archiver.run_once().archived == []  # and moved once
    assert hub.archive.counts()["ended_hot"] == 0


def test_a_moved_game_leaves_every_index_of_live_games(hub):
    # Given an ended game still named in the live-only indexes (entries left stale), when it
    # moves, then none of them names it any more: they hold live games only.
    game_id = hub.bot_game()
    hub.project()
    store = hub.store
    partition = store.partition_of(game_id)
    indexes = [store.waiting_key(partition), store.deadlines_key(partition)]
    indexes.append(store.silent_key(partition))
    for key in indexes:
        store.redis.zadd(key, {game_id: 1})
    assert hub.archiver().run_once().archived == [game_id]
    assert [store.redis.zscore(key, game_id) for key in indexes] == [None, None, None]


def test_a_game_in_play_or_waiting_stays(hub):
    ended = hub.bot_game()
    waiting = hub.hearts.create([None, None, None, {"bot": "random"}])["id"]
    hub.project()
    assert hub.archiver().run_once().archived == [ended]
    assert _keys(hub, waiting)["stream"] == 1


def test_a_game_waits_out_archive_after(hub):
    game_id = hub.bot_game()
    hub.project()
    assert hub.archiver(batch=10).run_once().archived == [game_id]
    later = hub.bot_game()
    hub.project()
    from service.app.archiver import Archiver

    slow = Archiver(hub.store, hub.archive, after_seconds=3600, projections=hub.projections)
    assert slow.run_once().waiting == [] and slow.run_once().archived == []
    assert _keys(hub, later)["stream"] == 1


def test_an_unacknowledged_game_stays_until_the_projector_has_it(hub):
    game_id = hub.bot_game()
    hub.project()
    # Another consumer group on the log that has not read the game yet: it must stay.
    key = hub.store.log_key(hub.store.partition_of(game_id))
    hub.store.redis.xgroup_create(key, "auditor", id="0")
    archiver = hub.archiver()
    assert archiver.run_once().waiting == [game_id]
    entries = hub.store.redis.xreadgroup("auditor", "a", {key: ">"}, count=100_000)
    ids = [entry_id for _, stream in entries for entry_id, _ in stream]
    assert archiver.run_once().waiting == [game_id]  # delivered, not acknowledged
    hub.store.redis.xack(key, "auditor", *ids)
    assert archiver.run_once().archived == [game_id]


def test_an_archived_game_takes_no_append(hub):
    game_id = hub.bot_game()
    hub.project()
    hub.archiver().run_once()
    from service.store.envelope import NewEvent
    from service.store.errors import ConcurrencyConflict

    version = hub.store.version(game_id)
    for expected in (0, version):
        try:
            hub.store.append(game_id, expected, [NewEvent("X", 1, {})], "c")
        except ConcurrencyConflict as conflict:
            assert conflict.actual == version
        else:
            raise AssertionError("appended to an archived game")
    assert hub.store.read(game_id)[-1].type == "GameEnded"


def test_an_object_of_other_bytes_for_the_same_game_is_kept(hub, monkeypatch):
    """A pass that died after its put, redone by a version that compresses otherwise."""
    from service.store import archive_format

    game_id = hub.bot_game()
    hub.project()
    hot = hub.archive.hot(game_id)
    monkeypatch.setattr(archive_format, "LEVEL", 3)
    earlier = hub.archive.put(game_id, hot)
    monkeypatch.undo()
    assert hub.archiver().run_once().archived == [game_id]
    assert hub.archive.record_of(game_id) == earlier  # the object already there, as it was
    assert hub.store.read(game_id) == hot.events


def test_an_object_of_another_game_under_the_name_is_refused(hub):
    game_id = hub.bot_game()
    hub.project()
    hub.archive.blobs.put(hub.archive.blob_name(game_id), b"not this game")
    done = hub.archiver().run_once()
    assert done.failed == [game_id] and done.archived == []
    assert hub.store.redis.exists(hub.store.game_key(game_id))  # nothing removed


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_an_app_told_to_archive_moves_ended_games_itself(redis_client, key_prefix, backend_url):
    from hearts_client.note import Verifier, open_checkpoint

    from service.api.factory import create_app
    from service.settings import Settings
    from tests.api.helpers import Hearts, poll

    settings = Settings(
        key_prefix=key_prefix,
        archive_url=backend_url,
        archive_after=0,
        archiver=True,
        projector_in_process=True,
    )
    app = create_app(settings, redis=redis_client)
    try:
        hearts = Hearts(app.test_client())
        game = hearts.create([{"bot": "random"}] * 4, rules={"score_limit": 30})
        hearts.wait_for(game["id"], lambda v: v["phase"] == "finished", timeout=120)
        store = app.extensions["hearts"].store
        poll(lambda: store.archive.record_of(game["id"]), lambda r: r is not None, 60)
        assert hearts.view(game["id"])["phase"] == "finished"  # read from the archive
        # Its passes also put the public log's checkpoint in the archive, the game's leaf in
        # it, with no request for one (the holder of partition 0 publishes).
        log = app.extensions["hearts.log"]

        def stored():
            note = store.archive.blobs.get("checkpoint")
            return None if note is None else open_checkpoint(note.decode(), key)[1]

        key = Verifier.parse(log.vkey)
        checkpoint = poll(stored, lambda found: found is not None and found.size == 1, 60)
        assert checkpoint.root == log.tree.root(1)
    finally:
        app.extensions["hearts.stop"]()


def test_apps_built_by_hand_do_not_archive(hub):
    assert "hearts.archiver" not in hub.app.extensions
