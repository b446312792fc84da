"""next_action in every phase (the moon choice included), and the stream's edges."""

from __future__ import annotations

import fakeredis

from domain import commands as c
from domain.cards import DECK, sort_cards
from domain.decider import decide, fold
from domain.legal import legal_plays
from domain.rules import RuleOptions
from domain.state import INITIAL_STATE, Phase
from service.api.factory import create_app
from service.api.replay import next_action
from service.settings import Settings
from tests.api.helpers import Hearts, auth, chosen_seed
from tests.background import settle


def test_the_shooter_is_asked_to_choose_and_the_others_wait():
    rules = RuleOptions.from_dict({"moon_scoring": "shooters_choice", "pass_cycle": "hold_always"})
    state = fold(decide(c.CreateGame("moon", rules, (None,) * 4), INITIAL_STATE))
    for seat in range(4):
        state = fold(decide(c.JoinGame(f"p{seat}", seat), state), state)
    clubs = [card for card in DECK if card.endswith("C")]
    rest = [card for card in DECK if not card.endswith("C")]
    hands = (tuple(clubs), *(sort_cards(rest[k::3]) for k in range(3)))
    state = fold(decide(c.Deal("moon-seed", hands), state), state)
    # Seat 0 holds every club: it wins every trick, whatever the others throw.
    while state.phase is Phase.PLAYING:
        seat = state.hand.turn
        assert next_action(state, seat)["action"] == "play"
        assert next_action(state, (seat + 1) % 4) == {"action": "wait", "for": [seat]}
        card = sort_cards(legal_plays(rules, state.hand, seat))[-1]
        state = fold(decide(c.PlayCard(seat, card), state), state)
    assert state.phase is Phase.MOON_CHOICE
    action = next_action(state, 0, "/api/v1/games/moon")
    assert action["action"] == "choose_moon_scoring" and action["post"].endswith("/moon")
    assert next_action(state, 2) == {"action": "wait", "for": [0]}


def test_a_stream_of_bounded_lifetime_asks_the_client_to_reconnect(key_prefix):
    # A second of life and a keep-alive after 50 ms of quiet, the bots idle first: a quiet
    # stream, so a keep-alive comes even on a busy machine (with 0.2 s of life and bots still
    # moving, a loaded run saw none).
    settings = Settings(key_prefix=key_prefix, sse_max_seconds=1.0, sse_keepalive_seconds=0.05)
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    app = create_app(settings, redis=redis)
    client = app.test_client()
    hearts = Hearts(client)
    game_id, tokens = hearts.new_game(2)
    settle(app, [game_id])
    response = client.get(
        f"/api/v1/games/{game_id}/events",
        headers={"Accept": "text/event-stream", "Last-Event-ID": "2", **auth(tokens[0])},
    )
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    text = response.get_data(as_text=True)
    ids = [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]
    version = client.get(f"/api/v1/games/{game_id}").get_json()["version"]
    assert ids == list(range(3, version + 1))
    assert ": keep-alive" in text
    assert text.rstrip().endswith('event: reconnect\ndata: {"after": ' + str(version) + "}")


def test_stream_edges(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(4, rules={"score_limit": 27}, seed=chosen_seed("edges"))
    stream = {"Accept": "text/event-stream"}
    bad = client.get(f"/api/v1/games/{game_id}/events", headers={**stream, "Last-Event-ID": "x"})
    assert bad.status_code == 400 and bad.mimetype == "application/problem+json"
    assert client.get("/api/v1/games/nope/events", headers=stream).status_code == 404
    assert (
        client.get(f"/api/v1/games/{game_id}/events", headers={**stream, **auth("x")}).status_code
        == 401
    )
    negative = client.get(f"/api/v1/games/{game_id}/events?after=-1")  # not a seq: 400
    assert negative.status_code == 400 and negative.get_json()["code"] == "invalid-event-id"
    hearts.play_out(game_id, tokens)
    version = client.get(f"/api/v1/games/{game_id}").get_json()["version"]
    done = client.get(
        f"/api/v1/games/{game_id}/events", headers={**stream, "Last-Event-ID": str(version)}
    )
    assert done.status_code == 204
    tail = client.get(
        f"/api/v1/games/{game_id}/events", headers={**stream, "Last-Event-ID": str(version - 2)}
    ).get_data(as_text=True)
    assert [line for line in tail.splitlines() if line.startswith("id: ")] == [
        f"id: {version - 1}",
        f"id: {version}",
    ]
    assert "event: end" in tail
    # JSON is the default; an explicit JSON preference wins over the stream.
    for accept in ("application/json", "*/*", "application/json, text/event-stream;q=0.5"):
        plain = client.get(f"/api/v1/games/{game_id}/events", headers={"Accept": accept})
        assert plain.mimetype == "application/json", accept
