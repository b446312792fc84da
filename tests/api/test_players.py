"""Registered players (issue 20): a name held once, a key shown once and stored hashed, rotate
and revoke, seats bound to a player by its key, guests, a player's games, resume elsewhere."""

from __future__ import annotations

import hashlib

import pytest

from service.api.factory import create_app
from service.store.upcasting import upcast
from tests.api.helpers import PROBLEM, auth

PLAYERS = "/api/v1/players"


def register(client, name: str) -> dict:
    response = client.post(PLAYERS, json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.get_json()
    assert response.mimetype == PROBLEM
    assert response.get_json()["code"] == code
    return response.get_json()


def one_open_seat(hearts) -> str:
    """A game with seat 0 open and three bots."""
    return hearts.create([None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}])["id"]


def join_with_key(client, game_id: str, key: str, **body) -> dict:
    response = client.post(f"/api/v1/games/{game_id}/seats", json=body, headers=auth(key))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


# -- the account -----------------------------------------------------------------------------------


def test_a_key_is_shown_once_and_stored_only_hashed(client, redis_client, key_prefix) -> None:
    response = client.post(PLAYERS, json={"name": "  Bea  "})
    assert response.status_code == 201
    assert response.headers["Cache-Control"] == "no-store"
    bea = response.get_json()
    assert bea["name"] == "Bea"  # normalized as a join's name
    key = bea["key"]
    assert key.startswith("hp_") and len(key) >= 3 + 43  # 256 bits, base64url
    me = client.get(f"{PLAYERS}/me", headers=auth(key))
    assert me.status_code == 200
    assert me.get_json() == {"id": bea["id"], "name": "Bea", "created": bea["created"]}
    assert "key" not in me.get_json()
    # Redis holds the key's SHA-256 and never the key.
    stored = b""
    for name in redis_client.scan_iter(f"{key_prefix}:*", count=1000):
        kind = redis_client.type(name)
        stored += name
        if kind in (b"string", "string"):
            stored += redis_client.get(name) or b""
        elif kind in (b"hash", "hash"):
            for field, value in redis_client.hgetall(name).items():
                stored += field + value
    assert key.encode() not in stored
    assert hashlib.sha256(key.encode()).hexdigest().encode() in stored


@pytest.mark.parametrize("again", ["Bea", "bea", "BEA", "ＢＥＡ", "  bea "])
def test_a_name_cannot_be_registered_twice_nor_a_look_alike(client, again: str) -> None:
    register(client, "Bea")
    problem(client.post(PLAYERS, json={"name": again}), 409, "player-name-taken")


def test_a_bots_name_or_a_bad_name_is_refused(client) -> None:
    problem(client.post(PLAYERS, json={"name": "Random"}), 422, "name-reserved")
    problem(client.post(PLAYERS, json={"name": "a\u200bb"}), 422, "invalid-name")
    problem(client.post(PLAYERS, json={}), 422, "validation-error")


def test_rotate_stops_the_old_key_and_revoke_stops_every_key(client) -> None:
    old = register(client, "Bea")["key"]
    response = client.post(f"{PLAYERS}/me/key", json={}, headers=auth(old))
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    new = response.get_json()["key"]
    assert new != old and new.startswith("hp_")
    problem(client.get(f"{PLAYERS}/me", headers=auth(old)), 401, "unauthorized")
    problem(client.post(f"{PLAYERS}/me/key", json={}, headers=auth(old)), 401, "unauthorized")
    assert client.get(f"{PLAYERS}/me", headers=auth(new)).status_code == 200
    revoked = client.delete(f"{PLAYERS}/me/key", headers=auth(new))
    assert revoked.status_code == 200 and revoked.get_json()["name"] == "Bea"
    problem(client.get(f"{PLAYERS}/me", headers=auth(new)), 401, "unauthorized")
    problem(client.delete(f"{PLAYERS}/me/key", headers=auth(new)), 401, "unauthorized")
    # The name stays held.
    problem(client.post(PLAYERS, json={"name": "bea"}), 409, "player-name-taken")


def test_no_key_or_a_key_of_nobody_is_unauthorized(client) -> None:
    problem(client.get(f"{PLAYERS}/me"), 401, "unauthorized")
    problem(client.get(f"{PLAYERS}/me", headers=auth("hp_nobody")), 401, "unauthorized")
    problem(client.get(f"{PLAYERS}/me/games", headers=auth("a-seat-token")), 401, "unauthorized")


