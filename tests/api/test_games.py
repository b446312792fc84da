"""Whole games through the API, on fakeredis and on a real redis-server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.decider import fold
from domain.events import event_from_dict
from domain.views import public_view
from service.app.deal_plan import hand_seed, is_domain_event
from tests.api.helpers import Hearts, auth, chosen_seed

FAST = {"score_limit": 30}  # a complete game in a few hands


def folded(service, game_id):
    events = service.store.read(game_id)
    return fold(event_from_dict(e.type, e.payload) for e in events if is_domain_event(e.type))


def test_four_humans_play_a_complete_game(hearts: Hearts, service):
    game_id, tokens = hearts.new_game(4, rules=FAST, seed=chosen_seed("four humans"))
    final = hearts.play_out(game_id, tokens)
    assert final["phase"] == "finished"
    assert final["winners"] and max(final["scores"]) >= 30
    state = folded(service, game_id)
    assert public_view(state).to_dict()["scores"] == final["scores"]
    assert final["version"] == service.store.version(game_id)
    assert service.store.verify(game_id) == []


def test_three_bots_and_one_human_play_a_complete_game(hearts: Hearts, service):
    game_id, tokens = hearts.new_game(1, rules=FAST)
    final = hearts.play_out(game_id, tokens)
    assert final["phase"] == "finished"
    # Every answer the human got starts with the human's own move (bots move after it: a few
    # in the request, the rest in the background, so whose turn it is next depends on timing).
    answered = [data for seat, data in hearts.responses if seat == 0 and "events" in data]
    assert answered
    for data in answered:
        first = data["events"][0]
        assert first["type"] in ("CardsPassed", "CardPlayed", "MoonScoringChosen"), first
        assert first["payload"]["seat"] == 0


def test_create_returns_location_version_and_seats(client):
    response = client.post("/api/v1/games", json={"seats": [None, {"bot": "random"}, None, None]})
    assert response.status_code == 201
    body = response.get_json()
    assert response.headers["Location"] == f"/api/v1/games/{body['id']}"
    assert response.headers["ETag"] == f'"{body["version"]}"'
    assert [s["bot"] for s in body["seats"]] == [None, "random", None, None]
    view = client.get(response.headers["Location"]).get_json()
    assert view["phase"] == "waiting" and view["version"] == body["version"]


def test_games_no_one_moves_in_leave_the_active_list(client, hearts: Hearts, service, settings):
    # Issue 34: games their players left stayed in the lobby as "playing" for good.
    waiting = hearts.create([None] * 4)["id"]
    left, _ = hearts.new_game(4)
    played, tokens = hearts.new_game(4)
    later = datetime.now(UTC) + timedelta(seconds=settings.lobby_idle_seconds + 60)
    service.store._now = lambda: later.isoformat()
    seat, token = next(iter(tokens.items()))
    view = client.get(f"/api/v1/games/{played}", headers=auth(token)).get_json()
    moved = client.post(
        f"/api/v1/games/{played}/pass", json={"cards": view["hand"][:3]}, headers=auth(token)
    )
    assert moved.status_code == 200, (seat, moved.get_json())
    active = client.get("/api/v1/games?active=true&limit=100").get_json()
    assert [g["id"] for g in active["games"]] == [waiting, played]
    everything = client.get("/api/v1/games?limit=100").get_json()
    assert [g["id"] for g in everything["games"]] == [waiting, left, played]


def test_a_seed_makes_deals_reproducible_and_each_hand_seed_is_derived(hearts: Hearts, service):
    hands = []
    for _ in range(2):
        game_id, tokens = hearts.new_game(4, seed=chosen_seed("same seed"))
        view = hearts.view(game_id, tokens[0], 0)
        hands.append(view["hand"])
        dealt = [e for e in service.store.read(game_id) if e.type == "HandDealt"]
        assert dealt[0].payload["seed"] == hand_seed(chosen_seed("same seed"), 1)
    assert hands[0] == hands[1]


def test_explicit_deals_are_dealt_first_then_the_seed(hearts: Hearts, service):
    from domain.cards import DECK

    deal = [[str(c) for c in DECK[s::4]] for s in range(4)]
    game_id, tokens = hearts.new_game(4, rules=FAST, seed=chosen_seed("then this"), deals=[deal])
    for seat, token in tokens.items():
        assert hearts.view(game_id, token, seat)["hand"] == deal[seat]
    hearts.play_out(game_id, tokens)
    dealt = [e.payload for e in service.store.read(game_id) if e.type == "HandDealt"]
    assert dealt[0]["explicit"] is True and dealt[0]["hands"] == deal
    assert dealt[1]["explicit"] is False and dealt[1]["seed"] == hand_seed(
        chosen_seed("then this"), 2
    )


def test_the_public_view_shows_no_hand_and_a_seat_view_its_own(hearts: Hearts):
    game_id, tokens = hearts.new_game(4)
    public = hearts.view(game_id)
    assert "hand" not in public and public["phase"] == "passing"
    mine = hearts.view(game_id, tokens[2], 2)
    assert mine["seat"] == 2 and len(mine["hand"]) == 13 and mine["cards_to_pass"] == 3


def test_etag_and_if_none_match(client, hearts: Hearts):
    game_id, _ = hearts.new_game(4)
    response = client.get(f"/api/v1/games/{game_id}")
    tag = response.headers["ETag"]
    assert tag == f'"{response.get_json()["version"]}"'
    again = client.get(f"/api/v1/games/{game_id}", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.data == b""


def test_a_seats_etag_names_the_seat_so_no_viewer_gets_anothers_copy(client, hearts: Hearts):
    game_id, tokens = hearts.new_game(4)
    public = client.get(f"/api/v1/games/{game_id}")
    mine = client.get(f"/api/v1/games/{game_id}", headers=auth(tokens[0]))
    version = mine.get_json()["version"]
    assert mine.headers["ETag"] == f'"{version}.s0"' != public.headers["ETag"]
    # The public copy's tag does not validate a seat's request (nor another seat's tag).
    for stale in (public.headers["ETag"], f'"{version}.s1"'):
        again = client.get(
            f"/api/v1/games/{game_id}", headers={**auth(tokens[0]), "If-None-Match": stale}
        )
        assert again.status_code == 200 and again.get_json()["hand"] == mine.get_json()["hand"]
    same = client.get(
        f"/api/v1/games/{game_id}",
        headers={**auth(tokens[0]), "If-None-Match": mine.headers["ETag"]},
    )
    assert same.status_code == 304 and same.headers["ETag"] == mine.headers["ETag"]
    # If-Match takes the seat's tag as the version it names.
    seat = mine.get_json()
    moved = hearts.post(
        f"/api/v1/games/{game_id}/pass",
        {"cards": seat["legal_cards"][:3]},
        tokens[0],
        **{"If-Match": mine.headers["ETag"]},
    )
    assert moved.status_code == 200, moved.get_json()


def test_list_games_filters_and_pages(client, hearts: Hearts):
    waiting = [hearts.create([None] * 4)["id"] for _ in range(3)]
    playing, _ = hearts.new_game(4)
    page = client.get("/api/v1/games?status=waiting&limit=2").get_json()
    assert [g["id"] for g in page["games"]] == waiting[:2]
    rest = client.get(f"/api/v1/games?status=waiting&limit=2&cursor={page['next_cursor']}")
    assert [g["id"] for g in rest.get_json()["games"]] == waiting[2:]
    by_player = client.get("/api/v1/games?player=player3").get_json()
    assert [g["id"] for g in by_player["games"]] == [playing]
    everything = client.get("/api/v1/games?limit=100").get_json()
    assert {g["id"] for g in everything["games"]} == {*waiting, playing}
    assert everything["next_cursor"] is None
