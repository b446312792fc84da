"""Bots play until a human must act; a game left on a bot's turn is carried on."""

from __future__ import annotations

from domain.decider import decide
from service.api.factory import create_app
from service.app.bot_runner import bot_move, bot_seed, bot_to_act, sweep
from service.app.game import StoredGame, fold_records, new_event
from service.settings import Settings
from tests.api.helpers import Hearts


def test_bots_stop_when_a_human_must_act(hearts: Hearts, service):
    game_id, tokens = hearts.new_game(1)
    state = service.snapshot(game_id).state.state
    assert bot_to_act(state) is None and 0 in hearts.view(game_id)["awaiting"]
    # Each bot move is its own append with a command id naming the command that caused it.
    moves = [e for e in service.store.read(game_id) if "+bot" in e.command_id]
    assert len(moves) == 3 and len({e.command_id for e in moves}) == 3


def test_a_game_stopped_midway_through_bot_moves_is_carried_on(redis_client, key_prefix):
    # A crash between bot moves is a request that made one bot move and stopped.
    settings = Settings(key_prefix=key_prefix, bot_moves_per_request=1)
    crashed = Hearts(create_app(settings, redis=redis_client).test_client())
    game_id, tokens = crashed.new_game(1)
    crashed_service = crashed.http.application.extensions["hearts"]
    assert bot_to_act(crashed_service.snapshot(game_id).state.state) is not None

    # A fresh process: its first request on the game lets the bots finish.
    fresh = create_app(Settings(key_prefix=key_prefix), redis=redis_client)
    view = fresh.test_client().get(f"/api/v1/games/{game_id}").get_json()
    assert view["awaiting"] == [0]


def test_the_sweep_carries_on_every_game_waiting_on_a_bot(redis_client, key_prefix):
    settings = Settings(key_prefix=key_prefix, bot_moves_per_request=1)
    crashed = Hearts(create_app(settings, redis=redis_client).test_client())
    stuck = [crashed.new_game(1)[0] for _ in range(3)]
    fresh = create_app(Settings(key_prefix=key_prefix), redis=redis_client)
    service = fresh.extensions["hearts"]
    assert sweep(service.store, service.bots) == 3
    for game_id in stuck:
        assert (
            bot_to_act(
                service.snapshot(
                    game_id,
                ).state.state
            )
            is None
        )
    assert sweep(service.store, service.bots) == 0


def test_bot_moves_replay_from_the_log(hearts: Hearts, service):
    """Each bot move is what its bot chooses from the state before it (seed: game, version)."""
    game_id, tokens = hearts.new_game(1, rules={"score_limit": 30}, seed="replayable")
    hearts.play_out(game_id, tokens)
    log = service.store.read(game_id)
    table, checked, i = StoredGame(), 0, 0
    while i < len(log):
        group = [log[i]]
        while i + len(group) < len(log) and log[i + len(group)].command_id == log[i].command_id:
            group.append(log[i + len(group)])
        if "+bot" in group[0].command_id:
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
    # The bot passed for seat 1 at once; seat 1 now only waits.
    assert body["view"]["seats"][1]["has_passed"]
    back = hearts.post(f"/api/v1/games/{game_id}/seats/1/bot", {"bot": None}, tokens[1])
    assert back.status_code == 200 and back.get_json()["view"]["seats"][1]["bot"] is None
    unknown = hearts.post(f"/api/v1/games/{game_id}/seats/1/bot", {"bot": "nobody"}, tokens[1])
    assert unknown.status_code == 422
