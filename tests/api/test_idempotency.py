"""Idempotency-Key: a retry gets the first response and appends nothing; another body is 422."""

from __future__ import annotations

import json

from domain.cards import DECK
from tests.api.helpers import Hearts, auth, chosen_seed
from tests.api.test_errors import assert_problem
from tests.background import settle

# A join's key must be unguessable (tests/security/test_join_receipt.py): 22+ varied characters.
JOIN_ANN = "join-ann-Qx2Lp9ZkR4Tw8Vb3Hc"


def key(k: str) -> dict[str, str]:
    return {"Idempotency-Key": k}


def test_a_retried_command_returns_the_first_response_and_appends_nothing(
    hearts: Hearts, client, service, app, monkeypatch
):
    # Seat 1 is dealt 2C, so after the pass a bot leads: the response includes the bots' moves
    # (those within the request's budget: here all of them, whatever the machine's load; and
    # the app's runner idle first, so it is not the one that plays them).
    deal = [[str(c) for c in DECK[(seat - 1) % 4 :: 4]] for seat in range(4)]
    game_id, tokens = hearts.new_game(1, deals=[deal])  # three bots
    settle(app, [game_id])
    monkeypatch.setattr(service, "bot_request_seconds", 60.0)
    view = hearts.view(game_id, tokens[0], 0)
    url = f"/api/v1/games/{game_id}/pass"
    cards = view["legal_cards"]
    body = {"cards": cards[:3]}
    headers = {**auth(tokens[0]), **key("pass-1")}
    first = client.post(url, json=body, headers=headers)
    assert first.status_code == 200
    assert any(e["command_id"].endswith("+bot1") for e in first.get_json()["events"])
    hearts.wait_for_humans(game_id, tokens)  # the bots' moves past the request's budget
    version = service.store.version(game_id)
    again = client.post(url, json=body, headers=headers)
    assert again.status_code == 200
    assert again.get_json() == first.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["ETag"] == first.headers["ETag"]
    assert service.store.version(game_id) == version
    other = client.post(url, json={"cards": cards[3:6]}, headers=headers)
    assert_problem(other, 422, "idempotency-key-reused")
    assert service.store.version(game_id) == version


