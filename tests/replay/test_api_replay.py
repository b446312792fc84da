"""Replay over HTTP: time travel reproduces every view a player saw; hands, events, resume."""

from __future__ import annotations

from domain.cards import Card
from service.app.hand_records import decode_events
from tests.api.helpers import Hearts, auth, cards_in, chosen_seed

SHORT = {"score_limit": 27}  # one hand gives at most 26: always two hands or more


def views_seen(hearts: Hearts) -> list[tuple[int | None, dict]]:
    """Every view a response carried, with the seat it was for (None: public)."""
    out = []
    for seat, data in hearts.responses:
        if "view" in data:
            out.append((seat, data["view"]))
        elif "phase" in data:
            out.append((seat, data))
    return out


def test_state_at_reproduces_every_view_the_players_saw(real_app):
    client = real_app.test_client()
    hearts = Hearts(client)
    game_id, tokens = hearts.new_game(4, rules=SHORT, seed=chosen_seed("time-travel"))
    hearts.play_out(game_id, tokens)
    seen = views_seen(hearts)
    assert len(seen) > 100
    # Each (seat, version) once: a view fetched and the same view in a command's result.
    unique = {(seat, view["version"]): view for seat, view in seen}
    assert all(unique[(seat, view["version"])] == view for seat, view in seen), (
        "two different views of one seat at one version"
    )
    seen = [(seat, view) for (seat, _), view in unique.items()]
    versions = {view["version"] for _, view in seen}
    hands = {view["hand_number"] for _, view in seen}
    assert len(hands) >= 2, "a game of more than one hand"
    for seat, view in seen:
        token = tokens.get(seat) if seat is not None else None
        response = client.get(
            f"/api/v1/games/{game_id}/state?at={view['version']}", headers=auth(token)
        )
        assert response.status_code == 200
        assert response.get_json() == view, (seat, view["version"])
    # And every other seq can be visited too: each hand from its deal to its last trick.
    final = client.get(f"/api/v1/games/{game_id}").get_json()["version"]
    for at in range(1, final + 1):
        if at not in versions:
            response = client.get(f"/api/v1/games/{game_id}/state?at={at}")
            assert response.status_code == 200
            assert response.get_json()["version"] == at


