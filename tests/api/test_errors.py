"""Every error is an RFC 9457 problem with a stable type, and appends nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.cards import DECK
from tests.api.helpers import PROBLEM, Hearts, auth

# Seat s is dealt every fourth card of the deck: seat 0 holds 2C, seat 1 3C, seat 2 4C, seat 3 5C.
ROUND_ROBIN = [[str(c) for c in DECK[s::4]] for s in range(4)]
NO_PASSING = {"pass_cycle": "hold_always"}


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM
    body = response.get_json()
    assert body["type"] == f"/problems/{code}"
    assert body["status"] == status and body["code"] == code
    assert body["title"] and body["detail"]
    return body


@pytest.fixture
def table(hearts: Hearts, client):
    """Four humans, no passing, the round-robin deal: seat 0 must lead 2C."""
    game_id, tokens = hearts.new_game(4, rules=NO_PASSING, deals=[ROUND_ROBIN])
    return game_id, tokens


def play(hearts, game_id, token, card, **headers):
    return hearts.post(f"/api/v1/games/{game_id}/play", {"card": card}, token, **headers)


def version(client, game_id) -> int:
    return client.get(f"/api/v1/games/{game_id}").get_json()["version"]


def test_rule_violations_are_409_with_their_own_type(hearts: Hearts, client, table):
    game_id, tokens = table
    before = version(client, game_id)
    assert_problem(play(hearts, game_id, tokens[0], "6C"), 409, "must-lead-lowest-club")
    assert_problem(play(hearts, game_id, tokens[1], "3C"), 409, "not-your-turn")
    assert version(client, game_id) == before
    assert play(hearts, game_id, tokens[0], "2C").status_code == 200
    assert_problem(play(hearts, game_id, tokens[1], "2D"), 409, "must-follow-suit")
    assert_problem(play(hearts, game_id, tokens[1], "AS"), 409, "card-not-in-hand")
    for seat, card in ((1, "3C"), (2, "4C"), (3, "5C")):
        assert play(hearts, game_id, tokens[seat], card).status_code == 200
    before = version(client, game_id)
    assert_problem(play(hearts, game_id, tokens[3], "2H"), 409, "hearts-not-broken")
    passing = hearts.post(f"/api/v1/games/{game_id}/pass", {"cards": ["2H"]}, tokens[3])
    assert_problem(passing, 409, "wrong-phase")
    assert version(client, game_id) == before


def test_join_errors(hearts: Hearts, client):
    game = hearts.create([None, None, None, {"bot": "random"}])
    hearts.join(game["id"], "ann", 0)
    url = f"/api/v1/games/{game['id']}/seats"
    assert_problem(client.post(url, json={"name": "bob", "seat": 0}), 409, "seat-taken")
    assert_problem(client.post(url, json={"name": "bob", "seat": 9}), 422, "seat-out-of-range")
    assert_problem(client.post(url, json={"name": "  "}), 422, "invalid-name")
    assert_problem(client.post(url, json={"name": "ann"}), 409, "name-taken")
    assert_problem(client.post(url, json={"name": "Random"}), 422, "name-reserved")
    hearts.join(game["id"], "bob")
    hearts.join(game["id"], "cy")
    assert_problem(client.post(url, json={"name": "dee"}), 409, "game-full")


def test_http_errors(hearts: Hearts, client, table):
    game_id, tokens = table
    base = f"/api/v1/games/{game_id}"
    before = version(client, game_id)
    # 400: not JSON at all, or a malformed header.
    bad = client.post(f"{base}/play", data='{"card": ', content_type="application/json")
    assert_problem(bad, 400, "malformed-json")
    assert_problem(play(hearts, game_id, tokens[0], "2C", **{"If-Match": "x"}), 400, "bad-request")
    # 401: no token, a token of no seat, a malformed header.
    assert_problem(play(hearts, game_id, None, "2C"), 401, "unauthorized")
    assert_problem(play(hearts, game_id, "not-a-token", "2C"), 401, "unauthorized")
    response = client.get(base, headers={"Authorization": "Basic abc"})
    assert_problem(response, 401, "unauthorized")
    assert "Bearer" in response.headers["WWW-Authenticate"]
    # 403: a valid token acting for another seat.
    other = hearts.post(f"{base}/seats/1/bot", {"bot": "random"}, tokens[0])
    assert_problem(other, 403, "forbidden")
    claim = hearts.post(f"{base}/play", {"card": "2C", "seat": 1}, tokens[0])
    assert_problem(claim, 403, "forbidden")
    # 404: no such game, route or seat.
    assert_problem(client.get("/api/v1/games/nope"), 404, "game-not-found")
    assert_problem(play(hearts, "nope", tokens[0], "2C"), 404, "game-not-found")
    assert_problem(client.get("/api/v1/nothing-here"), 404, "not-found")
    assert_problem(hearts.post(f"{base}/seats/7/bot", {"bot": None}, tokens[0]), 404, "not-found")
    # 405
    response = client.delete(base)
    assert_problem(response, 405, "method-not-allowed")
    assert "GET" in response.headers["Allow"]
    # A method that carries a body, without one: the route's answer (405, 404), not a 415
    # for the body it would have needed.
    response = client.put(f"{base}/state")
    assert_problem(response, 405, "method-not-allowed")
    assert response.headers["Allow"].split(", ").count("GET") == 1
    assert_problem(client.post("/api/v1/nothing-here"), 404, "not-found")
    # 412: If-Match with a stale version.
    stale = play(hearts, game_id, tokens[0], "2C", **{"If-Match": f'"{before - 1}"'})
    assert_problem(stale, 412, "precondition-failed")
    # 413: a body over the limit.
    huge = json.dumps({"card": "2C", "pad": "x" * 70_000})
    assert_problem(
        client.post(f"{base}/play", data=huge, content_type="application/json"),
        413,
        "body-too-large",
    )
    # 415: not JSON.
    assert_problem(
        client.post(f"{base}/play", data="card=2C", headers=auth(tokens[0])),
        415,
        "unsupported-media-type",
    )
    # 422: schema errors, unknown cards.
    missing = assert_problem(hearts.post(f"{base}/play", {}, tokens[0]), 422, "validation-error")
    assert "card" in missing["errors"] and missing["detail"].startswith("the body ")
    query = assert_problem(client.get(f"{base}/events?limit=0"), 422, "validation-error")
    assert query["detail"].startswith("the query ") and "limit" in query["errors"]["query"]
    extra = hearts.post(f"{base}/play", {"card": "2C", "colour": "red"}, tokens[0])
    assert "colour" in assert_problem(extra, 422, "validation-error")["errors"]
    assert_problem(play(hearts, game_id, tokens[0], "ZZ"), 422, "invalid-card")
    listed = hearts.post(f"{base}/pass", {"cards": ["2C", "1X"]}, tokens[0])
    assert_problem(listed, 422, "invalid-card")
    assert_problem(hearts.post(base + "/play", [1, 2], tokens[0]), 422, "validation-error")
    assert version(client, game_id) == before
    # ... and with a fresh If-Match the play goes through.
    assert play(hearts, game_id, tokens[0], "2C", **{"If-Match": f'"{before}"'}).status_code == 200


def test_creation_errors(client):
    def create(body):
        return client.post("/api/v1/games", json=body)

    assert_problem(create({"seats": [{"bot": "nobody"}, None, None, None]}), 422, "unknown-bot")
    assert_problem(create({"seats": [{"robot": "x"}, None, None, None]}), 422, "validation-error")
    assert_problem(create({"rules": {"players": 9}}), 422, "invalid-rules")
    assert_problem(create({"rules": {"colour": "red"}}), 422, "invalid-rules")
    assert_problem(create({"seats": [None, None]}), 422, "invalid-command")
    short = [ROUND_ROBIN[0][:12], *ROUND_ROBIN[1:]]
    assert_problem(create({"deals": [short]}), 422, "invalid-deal")
    assert_problem(create({"deals": [[["XX"]]]}), 422, "invalid-card")
    assert_problem(create({"seed": ""}), 422, "validation-error")
    assert client.get("/api/v1/games").get_json()["games"] == []


def test_problem_types_are_described(client):
    described = client.get("/problems/must-follow-suit").get_json()
    assert described["status"] == 409 and described["type"] == "/problems/must-follow-suit"
    catalogue = client.get("/problems").get_json()
    codes = {p["code"] for p in catalogue}
    assert {"not-your-turn", "hearts-not-broken", "wrong-phase", "unauthorized"} <= codes
    assert_problem(client.get("/problems/no-such-thing"), 404, "not-found")


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_an_unknown_api_path_or_method_is_a_problem_that_says_where_the_paths_are(client):
    """Issue 44: every path under /api/ a client may try, whatever it accepts, answers a
    problem (never a page); a wrong method a 405 that names the right ones."""
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        for path in ("/api/v1/nope", "/api/nope", "/api", "/api/v1/games/x/y/z", "/api/v1/docs/x"):
            for accept in ("application/json", "text/html", "*/*"):
                response = client.open(path, method=method, headers={"Accept": accept})
                body = assert_problem(response, 404, "not-found")
                assert "/api/v1/openapi.json" in body["detail"] and body["instance"] == path
    for method, path in (("DELETE", "/api/v1/games"), ("PUT", "/api/v1/leaderboard")):
        response = client.open(path, method=method, headers={"Accept": "text/html"})
        body = assert_problem(response, 405, "method-not-allowed")
        assert "GET" in response.headers["Allow"] and "Allow" in body["detail"]
    # A view's own 404 keeps its own detail.
    assert "/api/v1/openapi.json" not in client.get("/problems/no-such").get_json()["detail"]


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_the_docs_page_with_a_trailing_slash_is_sent_to_the_page(client):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 308 and response.headers["Location"] == "/api/v1/docs"
    assert response.get_data() == b""
    followed = client.get("/api/v1/docs/", follow_redirects=True)
    assert followed.status_code == 200 and followed.mimetype == "text/html"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=10,
)
CARDISH = st.sampled_from(["2C", "QS", "AH", "10H", "Q♠", "ZZ", "", "2c"])
BODIES = (
    JSON
    | st.fixed_dictionaries({"card": CARDISH | JSON})
    | st.fixed_dictionaries({"cards": st.lists(CARDISH, max_size=4)})
)


@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    endpoint=st.sampled_from(["pass", "play", "moon", "seats", "seats/1/bot", ""]),
    body=BODIES,
    with_token=st.booleans(),
)
def test_no_client_input_gives_a_500(client, table, endpoint, body, with_token):
    game_id, tokens = table
    url = f"/api/v1/games/{game_id}/{endpoint}".rstrip("/")
    if not endpoint:
        url = "/api/v1/games"
    response = client.post(url, json=body, headers=auth(tokens[0] if with_token else None))
    assert response.status_code < 500, response.get_data(as_text=True)
    if response.status_code >= 400:
        assert response.mimetype == PROBLEM


def test_a_finished_game_answers_game_over_to_every_command(hearts: Hearts, client):
    """A command to a game that has ended is a 409 of its own (game-over), not wrong-phase: a
    client tells it apart without reading the detail's English (issue 35)."""
    game_id, tokens = hearts.new_game(4, rules={**NO_PASSING, "score_limit": 1})
    assert hearts.play_out(game_id, tokens)["phase"] == "finished"
    before = version(client, game_id)
    game = f"/api/v1/games/{game_id}"
    refusals = [
        play(hearts, game_id, tokens[0], "2C"),
        hearts.post(f"{game}/pass", {"cards": ["2C", "3C", "4C"]}, tokens[0]),
        hearts.post(f"{game}/moon", {"choice": "add_to_others"}, tokens[0]),
        hearts.post(f"{game}/seats/0/bot", {"bot": "random"}, tokens[0]),
        hearts.post(f"{game}/seats/0/back", {}, tokens[0]),
        client.post(f"{game}/seats", json={"name": "eve"}),
    ]
    for refused in refusals:
        body = assert_problem(refused, 409, "game-over")
        assert body["detail"] == "the game is over: no command changes it"
    assert version(client, game_id) == before
    described = client.get("/problems/game-over")
    assert described.status_code == 200