def test_a_command_whose_bots_meet_another_writer_replays_its_first_response(
    hearts: Hearts, client, service, app, monkeypatch
):
    # The race CI met: while a request played the bots its command woke, the background runner
    # moved in the same game. The request gives way at the conflict, so its response is one run
    # of its own command's events, and the replay, rebuilt from the log, is that response.
    deal = [[str(c) for c in DECK[(seat - 1) % 4 :: 4]] for seat in range(4)]
    game_id, tokens = hearts.new_game(1, deals=[deal])  # three bots, all passing after seat 0
    # The race is staged below, not left to the machine's speed: the bots' passes the join's
    # budget left to the app's runner are played before (else the runner is the request's
    # "other writer" at its first move), and the request plays its bots whatever the load
    # (else its 25 ms are gone after one move, and the staged writer never comes).
    settle(app, [game_id])
    monkeypatch.setattr(service, "bot_request_seconds", 60.0)
    view = hearts.view(game_id, tokens[0], 0)
    request_append = service.bots.append
    calls = []

    def another_writer_first(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:  # before the request's second bot move: the background runner's
            service.background.runner.run(game_id, "elsewhere", deadline=0, at_least_one=True)
        return request_append(*args, **kwargs)

    service.bots.append = another_writer_first
    url = f"/api/v1/games/{game_id}/pass"
    headers = {**auth(tokens[0]), **key("pass-race")}
    first = client.post(url, json={"cards": view["legal_cards"][:3]}, headers=headers)
    service.bots.append = request_append
    assert first.status_code == 200, first.get_json()
    assert len(calls) >= 2  # the other writer came before the request's second bot move
    mine = first.get_json()["events"]
    assert [e["seq"] for e in mine] == list(range(mine[0]["seq"], mine[-1]["seq"] + 1))
    assert all(e["command_id"].startswith(mine[0]["command_id"]) for e in mine)
    assert any(e.command_id.startswith("elsewhere+bot") for e in service.store.read(game_id))
    hearts.wait_for_humans(game_id, tokens)
    again = client.post(url, json={"cards": view["legal_cards"][:3]}, headers=headers)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()


def test_a_retried_join_gets_the_same_seat_and_token(
    hearts: Hearts, client, service, redis_client, key_prefix
):
    game = hearts.create([None] * 4)
    url = f"/api/v1/games/{game['id']}/seats"
    first = client.post(url, json={"name": "ann"}, headers=key(JOIN_ANN))
    again = client.post(url, json={"name": "ann"}, headers=key(JOIN_ANN))
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    token = first.get_json()["token"]
    assert client.get(f"/api/v1/games/{game['id']}", headers=auth(token)).get_json()["seat"] == 0
    assert_problem(
        client.post(url, json={"name": "bob"}, headers=key(JOIN_ANN)),
        422,
        "idempotency-key-reused",
    )
    # GameCreated, the first hand's seed committed (SeedCommitted), the one join.
    assert client.get(f"/api/v1/games/{game['id']}").get_json()["version"] == 3
    # Redis holds neither the token nor the raw key; the record expires in 24 hours.
    # SCAN, not KEYS: a cluster client scans every master, KEYS asks one node.
    idem_keys = list(redis_client.scan_iter(match=f"{key_prefix}:*:idem:*"))
    assert idem_keys
    for name in idem_keys:
        assert JOIN_ANN.encode() not in name
        assert token.encode() not in redis_client.get(name)
        assert 0 < redis_client.ttl(name) <= 86400


def test_a_retried_join_whose_record_was_altered_is_refused_not_answered_with_500(
    hearts: Hearts, client, redis_client, key_prefix
):
    game = hearts.create([None] * 4)
    url = f"/api/v1/games/{game['id']}/seats"
    assert client.post(url, json={"name": "ann"}, headers=key(JOIN_ANN)).status_code == 201
    (name,) = redis_client.scan_iter(match=f"{key_prefix}:*:idem:*")
    fingerprint, _, response = redis_client.get(name).decode().partition("\n")
    record = json.loads(response)
    sealed = record["token"]
    record["token"] = sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB")
    redis_client.set(name, fingerprint + "\n" + json.dumps(record), keepttl=True)
    again = client.post(url, json={"name": "ann"}, headers=key(JOIN_ANN))
    assert_problem(again, 409, "idempotency-receipt-unreadable")
    assert client.get(f"/api/v1/games/{game['id']}").get_json()["version"] == 3


def test_a_retried_create_gets_the_same_game(client):
    body = {"seats": [None, {"bot": "random"}, None, None], "seed": chosen_seed("s")}
    first = client.post("/api/v1/games", json=body, headers=key("new-game-1"))
    again = client.post("/api/v1/games", json=body, headers=key("new-game-1"))
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert again.headers["Location"] == first.headers["Location"]
    assert len(client.get("/api/v1/games").get_json()["games"]) == 1
    changed = client.post(
        "/api/v1/games", json={"seed": chosen_seed("t")}, headers=key("new-game-1")
    )
    assert_problem(changed, 422, "idempotency-key-reused")


def test_keys_are_scoped_to_the_caller(hearts: Hearts, client, service):
    game_id, tokens = hearts.new_game(4)
    for seat in range(4):
        view = hearts.view(game_id, tokens[seat], seat)
        response = client.post(
            f"/api/v1/games/{game_id}/pass",
            json={"cards": view["legal_cards"][:3]},
            headers={**auth(tokens[seat]), **key("same-key")},
        )
        assert response.status_code == 200 and "Idempotent-Replayed" not in response.headers
    assert hearts.view(game_id)["phase"] == "playing"


def test_a_malformed_key_is_400(hearts: Hearts, client):
    game = hearts.create([None] * 4)
    response = client.post(
        f"/api/v1/games/{game['id']}/seats", json={"name": "a"}, headers=key("x" * 300)
    )
    assert_problem(response, 400, "bad-request")
    # Printable ASCII only (as the document's pattern says): none, a control or a Latin-1 byte
    # is refused before anything is created.
    for bad in ("", "tab\there", "caf\xe9", "del\x7f"):
        response = client.post("/api/v1/games", json={"seats": [None] * 4}, headers=key(bad))
        assert_problem(response, 400, "bad-request")
    good = client.post("/api/v1/games", json={"seats": [None] * 4}, headers=key("a b~!"))
    assert good.status_code == 201
