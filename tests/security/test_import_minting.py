"""Issue 42, imports cannot be minted.

The attack: change ``game_id`` in an export and recompute the SHA-256 chain (no secret is
needed); each copy imported as a new game, 7.6 MB of Redis a request. Now an import whose
content (its deals and moves, whatever its ids, names, times or chain) is already here is that
game: the answer names it (200, ``existing``) and nothing is appended; and an imported game
goes to the archive at the archiver's next pass rather than staying in Redis until
``HEARTS_ARCHIVE_AFTER`` has passed.
"""

from __future__ import annotations

import copy
from typing import Any

import fakeredis

from service.app.archiver import Archiver
from tests.archive.helpers import World, world
from tests.replay.tamper import rehash

GAMES = "/api/v1/games"


def minted(document: dict[str, Any], game_id: str, rename: str | None = None) -> dict[str, Any]:
    """The export as another game: every id changed (a name too, if given), chain recomputed."""
    doc = copy.deepcopy(document)
    old = doc["game_id"]
    doc["game_id"] = game_id
    for event in doc["events"]:
        event["game_id"] = game_id
        event["command_id"] = event["command_id"].replace(old, game_id) + "-x"
        payload = event["payload"]
        if payload.get("game_id") == old:
            payload["game_id"] = game_id
        if rename and event["type"] == "PlayerJoined":
            payload["name"] = rename
    doc["events"] = rehash(doc["events"])
    doc["last_hash"] = doc["events"][-1]["hash"]
    return doc


def redis_footprint(hub: World) -> tuple[int, int]:
    """Games listed, and entries in every partition log and game stream."""
    redis = hub.store.redis
    keys = [k for k in redis.scan_iter(f"{hub.store.prefix}:*") if redis.type(k) == b"stream"]
    return len(hub.hearts.http.get(f"{GAMES}?limit=100").get_json()["games"]), sum(
        redis.xlen(k) for k in keys
    )


def test_an_export_with_its_ids_changed_and_chain_recomputed_is_the_same_game(key_prefix, tmp_path):
    hub = world(
        fakeredis.FakeRedis(server=fakeredis.FakeServer()),
        key_prefix,
        (tmp_path / "archive").as_uri(),
        bot_poll_seconds=0.05,
    )
    try:
        http = hub.app.test_client()
        game_id = hub.bot_game(hand_limit=1)
        export = http.get(f"{GAMES}/{game_id}/export").get_json()
        first = http.post(f"{GAMES}/import", json=export)
        assert first.status_code == 201, first.get_json()
        imported = first.get_json()["id"]
        before = redis_footprint(hub)

        for n in range(5):
            copy_ = minted(export, f"gminted{n:013d}", rename=f"someone{n}" if n % 2 else None)
            again = http.post(f"{GAMES}/import", json=copy_)
            assert again.status_code == 200, again.get_json()
            assert again.get_json()["id"] == imported
        assert redis_footprint(hub) == before  # nothing appended, no game listed
        # The original's own export imported again: the same game too.
        assert http.post(f"{GAMES}/import", json=export).get_json()["id"] == imported
    finally:
        hub.app.extensions["hearts.stop"]()


def test_an_imported_game_goes_to_the_archive_at_the_next_pass(key_prefix, tmp_path):
    hub = world(
        fakeredis.FakeRedis(server=fakeredis.FakeServer()),
        key_prefix,
        (tmp_path / "archive").as_uri(),
        bot_poll_seconds=0.05,
    )
    try:
        http = hub.app.test_client()
        game_id = hub.bot_game(hand_limit=1)
        export = http.get(f"{GAMES}/{game_id}/export").get_json()
        imported = http.post(f"{GAMES}/import", json=export).get_json()["id"]
        hub.project()
        # An archiver that moves games an hour after their end: the game played here stays,
        # the imported one (nobody plays it, it ended before it came) goes at once.
        Archiver(hub.store, hub.archive, after_seconds=3600, projections=hub.projections).run_once()
        assert hub.archive.record_of(imported) is not None
        assert not hub.store.redis.exists(hub.store.game_key(imported))
        assert hub.archive.record_of(game_id) is None
        # Read from the archive as before.
        assert http.get(f"{GAMES}/{imported}/audit").get_json()["ok"]
        again = http.post(f"{GAMES}/import", json=minted(export, "gminted0000000000009"))
        assert again.status_code == 200 and again.get_json()["id"] == imported
    finally:
        hub.app.extensions["hearts.stop"]()
