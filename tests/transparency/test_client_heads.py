"""hearts_client keeps the latest signed head of each game it is told about, and asks about it."""

from __future__ import annotations

import httpx
from hearts_client.client import HeartsClient
from hearts_client.errors import HeartsProblem
from hearts_client.note import Verifier, open_head

from tests.api.helpers import chosen_seed
from tests.background import settle
from tests.replay.tamper import tamper


def test_the_client_keeps_the_newest_head_and_verifies_it(app) -> None:
    http = httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://hearts")
    client = HeartsClient("http://hearts", http=http)
    key = Verifier.parse(http.get("/.well-known/hearts-log-key").text)
    created = client.create_game(
        seats=[None, "random", "random", "random"], seed=chosen_seed("kept")
    )
    game_id = created["id"]
    seat = client.join(game_id, "ann")
    seat.refresh()
    for _ in range(3):
        if seat.my_turn:
            view = seat.view
            if view["phase"] == "passing":
                seat.pass_cards(view["legal_cards"][: view["cards_to_pass"]])
            else:
                seat.play(view["legal_cards"][0])
    settle(app, [game_id])  # the bots' moves after ann's are made: the version rests
    seat.refresh()
    head = open_head(client.heads[game_id], key)
    assert head.version == seat.view["version"]
    client.game(game_id)  # the same version again: still kept
    assert open_head(client.heads[game_id], key).version == head.version
    assert client.verify_head(game_id)["extends"] is True

    store = app.extensions["hearts"].store

    def rewrite(envelopes):
        envelopes[0] = {**envelopes[0], "time": "2000-01-01T00:00:00.000000Z"}
        return envelopes

    kept = client.heads[game_id]
    tamper(store, game_id, rewrite, rehash_chain=True)
    try:
        client.verify_head(game_id, kept)
    except HeartsProblem as problem:
        assert problem.status == 409
        assert problem.code == "head-not-extended"
    else:
        raise AssertionError("the rewrite went unnoticed")
