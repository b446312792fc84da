"""Bots play until a human must act (a few moves in the request, the rest in the background);
a game left on a bot's turn is carried on."""

from __future__ import annotations

from domain.decider import decide
from service.api.factory import create_app
from service.app.bot_runner import bot_move, bot_seed, bot_to_act, sweep
from service.app.game import StoredGame, fold_records, new_event
from service.settings import Settings
from tests.api.helpers import Hearts, chosen_seed, is_bot_move, poll


def test_bots_stop_when_a_human_must_act(hearts: Hearts, service):
    game_id, tokens = hearts.new_game(1)
    hearts.wait_for_humans(game_id, tokens)
    state = service.snapshot(game_id).state.state
    assert bot_to_act(state) is None and 0 in hearts.view(game_id)["awaiting"]
    # Each bot move is its own append with a command id naming what caused it.
    moves = [e for e in service.store.read(game_id) if is_bot_move(e.command_id)]
    assert len(moves) == 3 and len({e.command_id for e in moves}) == 3


def test_a_request_makes_a_few_bot_moves_and_answers_with_them(redis_client, key_prefix):
    # A generous time budget: the join's answer carries the three bots' passes.
    settings = Settings(key_prefix=key_prefix, bot_request_ms=60_000, bot_runner=False)
    hearts = Hearts(create_app(settings, redis=redis_client).test_client())
    game = hearts.create([None] + [{"bot": "random"}] * 3)
    response = hearts.post(f"/api/v1/games/{game['id']}/seats", {"name": "ann"})
    body = response.get_json()
    assert body["view"]["awaiting"] == [0]  # the three bots have passed
    assert [s["has_passed"] for s in body["view"]["seats"]] == [False, True, True, True]


def test_past_the_budget_the_background_runner_plays_on(redis_client, key_prefix):
    settings = Settings(key_prefix=key_prefix, bot_moves_per_request=0)
    hearts = Hearts(create_app(settings, redis=redis_client).test_client())
    game = hearts.create([None] + [{"bot": "random"}] * 3)
    response = hearts.post(f"/api/v1/games/{game['id']}/seats", {"name": "ann"})
    body = response.get_json()
    assert not any(s["has_passed"] for s in body["view"]["seats"])
    assert hearts.wait_for(game["id"], lambda v: v["awaiting"] == [0])["phase"] == "passing"


def test_a_game_stopped_midway_through_bot_moves_is_carried_on(redis_client, key_prefix):
    # A crash between bot moves: a request made one bot move, and no runner went on.
    settings = Settings(key_prefix=key_prefix, bot_moves_per_request=1, bot_runner=False)
    crashed = Hearts(create_app(settings, redis=redis_client).test_client())
    game_id, tokens = crashed.new_game(1)
    crashed_service = crashed.http.application.extensions["hearts"]
    assert bot_to_act(crashed_service.snapshot(game_id).state.state) is not None
    crashed_service.background.queue.done(game_id)  # even if the hand-over was lost

    # A fresh process: a read of the game hands it over again, and its runner plays on.
    fresh = Hearts(create_app(Settings(key_prefix=key_prefix), redis=redis_client).test_client())
    assert fresh.wait_for(game_id, lambda v: v["awaiting"] == [0])


def test_the_sweep_carries_on_every_game_waiting_on_a_bot(redis_client, key_prefix):
    settings = Settings(key_prefix=key_prefix, bot_moves_per_request=1, bot_runner=False)
    crashed = Hearts(create_app(settings, redis=redis_client).test_client())
    stuck = [crashed.new_game(1)[0] for _ in range(3)]
    fresh = create_app(settings, redis=redis_client)
    service = fresh.extensions["hearts"]
    service.background.queue.redis.delete(service.background.queue.key)  # hand-overs lost
    assert sweep(service.store, service.bots, service.hand_over) == 3
    assert service.background.queue.queued() == 3
    service.background.drive_due()  # what the runner's thread does
    for game_id in stuck:
        assert bot_to_act(service.snapshot(game_id).state.state) is None
    assert service.background.queue.queued() == 0
    assert sweep(service.store, service.bots, service.hand_over) == 0


def test_bot_moves_replay_from_the_log(hearts: Hearts, service):
    """Each bot move is what its bot chooses from the state before it (seed: game, version)."""
    game_id, tokens = hearts.new_game(1, rules={"score_limit": 30}, seed=chosen_seed("replayable"))
    hearts.play_out(game_id, tokens)
    log = service.store.read(game_id)
    table, checked, i = StoredGame(), 0, 0
    while i < len(log):
        group = [log[i]]
        while i + len(group) < len(log) and log[i + len(group)].command_id == log[i].command_id:
            group.append(log[i + len(group)])
        if is_bot_move(group[0].command_id):
            state = table.state
            seat = bot_to_act(state)
            command, _ = bot_move(state, seat, bot_seed(game_id, group[0].seq - 1, seat))
            events = [new_event(e) for e in decide(command, state)]
            assert [(e.type, e.payload) for e in events] == [
                (g.type, g.payload) for g in group[: len(events)]
            ]
            checked += 1
        table = fold_records(table, group)
        i += len(group)
    assert checked > 50


def test_a_seat_can_be_handed_to_a_bot_and_taken_back(hearts: Hearts, client):
    game_id, tokens = hearts.new_game(2)
    response = hearts.post(f"/api/v1/games/{game_id}/seats/1/bot", {"bot": "random"}, tokens[1])
    assert response.status_code == 200
    body = response.get_json()
    assert body["view"]["seats"][1]["bot"] == "random"
    assert body["events"][0]["type"] == "SeatControlChanged"
    # The bot passes for seat 1 (in the answer if within the budget, else soon after).
    poll(lambda: hearts.view(game_id), lambda v: v["seats"][1]["has_passed"])
    back = hearts.post(f"/api/v1/games/{game_id}/seats/1/bot", {"bot": None}, tokens[1])
    assert back.status_code == 200 and back.get_json()["view"]["seats"][1]["bot"] is None
    unknown = hearts.post(f"/api/v1/games/{game_id}/seats/1/bot", {"bot": "nobody"}, tokens[1])
    assert unknown.status_code == 422
