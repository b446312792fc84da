"""Export a game, import it as a new one: it replays identically; a bad document is refused."""

from __future__ import annotations

import copy
import json

import fakeredis
import pytest

from domain.views import public_view, seat_view
from service.api.factory import create_app
from service.app.errors import GameAlreadyExists
from service.app.export import ImportRefused, export_text, parse_events
from service.app.game import StoredGame, fold_records
from service.app.replay import Replay
from service.settings import Settings
from service.store.event_store import RedisEventStore
from tests.api.helpers import Hearts, auth, chosen_seed
from tests.replay.helpers import play_game


@pytest.fixture
def store() -> RedisEventStore:
    return RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()))


def views_at_every_seq(store: RedisEventStore, game_id: str) -> list[list[dict]]:
    """Public and every seat's view after each event (the game id left out)."""
    out = []
    table = StoredGame()
    for event in store.read(game_id):
        table = fold_records(table, [event])
        state = table.state
        views = [public_view(state).to_dict()]
        views += [seat_view(state, s).to_dict() for s in range(len(state.seats))]
        for view in views:
            view.pop("id")
        out.append(views)
    return out


def test_export_then_import_replays_identically(store):
    play_game(store, "original", seed="export")
    document = json.loads(json.dumps(Replay(store).export("original", finished_only=False)))
    assert document["format"] == "hearts-game-export" and document["format_version"] == 1
    assert document["phase"] == "finished" and document["version"] == store.version("original")
    assert all("credential" not in seat for seat in document["seats"])
    result = Replay(store).import_(document, "copy")
    assert result.body == {
        "id": "copy",
        "version": store.version("original"),
        "source_game_id": "original",
    }
    assert Replay(store).audit("copy").ok
    assert views_at_every_seq(store, "copy") == views_at_every_seq(store, "original")
    original, copied = store.read("original"), store.read("copy")
    for a, b in zip(original, copied, strict=True):
        assert (a.seq, a.type) == (b.seq, b.type)
        if a.type == "GameCreated":
            assert {**a.payload, "game_id": "copy"} == b.payload
        elif a.type == "PlayerJoined":
            assert {**a.payload, "credential": None} == b.payload  # no token acts in the copy
        else:
            assert a.payload == b.payload
    with pytest.raises(GameAlreadyExists):
        Replay(store).import_(document, "copy")


def test_an_unfinished_game_exports_and_imports_too(store):
    play_game(store, "half", seed="half", stop_after=120)
    document = Replay(store).export("half", finished_only=False)
    assert document["phase"] == "playing"
    Replay(store).import_(document, "half-copy")
    assert views_at_every_seq(store, "half-copy") == views_at_every_seq(store, "half")


def test_the_text_form_tells_the_game(store):
    play_game(store, "told", seed="text")
    document = Replay(store).export("told", finished_only=False)
    text = export_text(document)
    assert text.startswith("hearts-game-export v1")
    assert "Hand 1 (finished)" in text and "♠" in text and "Game over" in text
    assert document["last_hash"] in text


def test_import_refuses_bad_documents(store):
    play_game(store, "source", seed="refuse", stop_after=80)
    good = Replay(store).export("source", finished_only=False)

    def refused(document) -> ImportRefused:
        with pytest.raises(ImportRefused) as caught:
            Replay(store).import_(document, "never")
        assert not store.exists("never"), "nothing appended"
        return caught.value

    assert refused([]).code == "invalid-export"
    assert refused({**good, "format": "other"}).code == "invalid-export"
    assert refused({**good, "format_version": 2}).code == "unsupported-export-version"
    assert refused({**good, "events": []}).code == "invalid-export"
    broken = copy.deepcopy(good)
    del broken["events"][3]["hash"]
    assert refused(broken).code == "invalid-export"
    assert refused({**good, "version": 3}).code == "invalid-export"
    tampered = copy.deepcopy(good)
    played = [e for e in tampered["events"] if e["type"] == "CardPlayed"]
    played[5]["payload"]["card"] = played[0]["payload"]["card"]
    error = refused(tampered)
    assert error.code == "export-fails-audit" and error.report is not None
    assert any(d.seq == played[5]["seq"] for d in error.report.discrepancies)
    assert len(parse_events(good)) == good["version"]


