"""The low findings of issue 42, each as the attack was made: a tile path whose index has more
digits than int() takes, look-alike guest names, one damaged archived object in a games list,
an archived object altered on disk while the game sits in a worker's cache."""

from __future__ import annotations

import fakeredis
import pytest

from service.api.factory import create_app
from service.settings import Settings

PROBLEM = "application/problem+json"


@pytest.fixture
def client():
    app = create_app(Settings(key_prefix="lows"), redis=fakeredis.FakeRedis())
    yield app.test_client()
    app.extensions["hearts.stop"]()


@pytest.mark.parametrize("groups", [1434, 1500, 1630])
def test_a_tile_index_of_more_than_4300_digits_is_the_tile_error_not_a_500(client, groups):
    """int() refuses a string of more than 4,300 digits (ValueError): the path was a 500."""
    path = "/api/v1/log/tile/0/" + "x123/" * groups + "456"
    assert len(path) < 8190  # within the request line gunicorn and the app accept
    response = client.get(path)
    assert response.status_code == 404, response.get_data(as_text=True)[:200]
    assert response.mimetype == PROBLEM
    assert response.get_json()["code"] == "tile-not-found"


@pytest.mark.parametrize(
    "guest",
    [
        "Ma\u04cf\u04cfory610",  # Cyrillic small palochka: UTS #39's prototype is "i"
        "M\u1ea1llory610",  # a with dot below (precomposed)
        "Ma\u0323llory610",  # the same, decomposed
        "MA\u04c0\u04c0ORY610",  # capital palochka, upper case
    ],
)
def test_a_guest_may_not_sit_as_a_folded_lookalike_of_a_registered_name(client, guest):
    registered = client.post("/api/v1/players", json={"name": "Mallory610"})
    assert registered.status_code == 201, registered.get_json()
    created = client.post("/api/v1/games", json={"seats": [None, None, None, {"bot": "random"}]})
    game = created.get_json()["id"]
    joined = client.post(f"/api/v1/games/{game}/seats", json={"name": guest})
    assert joined.status_code == 409, joined.get_json()
    assert joined.get_json()["code"] == "name-confusable"
    # Nor register it: the account's folded skeletons are held too.
    again = client.post("/api/v1/players", json={"name": guest})
    assert again.status_code == 409 and again.get_json()["code"] == "name-confusable"
    # A name that only shares letters is not refused.
    other = client.post(f"/api/v1/games/{game}/seats", json={"name": "Malory610"})
    assert other.status_code == 201, other.get_json()


def test_one_damaged_archived_object_does_not_hide_the_games_list(key_prefix, tmp_path):
    """One archived object altered on disk made `GET /games?limit=100` a 409 for everyone: the
    others are listed, and the damaged one is named."""
    from tests.archive.helpers import world
    from tests.blob_helpers import overwrite_object

    hub = world(fakeredis.FakeRedis(), key_prefix, (tmp_path / "archive").as_uri())
    try:
        damaged, sound = hub.bot_game(), hub.bot_game()
        hub.project()
        assert sorted(hub.archiver().run_once().archived) == sorted([damaged, sound])
        name = hub.archive.blob_name(damaged)
        data = hub.archive.blobs.get(name)
        overwrite_object(hub.archive.blobs, name, data[:-9] + b"123456789")
        hub.archive._cache.clear()
        hub.app.extensions["hearts"].cache.forget(damaged)
        http = hub.app.test_client()
        answer = http.get("/api/v1/games?limit=100")
        assert answer.status_code == 200, answer.get_json()
        body = answer.get_json()
        assert [g["id"] for g in body["games"]] == [sound]
        assert [d["id"] for d in body["damaged"]] == [damaged] and body["damaged"][0]["detail"]
        assert http.get(f"/api/v1/games/{damaged}").status_code == 409
    finally:
        hub.app.extensions["hearts.stop"]()


def test_the_audit_reads_the_stored_object_not_a_copy_in_memory(key_prefix, tmp_path):
    """An archived object altered on disk while its game sat decoded in the worker's memory: the
    audit said it was sound. It reads the stored object again, and finds the damage."""
    from tests.archive.helpers import world
    from tests.blob_helpers import overwrite_object

    hub = world(fakeredis.FakeRedis(), key_prefix, (tmp_path / "archive").as_uri())
    try:
        game = hub.bot_game()
        hub.project()
        assert hub.archiver().run_once().archived == [game]
        http = hub.app.test_client()
        assert http.get(f"/api/v1/games/{game}/audit").status_code == 200  # decoded, kept
        assert http.get(f"/api/v1/games/{game}").status_code == 200
        name = hub.archive.blob_name(game)
        data = hub.archive.blobs.get(name)
        overwrite_object(hub.archive.blobs, name, data[:-9] + b"123456789")
        answer = http.get(f"/api/v1/games/{game}/audit")
        assert answer.status_code == 409, answer.get_json()
        assert answer.get_json()["code"] in ("corrupt-game", "corrupt-store")
    finally:
        hub.app.extensions["hearts.stop"]()
