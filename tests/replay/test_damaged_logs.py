"""Damaged or oddly written logs: the audit tells what is wrong, every other use is refused."""

from __future__ import annotations

from domain.cards import DECK
from service.api.factory import create_app
from service.settings import Settings
from tests.api.helpers import PROBLEM, Hearts, auth, chosen_seed
from tests.replay.tamper import read_raw

SHORT = {"score_limit": 27}


def test_explicit_deals_listed_in_any_order_audit_as_dealt(hearts: Hearts, client):
    # Each seat's cards sorted as strings ("10C" before "2C"), not in the server's card order.
    deal = [sorted(str(c) for c in DECK[s::4]) for s in range(4)]
    game_id, tokens = hearts.new_game(4, rules=SHORT, seed=chosen_seed("any-order"), deals=[deal])
    hearts.play_out(game_id, tokens)
    report = client.get(f"/api/v1/games/{game_id}/audit").get_json()
    assert report["ok"] is True, report["discrepancies"]
    assert report["hands"][0]["explicit"] is True and report["hands"][0]["deal_ok"] is None


def _delete_event(fake_app, game_id: str, seq: int) -> None:
    """What an insider with Redis access could do: XDEL one entry of the game's stream."""
    store = fake_app.extensions["hearts"].store
    key = store.game_key(game_id)
    entry = next(
        entry_id
        for entry_id, _ in store.redis.xrange(key, "-", "+")
        if int((entry_id.decode() if isinstance(entry_id, bytes) else entry_id).split("-")[0])
        == seq
    )
    assert store.redis.xdel(key, entry) == 1
    assert [env["seq"] for env in read_raw(store, game_id)].count(seq) == 0


def _fresh_app_client(fake_app, key_prefix: str):
    """A second process on the same Redis: it has no cached copy of the game."""
    redis = fake_app.extensions["hearts"].store.redis
    return create_app(Settings(key_prefix=key_prefix), redis=redis).test_client()


def test_an_event_deleted_from_the_stream_is_a_gap_in_the_audit(
    hearts: Hearts, client, fake_app, key_prefix
):
    game_id, tokens = hearts.new_game(4, rules=SHORT, seed=chosen_seed("gap"))
    for _ in range(4 + 6):  # passes and a few plays
        seat = hearts.view(game_id)["awaiting"][0]
        hearts.act(game_id, seat, tokens[seat])
    _delete_event(fake_app, game_id, 12)
    for http in (client, _fresh_app_client(fake_app, key_prefix)):
        response = http.get(f"/api/v1/games/{game_id}/audit")
        assert response.status_code == 200, response.get_json()
        report = response.get_json()
        assert report["ok"] is False
        gaps = [d for d in report["discrepancies"] if d["check"] == "chain"]
        assert gaps and gaps[0]["seq"] == 13 and "seq gap" in gaps[0]["reason"]


def test_every_other_use_of_a_game_with_a_gap_is_a_corrupt_game_problem(
    hearts: Hearts, client, fake_app, key_prefix
):
    game_id, tokens = hearts.new_game(4, rules=SHORT, seed=chosen_seed("gap"))
    for _ in range(4 + 6):
        seat = hearts.view(game_id)["awaiting"][0]
        hearts.act(game_id, seat, tokens[seat])
    seat = hearts.view(game_id)["awaiting"][0]
    card = hearts.view(game_id, tokens[seat])["legal_cards"][0]
    _delete_event(fake_app, game_id, 12)
    base = f"/api/v1/games/{game_id}"
    for http in (_fresh_app_client(fake_app, key_prefix), client):
        answers = {
            "game": http.get(base),
            "seat view": http.get(base, headers=auth(tokens[seat])),
            "play": http.post(f"{base}/play", json={"card": card}, headers=auth(tokens[seat])),
            "events": http.get(f"{base}/events"),
            "hand": http.get(f"{base}/hands/1"),
            "export": http.get(f"{base}/export"),
            "state at": http.get(f"{base}/state?at=5"),
            "resume": http.get(f"{base}/resume", headers=auth(tokens[seat])),
        }
        for what, response in answers.items():
            assert response.mimetype == PROBLEM, what
            assert response.status_code == 409, (what, response.get_json())
            body = response.get_json()
            assert body["code"] == "corrupt-game", (what, body)
            assert body["type"] == "/problems/corrupt-game"
    described = client.get("/problems/corrupt-game")
    assert described.status_code == 200 and "audit" in described.get_json()["description"]