# -- seats bound to a player -------------------------------------------------------------------


def test_a_seat_joined_with_a_key_is_the_players_and_a_guest_is_marked(client, hearts) -> None:
    bea = register(client, "Bea")
    game = hearts.create([None, None, {"bot": "random"}, {"bot": "random"}])["id"]
    joined = join_with_key(client, game, bea["key"])
    assert joined["seat"] == 0
    seat = joined["view"]["seats"][0]
    assert (seat["name"], seat["player_id"], seat["guest"]) == ("Bea", bea["id"], False)
    # A guest may not take the registered name, in any spelling, at this table or another.
    for typed in ("Bea", "bea", "ＢＥＡ"):
        response = client.post(f"/api/v1/games/{game}/seats", json={"name": typed})
        problem(response, 409, "player-name-taken")
    other = one_open_seat(hearts)
    problem(
        client.post(f"/api/v1/games/{other}/seats", json={"name": "bea"}), 409, "player-name-taken"
    )
    hearts.join(game, "cy")
    seats = hearts.view(game)["seats"]
    assert (seats[1]["name"], seats[1]["player_id"], seats[1]["guest"]) == ("cy", None, True)
    assert (seats[2]["guest"], seats[2]["player_id"]) == (False, None)  # a bot's seat
    # Only the seat joined with the key is among the player's games.
    games = client.get(f"{PLAYERS}/me/games", headers=auth(bea["key"])).get_json()["games"]
    assert [(g["id"], g["seat"]) for g in games] == [(game, 0)]
    assert games[0]["phase"] == "passing" and games[0]["awaiting"] == [0, 1]


def test_a_join_with_a_key_takes_the_registered_name(client, hearts) -> None:
    bea = register(client, "Bea")
    game = one_open_seat(hearts)
    response = client.post(
        f"/api/v1/games/{game}/seats", json={"name": "Zed"}, headers=auth(bea["key"])
    )
    problem(response, 422, "invalid-name")
    assert join_with_key(client, game, bea["key"], name="bea")["view"]["seats"][0]["name"] == "Bea"


def test_a_join_with_a_bad_key_or_without_a_name_is_refused(client, hearts) -> None:
    game = one_open_seat(hearts)
    url = f"/api/v1/games/{game}/seats"
    problem(client.post(url, json={}, headers=auth("hp_nobody")), 401, "unauthorized")
    problem(client.post(url, json={}), 422, "invalid-name")
    problem(client.post("/api/v1/games/gnone/seats", json={"name": "x"}), 404, "game-not-found")
    key = register(client, "Bea")["key"]
    problem(
        client.post("/api/v1/games/gnone/seats", json={}, headers=auth(key)), 404, "game-not-found"
    )