def test_export_and_import_over_http(key_prefix):
    # A small body limit for commands: an export is far larger, and still imports.
    limit = 16 * 1024
    app = create_app(
        Settings(key_prefix=key_prefix, max_body_bytes=limit),
        redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()),
    )
    client = app.test_client()
    hearts = Hearts(client)
    game_id, tokens = hearts.new_game(2, rules={"score_limit": 27}, seed=chosen_seed("http-export"))
    in_play = client.get(f"/api/v1/games/{game_id}/export")
    assert in_play.status_code == 409 and in_play.get_json()["code"] == "game-in-progress"
    hearts.play_out(game_id, tokens)
    response = client.get(f"/api/v1/games/{game_id}/export")
    assert response.status_code == 200
    document = response.get_json()
    assert len(json.dumps(document)) > limit  # more than a command body may be
    text = client.get(f"/api/v1/games/{game_id}/export?format=text")
    assert text.mimetype == "text/plain" and "Hand 2" in text.get_data(as_text=True)

    created = client.post("/api/v1/games/import", json=document)
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert body["source_game_id"] == game_id and body["version"] == document["version"]
    assert created.headers["Location"] == f"/api/v1/games/{body['id']}"
    new_id = body["id"]
    original = client.get(f"/api/v1/games/{game_id}").get_json()
    copied = client.get(f"/api/v1/games/{new_id}").get_json()
    # The copy says it is one, and of which game.
    assert {**original, "id": new_id, "imported": True, "imported_from": game_id} == copied
    assert original["imported"] is False
    assert client.get(f"/api/v1/games/{new_id}/audit").get_json()["ok"] is True
    for at in range(1, document["version"] + 1, 7):
        a = client.get(f"/api/v1/games/{game_id}/state?at={at}").get_json()
        b = client.get(f"/api/v1/games/{new_id}/state?at={at}").get_json()
        assert {**a, "id": new_id, "imported": True, "imported_from": game_id} == b
    # The original's tokens do not act in the copy.
    assert client.get(f"/api/v1/games/{new_id}", headers=auth(tokens[0])).status_code == 401

    # Idempotent by content: the same export again (with a key or not, exported again or not)
    # answers 200 with the game it became, and imports nothing.
    version = client.get(f"/api/v1/games/{new_id}").get_json()["version"]
    again = client.post("/api/v1/games/import", json={**document, "exported_at": "later"})
    keyed = client.post("/api/v1/games/import", json=document, headers={"Idempotency-Key": "k"})
    for answer in (again, keyed):
        assert answer.status_code == 200 and answer.get_json() == body
        assert answer.headers["Location"] == f"/api/v1/games/{new_id}"
    assert client.get(f"/api/v1/games/{new_id}").get_json()["version"] == version

    # Idempotent by key: the same key and body, the same answer; another body, 422.
    game_id, tokens = hearts.new_game(
        4, rules={"score_limit": 5}, seed=chosen_seed("http-export-2")
    )
    hearts.play_out(game_id, tokens)
    second = client.get(f"/api/v1/games/{game_id}/export").get_json()
    first = client.post("/api/v1/games/import", json=second, headers={"Idempotency-Key": "k2"})
    again = client.post("/api/v1/games/import", json=second, headers={"Idempotency-Key": "k2"})
    assert first.status_code == again.status_code == 201
    assert first.get_json() == again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    other = client.post(
        "/api/v1/games/import",
        json={**second, "exported_at": "x"},
        headers={"Idempotency-Key": "k2"},
    )
    assert other.status_code == 422 and other.get_json()["code"] == "idempotency-key-reused"

    tampered = copy.deepcopy(document)
    scored = next(e for e in tampered["events"] if e["type"] == "HandScored")
    scored["payload"]["totals"][0] += 5
    refused = client.post("/api/v1/games/import", json=tampered)
    problem = refused.get_json()
    assert refused.status_code == 422 and problem["code"] == "export-fails-audit"
    assert refused.mimetype == "application/problem+json"
    assert any(d["seq"] == scored["seq"] for d in problem["discrepancies"])
    for bad in ({"format": "x"}, {**document, "format_version": 9}):
        response = client.post("/api/v1/games/import", json=bad)
        assert response.status_code == 422
    assert (
        client.post("/api/v1/games/import", data="[1]", content_type="application/json").status_code
        == 422
    )