def test_state_at_errors(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(4, rules=SHORT)
    version = client.get(f"/api/v1/games/{game_id}").get_json()["version"]
    bad = [
        (f"/api/v1/games/{game_id}/state?at={version + 1}", 404, "event-not-found"),
        (f"/api/v1/games/{game_id}/state?at=0", 422, "validation-error"),
        (f"/api/v1/games/{game_id}/state?at=x", 422, "validation-error"),
        (f"/api/v1/games/{game_id}/state", 422, "validation-error"),
        ("/api/v1/games/nope/state?at=1", 404, "game-not-found"),
    ]
    for path, status, code in bad:
        response = client.get(path)
        assert response.status_code == status, path
        assert response.get_json()["code"] == code
        assert response.mimetype == "application/problem+json"
    response = client.get(f"/api/v1/games/{game_id}/state?at=1", headers=auth("not-a-token"))
    assert response.status_code == 401


def test_hand_records_complete_once_finished_and_redacted_while_in_play(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(4, rules=SHORT, seed=chosen_seed("hands"))
    # Everyone passes; a few tricks in: hand 1 is in play.
    for _ in range(4 + 9):
        public = hearts.view(game_id)
        seat = public["awaiting"][0]
        hearts.act(game_id, seat, tokens[seat])
    in_play = client.get(f"/api/v1/games/{game_id}/hands/1", headers=auth(tokens[2])).get_json()
    assert in_play["finished"] is False and in_play["seed"] is None
    assert [d is not None for d in in_play["dealt"]] == [False, False, True, False]
    assert in_play["passes"][2]["passed"] and in_play["passes"][2]["received"]
    assert all(in_play["passes"][s]["passed"] is None for s in (0, 1, 3))
    assert all(in_play["passes"][s]["received"] is None for s in (0, 1, 3))
    assert len(in_play["tricks"]) == 2 and len(in_play["current_trick"]) == 1
    assert in_play["points_taken"] is None
    public = client.get(f"/api/v1/games/{game_id}/hands/1").get_json()
    assert all(d is None for d in public["dealt"])
    own = {Card(c) for c in in_play["dealt"][2]} | {
        Card(c) for c in in_play["passes"][2]["received"]
    }
    played = {Card(p["card"]) for t in in_play["tricks"] for p in t["cards"]}
    played |= {Card(p["card"]) for p in in_play["current_trick"]}
    assert cards_in(in_play) <= own | played

    hearts.play_out(game_id, tokens)
    done = client.get(f"/api/v1/games/{game_id}/hands/1").get_json()
    assert done["finished"] is True and done["seed"]
    assert all(len(h) == 13 for h in done["dealt"])
    assert all(len(p["passed"]) == 3 and len(p["received"]) == 3 for p in done["passes"])
    assert len(done["tricks"]) == 13
    assert sum(t["points"] for t in done["tricks"]) == 26 == sum(done["points_taken"])
    assert [t["cards"][0]["seat"] for t in done["tricks"]] == [t["leader"] for t in done["tricks"]]
    for before, after in zip(done["tricks"], done["tricks"][1:], strict=False):
        assert after["leader"] == before["winner"]
    assert done["totals"] == [
        a + b for a, b in zip(done["scores_before"], done["score_changes"], strict=True)
    ]
    text = client.get(f"/api/v1/games/{game_id}/hands/1?format=text")
    assert text.mimetype == "text/plain" and "♣" in text.get_data(as_text=True)
    missing = client.get(f"/api/v1/games/{game_id}/hands/99")
    assert missing.status_code == 404 and missing.get_json()["code"] == "hand-not-found"


def test_events_are_redacted_for_the_caller_until_the_hand_is_over(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(4, rules=SHORT, seed=chosen_seed("events"))
    for _ in range(6):
        seat = hearts.view(game_id)["awaiting"][0]
        hearts.act(game_id, seat, tokens[seat])
    body = client.get(f"/api/v1/games/{game_id}/events", headers=auth(tokens[1])).get_json()
    dealt = next(e for e in body["events"] if e["type"] == "HandDealt")
    assert dealt["redacted"] and dealt["payload"]["seed"] is None
    assert [h is not None for h in dealt["payload"]["hands"]] == [False, True, False, False]
    for event in body["events"]:
        if event["type"] == "CardsPassed" and event["payload"]["seat"] != 1:
            assert event["payload"]["cards"] is None
        assert "credential" not in event["payload"]
        assert "hash" not in event and "prev_hash" not in event
    # Paging: after and limit.
    page = client.get(f"/api/v1/games/{game_id}/events?after=3&limit=2").get_json()
    assert [e["seq"] for e in page["events"]] == [4, 5] and page["next_after"] == 5
    assert page["more"] is True
    hearts.play_out(game_id, tokens)
    body = client.get(f"/api/v1/games/{game_id}/events").get_json()
    assert body["phase"] == "finished" and body["more"] is False
    assert [e["seq"] for e in body["events"]] == list(range(1, body["version"] + 1))
    for event in body["events"]:
        if event["type"] in ("HandDealt", "CardsPassed", "PassesExchanged"):
            assert event["redacted"] is False
        if event["type"] == "HandScored":
            hand = event["revealed_hand"]
            assert hand["finished"] and hand["hand_number"] == event["payload"]["hand_number"]


def test_resume_gives_the_view_and_the_next_action(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(3, rules=SHORT, seed=chosen_seed("resume"))
    url = f"/api/v1/games/{game_id}/resume"
    first = client.get(url, headers=auth(tokens[0])).get_json()
    assert first["next_action"]["action"] == "pass"
    assert first["next_action"]["cards"] == 3 and len(first["next_action"]["legal_cards"]) == 13
    assert first["view"]["seat"] == 0 and first["seat"] == 0
    assert first["events_url"].endswith(f"after={first['version']}")
    for seat in range(3):
        hearts.act(game_id, seat, tokens[seat])
    for seat in range(3):
        body = client.get(url, headers=auth(tokens[seat])).get_json()
        action = body["next_action"]
        turn = body["view"]["turn"]
        if seat == turn:
            assert (
                action["action"] == "play" and action["legal_cards"] == body["view"]["legal_cards"]
            )
            assert action["post"] == f"/api/v1/games/{game_id}/play"
        else:
            assert action == {"action": "wait", "for": [turn]}
    hearts.play_out(game_id, tokens)
    done = client.get(url, headers=auth(tokens[1])).get_json()
    assert done["next_action"]["action"] == "none" and done["next_action"]["reason"] == "finished"
    assert client.get(url).status_code == 401
    assert client.get(url, headers=auth("wrong")).status_code == 401


def test_resume_while_waiting_for_players(hearts: Hearts, client):
    game = hearts.create([None, None, {"bot": "random"}, {"bot": "random"}])
    _, token = hearts.join(game["id"], "ann")
    body = client.get(f"/api/v1/games/{game['id']}/resume", headers=auth(token)).get_json()
    assert body["next_action"] == {"action": "wait", "for": [1], "reason": "players to join"}


def test_audit_endpoint_on_games_with_bots_and_deal_plans(hearts: Hearts, client, fake_app):
    deal = [[str(c) for c in hand] for hand in _sorted_deal()]
    game_id, tokens = hearts.new_game(1, rules=SHORT, seed=chosen_seed("plan"), deals=[deal])
    hearts.play_out(game_id, tokens)
    report = client.get(f"/api/v1/games/{game_id}/audit").get_json()
    assert report["ok"] is True, report
    assert report["hands"][0]["explicit"] is True and report["hands"][1]["explicit"] is False
    assert all(c["ok"] for c in report["checks"])
    # Tamper: the second hand's seed (and its commitment, so only the plan check can tell).
    store = fake_app.extensions["hearts"].store
    from tests.replay.tamper import find, read_raw, tamper

    envelopes = read_raw(store, game_id)
    i = find(envelopes, "HandDealt", 1)

    def edit(envs):
        envs[i]["payload"]["hands"][0], envs[i]["payload"]["hands"][1] = (
            envs[i]["payload"]["hands"][1],
            envs[i]["payload"]["hands"][0],
        )
        return envs

    tamper(store, game_id, edit, rehash_chain=True)
    report = client.get(f"/api/v1/games/{game_id}/audit").get_json()
    assert report["ok"] is False
    assert {d["seq"] for d in report["discrepancies"]} >= {i + 1}
    assert client.get("/api/v1/games/nope/audit").status_code == 404


def _sorted_deal():
    from domain.cards import DECK, sort_cards

    return [sort_cards(DECK[s::4]) for s in range(4)]


def test_hand_records_match_the_log(hearts: Hearts, client, fake_app):
    game_id, tokens = hearts.new_game(4, rules=SHORT, seed=chosen_seed("records"))
    hearts.play_out(game_id, tokens)
    store = fake_app.extensions["hearts"].store
    events = decode_events(store.read(game_id))
    hands = [e.event for e in events if type(e.event).__name__ == "HandDealt"]
    for seat in (None, 0):
        for dealt in hands:
            record = client.get(
                f"/api/v1/games/{game_id}/hands/{dealt.hand_number}",
                headers=auth(tokens[seat] if seat is not None else None),
            ).get_json()
            assert record["dealt"] == [[str(c) for c in h] for h in dealt.hands]
            assert record["seed"] == dealt.seed and record["dealer"] == dealt.dealer


def test_a_seat_handed_to_a_bot_audits_and_replays(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(2, rules=SHORT, seed=chosen_seed("handover"))
    for _ in range(5):
        seat = next(s for s in hearts.wait_for_humans(game_id, tokens)["awaiting"] if s in tokens)
        hearts.act(game_id, seat, tokens[seat])
    handed = client.post(
        f"/api/v1/games/{game_id}/seats/1/bot", json={"bot": "random"}, headers=auth(tokens[1])
    )
    assert handed.status_code == 200, handed.get_json()
    hearts.play_out(game_id, {0: tokens[0]})
    report = client.get(f"/api/v1/games/{game_id}/audit").get_json()
    assert report["ok"] is True, report["discrepancies"]
    events = client.get(f"/api/v1/games/{game_id}/events").get_json()["events"]
    assert any(e["type"] == "SeatControlChanged" for e in events)
    document = client.get(f"/api/v1/games/{game_id}/export").get_json()
    copy = client.post("/api/v1/games/import", json=document).get_json()
    original = client.get(f"/api/v1/games/{game_id}").get_json()
    # The copy says it is one, and of which game.
    copied = {**original, "id": copy["id"], "imported": True, "imported_from": game_id}
    assert client.get(f"/api/v1/games/{copy['id']}").get_json() == copied
