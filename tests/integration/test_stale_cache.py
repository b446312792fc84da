"""A command decided on a process's cached game that is behind Redis (another process appended).

The service decides a command on the game as its process last saw it, without asking Redis first,
and lets the append's expected-version check find out that it was behind. These tests make one
app's cache fall behind through a second app on the same real Redis, then act through the first.
"""

from __future__ import annotations

from service.metrics import CONFLICTS_RETRIED
from tests.api.helpers import Hearts, auth


def setup(make_app):
    a, b = make_app(), make_app()
    ha, hb = Hearts(a.test_client()), Hearts(b.test_client())
    game_id, tokens = ha.new_game(4, rules={"pass_cycle": "hold_always"})
    ha.view(game_id)  # app a has the game cached
    return a, ha, hb, game_id, tokens


def play(hearts: Hearts, game_id: str, token: str, card: str, **headers: str):
    return hearts.post(f"/api/v1/games/{game_id}/play", {"card": card}, token, **headers)


def first_legal(hearts: Hearts, game_id: str, tokens: dict[int, str]) -> tuple[int, str]:
    turn = hearts.view(game_id)["turn"]
    return turn, hearts.view(game_id, tokens[turn])["legal_cards"][0]


def test_a_move_legal_only_after_what_the_cache_missed_is_accepted(make_app):
    a, ha, hb, game_id, tokens = setup(make_app)
    seat, card = first_legal(hb, game_id, tokens)
    assert play(hb, game_id, tokens[seat], card).status_code == 200  # a's cache is now behind
    following, next_card = first_legal(hb, game_id, tokens)
    conflicts = CONFLICTS_RETRIED._value.get()

    # In a's cached game it is not this seat's turn yet.
    response = play(ha, game_id, tokens[following], next_card)

    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    log = a.extensions["hearts"].store.read(game_id)
    assert body["version"] == log[-1].seq == body["view"]["version"]
    assert [e["seq"] for e in body["events"]] == [log[-1].seq]
    assert [(e.type, e.payload["seat"]) for e in log[-2:]] == [
        ("CardPlayed", seat),
        ("CardPlayed", following),
    ]
    assert CONFLICTS_RETRIED._value.get() == conflicts  # a cache behind is no race


def test_a_move_legal_only_in_the_missed_past_gets_the_current_rule_violation(make_app):
    a, ha, hb, game_id, tokens = setup(make_app)
    seat, card = first_legal(hb, game_id, tokens)
    assert play(hb, game_id, tokens[seat], card).status_code == 200
    conflicts = CONFLICTS_RETRIED._value.get()

    # a's cached game still has this seat to lead, with this card in hand: it decides the play,
    # the append finds the game moved on, and the play is decided again on the game as it is.
    response = play(ha, game_id, tokens[seat], card)

    assert response.status_code == 409
    assert response.get_json()["type"] in ("/problems/not-your-turn", "/problems/card-not-in-hand")
    log = a.extensions["hearts"].store.read(game_id)
    assert sum(e.type == "CardPlayed" for e in log) == 1
    assert CONFLICTS_RETRIED._value.get() == conflicts


def test_if_match_is_compared_with_the_game_as_it_is(make_app):
    a, ha, hb, game_id, tokens = setup(make_app)
    seat, card = first_legal(hb, game_id, tokens)
    assert play(hb, game_id, tokens[seat], card).status_code == 200
    following, next_card = first_legal(hb, game_id, tokens)
    current = hb.view(game_id)["version"]

    # a's cached game is at an older version than the one the client names.
    response = play(ha, game_id, tokens[following], next_card, **{"If-Match": f'"{current}"'})

    assert response.status_code == 200, response.get_json()
    assert response.get_json()["version"] == current + 1


def test_if_match_naming_the_cached_version_is_stale_when_the_game_moved_on(make_app):
    a, ha, hb, game_id, tokens = setup(make_app)
    old = ha.view(game_id)["version"]
    seat, card = first_legal(hb, game_id, tokens)
    assert play(hb, game_id, tokens[seat], card).status_code == 200
    current = hb.view(game_id)["version"]

    # Legal in a's cached game at version `old`, which the client names too.
    response = play(ha, game_id, tokens[seat], card, **{"If-Match": f'"{old}"'})

    assert response.status_code == 412
    assert ha.view(game_id)["version"] == current  # nothing appended


def test_a_seat_taken_after_the_cached_version_is_recognised(make_app):
    a, b = make_app(), make_app()
    ha, hb = Hearts(a.test_client()), Hearts(b.test_client())
    game = ha.create([None] * 4, rules={"pass_cycle": "hold_always"})
    game_id = game["id"]
    tokens = dict(ha.join(game_id, f"player{i}") for i in range(3))
    ha.view(game_id)  # a caches the game with three seats taken
    seat, token = hb.join(game_id, "late")  # the fourth seat: the deal follows, through b
    tokens[seat] = token
    turn = hb.view(game_id)["turn"]
    card = hb.view(game_id, tokens[turn])["legal_cards"][0]

    response = ha.post(f"/api/v1/games/{game_id}/play", {"card": card}, tokens[turn])

    assert response.status_code == 200, response.get_json()
    unknown = ha.http.post(
        f"/api/v1/games/{game_id}/play", json={"card": card}, headers=auth("not-a-token")
    )
    assert unknown.status_code == 401