def test_a_join_with_a_key_retried_gets_its_token_back(client, hearts) -> None:
    key = register(client, "Bea")["key"]
    game = one_open_seat(hearts)
    headers = {**auth(key), "Idempotency-Key": "join-once-" + "4b9e1f7a2c6d8e0f3a5b7c9d1e2f4a6b"}
    first = client.post(f"/api/v1/games/{game}/seats", json={}, headers=headers)
    again = client.post(f"/api/v1/games/{game}/seats", json={}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json()["token"] == first.get_json()["token"]


def test_a_game_indexed_without_the_players_seat_is_not_listed(app, client, hearts) -> None:
    """The index is written before the join: a join that then failed leaves an entry that the
    listing skips."""
    bea = register(client, "Bea")
    game = one_open_seat(hearts)
    hearts.join(game, "cy")  # the seat goes to a guest
    app.extensions["hearts.players"].accounts.add_game(bea["id"], game)
    app.extensions["hearts.players"].accounts.add_game(bea["id"], "gnone")
    assert client.get(f"{PLAYERS}/me/games", headers=auth(bea["key"])).get_json() == {"games": []}
    problem(
        client.get(f"{PLAYERS}/me/games?limit=0", headers=auth(bea["key"])), 422, "validation-error"
    )


# -- resume on another device ------------------------------------------------------------------


def test_resume_hands_out_a_fresh_token_and_the_old_one_stops(client, hearts) -> None:
    key = register(client, "Bea")["key"]
    game = one_open_seat(hearts)
    old = join_with_key(client, game, key)["token"]
    response = client.post(f"/api/v1/games/{game}/seats/0/resume", json={}, headers=auth(key))
    assert response.status_code == 200, response.get_json()
    assert response.headers["Cache-Control"] == "no-store"
    resumed = response.get_json()
    new = resumed["token"]
    assert new != old and resumed["seat"] == 0 and resumed["view"]["seat"] == 0
    assert hearts.view(game, new)["seat"] == 0
    problem(client.get(f"/api/v1/games/{game}", headers=auth(old)), 401, "unauthorized")
    view = hearts.view(game, new)
    cards = {"cards": view["legal_cards"][:3]}
    problem(hearts.post(f"/api/v1/games/{game}/pass", cards, old), 401, "unauthorized")
    assert hearts.post(f"/api/v1/games/{game}/pass", cards, new).status_code == 200
    # The game's audit decides the resume again: it is the player's seat.
    assert client.get(f"/api/v1/games/{game}/audit").get_json()["ok"] is True


def test_only_the_players_own_seat_can_be_resumed(client, hearts) -> None:
    bea, cy = register(client, "Bea"), register(client, "Cy")
    game = hearts.create([None, None, None, {"bot": "random"}])["id"]
    join_with_key(client, game, bea["key"])
    _, guest_token = hearts.join(game, "dee")
    url = f"/api/v1/games/{game}"
    problem(
        client.post(f"{url}/seats/0/resume", json={}, headers=auth(cy["key"])), 403, "not-your-seat"
    )
    problem(
        client.post(f"{url}/seats/1/resume", json={}, headers=auth(bea["key"])),
        403,
        "not-your-seat",
    )
    problem(
        client.post(f"{url}/seats/2/resume", json={}, headers=auth(bea["key"])),
        403,
        "not-your-seat",
    )
    problem(
        client.post(f"{url}/seats/9/resume", json={}, headers=auth(bea["key"])),
        422,
        "seat-out-of-range",
    )
    problem(
        client.post(f"{url}/seats/0/resume", json={}, headers=auth(guest_token)),
        401,
        "unauthorized",
    )
    problem(client.post(f"{url}/seats/0/resume", json={}), 401, "unauthorized")
    problem(
        client.post("/api/v1/games/gnone/seats/0/resume", json={}, headers=auth(bea["key"])),
        404,
        "game-not-found",
    )


def test_an_old_token_fails_in_a_worker_whose_cache_is_behind(
    redis_client, settings, client, hearts
) -> None:
    """Another worker cached the game while the old token was good: its cached check is not
    trusted once the game moved on (the token is checked again on the game as it is)."""
    key = register(client, "Bea")["key"]
    game = one_open_seat(hearts)
    old = join_with_key(client, game, key)["token"]
    other = create_app(settings, redis=redis_client).test_client()
    view = other.get(f"/api/v1/games/{game}", headers=auth(old)).get_json()  # cached there
    assert (
        client.post(f"/api/v1/games/{game}/seats/0/resume", json={}, headers=auth(key)).status_code
        == 200
    )
    response = other.post(
        f"/api/v1/games/{game}/pass", json={"cards": view["legal_cards"][:3]}, headers=auth(old)
    )
    problem(response, 401, "unauthorized")


def test_a_join_stored_before_players_existed_is_read_as_a_guests() -> None:
    version, payload = upcast("PlayerJoined", 1, {"seat": 0, "name": "ann", "credential": None})
    assert version == 2 and payload["player_id"] is None


def test_an_exported_game_imports_without_its_players_or_resumes(client, hearts) -> None:
    key = register(client, "Bea")["key"]
    game = hearts.create(
        [None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}], rules={"score_limit": 20}
    )["id"]
    join_with_key(client, game, key)
    url = f"/api/v1/games/{game}/seats/0/resume"
    token = client.post(url, json={}, headers=auth(key)).get_json()["token"]
    hearts.play_out(game, {0: token})
    document = client.get(f"/api/v1/games/{game}/export").get_json()
    assert "SeatResumed" in [e["type"] for e in document["events"]]
    response = client.post("/api/v1/games/import", json=document)
    assert response.status_code == 201, response.get_json()
    copy = response.get_json()["id"]
    seat = hearts.view(copy)["seats"][0]
    assert (seat["name"], seat["player_id"], seat["guest"]) == ("Bea", None, True)
    copied = client.get(f"/api/v1/games/{copy}/events?limit=1000").get_json()["events"]
    assert "SeatResumed" not in [e["type"] for e in copied]
    assert len(copied) == len(document["events"]) - 1
    assert client.get(f"/api/v1/games/{copy}/audit").get_json()["ok"] is True
