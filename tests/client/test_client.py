"""The Python client (clients/python) against the real service: gunicorn on a throwaway
redis-server. The README's example runs as written; refusals arrive as HeartsProblem; the
client's typed bodies name the fields the OpenAPI document does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from hearts_client import HeartsClient, HeartsProblem, Player, models

from tests import children
from tests.api.helpers import chosen_seed
from tests.replay.live import start_server, stop_server

# The server is the module's: the marker is too.
pytestmark = pytest.mark.unlimited(
    "one address plays many people against one server: 7 players register within a minute "
    "(the default lets an address register 5)"
)

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"
BOTS = ["random", "random", "random"]


@pytest.fixture(scope="module")
def base_url(redis_server, tmp_path_factory):
    prefix = f"client-{uuid.uuid4().hex[:12]}"
    process, port = start_server(redis_server, prefix, tmp_path_factory.mktemp("gunicorn"))
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


@pytest.fixture
def hearts(base_url):
    with HeartsClient(base_url) as client:
        yield client


def readme_example() -> str:
    text = (CLIENT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "the README has one Python example"
    return blocks[0]


def test_the_readme_example_plays_a_hand_as_written(base_url):
    code = readme_example()
    assert len([line for line in code.splitlines() if line.strip()]) <= 20
    env = {
        **os.environ,
        "HEARTS_URL": base_url,
        "PYTHONPATH": os.pathsep.join([str(CLIENT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    scores = re.fullmatch(r"scores: \[([-\d, ]+)\] winners: \[([\d, ]+)\]\n", done.stdout)
    assert scores, done.stdout
    # A whole hand was played: its penalty points (26, or a moon's 78) were handed out.
    assert sum(int(s) for s in scores.group(1).split(",")) in (26, 78)


def test_a_seat_plays_with_its_token(hearts):
    game = hearts.create_game(seats=[None, *BOTS], seed=chosen_seed("client"))
    me = hearts.join(game["id"], "cleo")
    assert me.view["phase"] == "passing" and me.my_turn
    result = me.pass_cards(me.view["legal_cards"][:3])
    assert result["view"]["passed_cards"] == me.view["passed_cards"]
    assert [e["type"] for e in result["events"]][:1] == ["CardsPassed"]
    seen = hearts.game(game["id"], me.token)
    assert seen["hand"] == me.refresh()["hand"]
    assert "hand" not in hearts.game(game["id"])  # the public view shows no hand


def play_to_the_end(seat) -> None:
    """The seat's first legal move each time it is due (its bots answer after each move: a
    few within the move's answer, the rest soon after)."""
    while seat.wait_for_turn()["phase"] != "finished":
        if seat.view["phase"] == "passing":
            seat.pass_cards(seat.view["legal_cards"][: seat.view["cards_to_pass"]])
        elif seat.view["phase"] == "moon_choice":
            seat.choose_moon("add_to_others")
        else:
            seat.play(seat.view["legal_cards"][0])


def test_a_seat_follows_its_game_live_then_replays_audits_and_exports_it(hearts):
    game = hearts.create_game(
        rules={"score_limit": 1}, seats=[None, *BOTS], seed=chosen_seed("follow")
    )
    me = hearts.join(game["id"], "flo")
    seen: list[dict] = []
    ended = threading.Event()

    def watch() -> None:
        seen.extend(me.follow())  # returns once the game has ended
        ended.set()

    threading.Thread(target=watch, daemon=True).start()
    play_to_the_end(me)
    assert ended.wait(60), "the live stream did not end with the game"
    version = hearts.game(game["id"])["version"]
    assert [event["seq"] for event in seen] == list(range(1, version + 1))
    # What arrived live is what the log holds for this seat, page by page.
    logged, after = [], 0
    while True:
        page = hearts.events(game["id"], token=me.token, after=after, limit=25)
        logged += page["events"]
        if not page["more"]:
            break
        after = page["next_after"]
    assert [(e["seq"], e["type"]) for e in logged] == [(e["seq"], e["type"]) for e in seen]
    # A follower that starts late gets the backlog, then the end.
    assert [e["seq"] for e in hearts.follow(game["id"], after=version - 3)] == list(
        range(version - 2, version + 1)
    )
    record = hearts.hand(game["id"], 1)
    assert len(record["dealt"]) == 4 and all(len(cards) == 13 for cards in record["dealt"])
    assert hearts.state_at(game["id"], 1, token=me.token)["phase"] == "waiting"
    assert hearts.audit(game["id"])["ok"] is True
    imported = hearts.import_game(hearts.export(game["id"]))
    assert hearts.audit(imported["id"])["ok"] is True


def test_a_private_table_is_joined_with_its_invitations_code(hearts):
    created = hearts.create_game(seats=[None, None, *BOTS[:2]], private=True)
    game_id, code = created["id"], created["join_code"]
    assert created["private"] is True and created["invitation"].endswith(f"/{game_id}/{code}")
    listed = hearts.list_games(limit=100)["games"]
    assert game_id not in {game["id"] for game in listed}
    with pytest.raises(HeartsProblem) as refused:
        hearts.join(game_id, "mallory")
    assert (refused.value.status, refused.value.code) == (403, "join-code-invalid")
    ann = hearts.join(game_id, "ann", join_code=code)
    bob = hearts.join(game_id, "bob", join_code=code)
    assert (ann.seat, bob.seat) == (0, 1)
    assert bob.view["phase"] == "passing"


def test_a_challenge_is_sent_accepted_declined_and_cancelled_by_name(hearts):
    sid = Player.register(hearts, f"sid{uuid.uuid4().hex[:8]}")
    tam = Player.register(hearts, f"tam{uuid.uuid4().hex[:8]}")
    sent = sid.challenge(tam.name, {"score_limit": 50})
    assert sent["state"] == "open" and sent["challenged"] == tam.name
    assert [c["id"] for c in tam.challenges() if c["direction"] == "incoming"] == [sent["id"]]
    with pytest.raises(HeartsProblem) as refused:
        sid.accept_challenge(sent["id"])
    assert (refused.value.status, refused.value.code) == (403, "challenge-not-yours")
    seat = tam.accept_challenge(sent["id"])
    assert seat.view["hand"] and seat.refresh()["rules"]["score_limit"] == 50
    accepted = sid.challenge_status(sent["id"])
    assert accepted["state"] == "accepted" and accepted["game_id"] == seat.game_id
    mine = sid.resume(accepted["game_id"], accepted["your_seat"])  # the challenger's token
    assert mine.view["hand"] and mine.seat != seat.seat
    declined = tam.decline_challenge(sid.challenge(tam.name)["id"])
    cancelled = sid.cancel_challenge(sid.challenge(tam.name)["id"])
    assert (declined["state"], cancelled["state"]) == ("declined", "cancelled")
    with pytest.raises(HeartsProblem) as unknown:
        sid.challenge(f"nobody{uuid.uuid4().hex[:8]}")
    assert (unknown.value.status, unknown.value.code) == (404, "player-not-found")


def test_a_restarted_client_finds_its_waiting_seek_and_cancels_it(hearts):
    ora = Player.register(hearts, f"ora{uuid.uuid4().hex[:8]}")
    sought = ora.seek(players=6, fill_with_bots_after=600)
    again = Player.from_key(hearts, ora.key)  # the key kept, the seek's id lost
    assert [s["id"] for s in again.seeks()] == [sought["id"]]
    assert again.cancel_seek(sought["id"])["state"] == "cancelled"
    assert again.seeks() == []


def test_refusals_are_problems_with_stable_codes(hearts):
    game = hearts.create_game(seats=[None, *BOTS], seed=chosen_seed("client-problems"))
    me = hearts.join(game["id"], "dora")
    with pytest.raises(HeartsProblem) as refused:
        me.play(me.view["hand"][0])  # still passing
    assert (refused.value.status, refused.value.code) == (409, "wrong-phase")
    with pytest.raises(HeartsProblem) as refused:
        me.pass_cards(["ZZ"])
    assert refused.value.status == 422
    with pytest.raises(HeartsProblem) as refused:
        hearts.create_game(rules={"players": 9})
    assert (refused.value.status, refused.value.code) == (422, "invalid-rules")
    with pytest.raises(HeartsProblem) as refused:
        hearts.join(game["id"], "")
    assert refused.value.code == "validation-error" and "name" in refused.value.errors
    with pytest.raises(HeartsProblem) as refused:
        hearts.game("no-such-game")
    assert (refused.value.status, refused.value.code) == (404, "game-not-found")


def test_a_seat_on_the_clock_sees_its_deadline_and_comes_back(hearts):
    game = hearts.create_game(
        rules={"time_control": "relaxed"}, seats=[None, *BOTS], seed=chosen_seed("client-clock")
    )
    me = hearts.join(game["id"], "tim")
    clock = me.view["clock"]
    assert clock is not None and clock["seconds_per_decision"] == 60
    assert clock["seats"][me.seat]["deadline"] is not None  # passing: its time runs
    with pytest.raises(HeartsProblem) as refused:
        me.back()
    assert (refused.value.status, refused.value.code) == (409, "not-away")
    me.set_bot("random")
    back = me.back()
    assert back["view"]["seats"][me.seat]["bot"] is None


def test_a_repeated_join_gets_the_same_seat_and_token(hearts):
    game = hearts.create_game(seats=[None, None, *BOTS[:2]])
    key = uuid.uuid4().hex
    first = hearts.join(game["id"], "eve", idempotency_key=key)
    again = hearts.join(game["id"], "eve", idempotency_key=key)
    assert (again.seat, again.token) == (first.seat, first.token)


def test_games_are_listed_by_player(hearts):
    name = f"p{uuid.uuid4().hex[:8]}"
    game = hearts.create_game(seats=[None, *BOTS])
    hearts.join(game["id"], name)
    deadline = time.monotonic() + 10
    while True:  # the listing is an index the append updates; no waiting expected, but bounded
        listed = hearts.list_games(player=name)
        if listed["games"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert [g["id"] for g in listed["games"]] == [game["id"]]


@pytest.mark.parametrize(
    ("typed", "component"),
    [
        (models.Created, "Created"),
        (models.SeatView, "SeatView"),
        (models.PublicView, "PublicView"),
        (models.Joined, "Joined"),
        (models.CommandResult, "CommandResult"),
        (models.Event, "Event"),
        (models.GameList, "GameList"),
        (models.Trick, "Trick"),
        (models.SeatPublic, "SeatPublic"),
    ],
)
def test_the_typed_bodies_name_the_documented_fields(hearts, typed, component):
    document = hearts.http.get("/api/v1/openapi.json").json()
    documented = set(document["components"]["schemas"][component]["properties"])
    assert set(typed.__annotations__) | _inherited(typed) == documented


def _inherited(typed: type) -> set[str]:
    return {name for base in typed.__mro__[1:] for name in getattr(base, "__annotations__", {})}


def test_arranged_games_are_marked_and_filtered(hearts):
    seeded = hearts.create_game(seats=[None, *BOTS], seed=chosen_seed("chosen"))
    plain = hearts.create_game(seats=[None, *BOTS])
    assert hearts.game(seeded["id"])["arranged"] is True
    assert hearts.game(plain["id"])["arranged"] is False
    only = {g["id"] for g in hearts.list_games(arranged=True, limit=100)["games"]}
    assert seeded["id"] in only and plain["id"] not in only


def test_a_guessable_join_key_is_refused(hearts):
    game = hearts.create_game(seats=[None, *BOTS])
    with pytest.raises(HeartsProblem) as refused:
        hearts.join(game["id"], "eve", idempotency_key="join-1")
    assert (refused.value.status, refused.value.code) == (422, "idempotency-key-guessable")


def test_a_registered_players_ratings(hearts):
    registered = hearts.http.post("/api/v1/players", json={"name": f"Zed{uuid.uuid4().hex[:8]}"})
    assert registered.status_code == 201
    player = registered.json()
    body = hearts.ratings(player["id"])
    assert body["player_id"] == player["id"] and body["name"] == player["name"]
    assert body["rating"] is None and body["history"] == [] and body["provisional"] is True
    with pytest.raises(HeartsProblem) as refused:
        hearts.ratings("p" + "0" * 20)
    assert refused.value.code == "player-not-found"


def test_a_groups_standings(hearts):
    suffix = uuid.uuid4().hex[:8]
    names = [f"{n}{suffix}" for n in ("Amy", "Ben", "Cal", "Dot")]
    ids = {}
    for name in names:
        registered = hearts.http.post("/api/v1/players", json={"name": name})
        assert registered.status_code == 201
        ids[name] = registered.json()["id"]
    body = hearts.standings(names)
    assert body["games"] == 0
    assert [row["name"] for row in body["players"]] == names  # no games: in the given order
    for row in body["players"]:
        assert row["player_id"] == ids[row["name"]] and row["games"] == row["wins"] == 0
        assert row["average_points"] is None and row["rating"] is None and row["provisional"]
    with pytest.raises(HeartsProblem) as refused:
        hearts.standings(names[:1])
    assert (refused.value.status, refused.value.code) == (400, "invalid-group")


def test_a_player_joins_with_its_key_and_resumes_on_another_device(hearts, base_url):
    player = Player.register(hearts, f"Una{uuid.uuid4().hex[:8]}")
    assert player.key.startswith("hp_")
    game = hearts.create_game(seats=[None, *BOTS])
    seat = player.join(game["id"])
    assert seat.view["seats"][seat.seat]["player_id"] == player.id
    assert [g["id"] for g in player.games()] == [game["id"]]

    # Another device: the key alone finds the player and takes the seat up again.
    with HeartsClient(base_url) as other:
        again = Player.from_key(other, player.key)
        assert (again.id, again.name) == (player.id, player.name)
        resumed = again.resume(game["id"], seat.seat)
        assert resumed.seat == seat.seat and resumed.token != seat.token
    with pytest.raises(HeartsProblem) as stale:
        seat.refresh()  # the first device's token stopped working
    assert stale.value.status == 401

    old = player.key
    player.rotate_key()
    with pytest.raises(HeartsProblem) as refused:
        Player.from_key(hearts, old)
    assert refused.value.status == 401
    assert player.ratings()["player_id"] == player.id
    player.revoke_key()
    with pytest.raises(HeartsProblem):
        Player.from_key(hearts, player.key)
    with pytest.raises(HeartsProblem) as taken:
        Player.register(hearts, player.name.upper())  # a name compares case-folded
    assert taken.value.code == "player-name-taken"


def test_the_example_bot_plays_its_matched_games_to_the_end_through_its_one_stream(base_url):
    """clients/python/examples/stream_bot.py against hearts serve, with three other players
    seeking at once (each hands its seat to a bot once seated): the game the example bot is
    paired into is played to the end by it, through its single stream."""
    with HeartsClient(base_url) as client:
        bot = Player.register(client, f"robo{uuid.uuid4().hex[:8]}")
        env = {
            **os.environ,
            "HEARTS_URL": base_url,
            "HEARTS_KEY": bot.key,
            "PYTHONPATH": os.pathsep.join([str(CLIENT / "src"), os.environ.get("PYTHONPATH", "")]),
        }
        example = children.start(
            [sys.executable, str(CLIENT / "examples" / "stream_bot.py"), "--games", "1"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            others = [Player.register(client, f"seek{uuid.uuid4().hex[:8]}") for _ in range(3)]
            seeks = {}
            go = threading.Barrier(3)

            def post(player: Player) -> None:
                go.wait()
                seeks[player.id] = player.seek()

            threads = [threading.Thread(target=post, args=(p,)) for p in others]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            game_ids = set()
            for player in others:
                deadline = time.monotonic() + 30
                found = player.seek_status(seeks[player.id]["id"])
                while found["state"] != "matched":
                    assert time.monotonic() < deadline, found
                    time.sleep(0.2)
                    found = player.seek_status(found["id"])
                game_ids.add(found["game_id"])
                player.resume(found["game_id"], found["seat"]).set_bot("random")
            assert len(game_ids) == 1
            (game_id,) = game_ids
            out, err = example.communicate(timeout=240)
        finally:
            example.kill()
        assert example.returncode == 0, err
        assert f"{game_id} over" in out
        view = client.game(game_id)
        assert view["phase"] == "finished"
        seat = next(s for s in view["seats"] if s["player_id"] == bot.id)
        assert seat["bot"] is None  # the example bot played its seat itself, all game
        moves = [
            e for e in client.events(game_id, limit=1000)["events"] if e["type"] == "CardPlayed"
        ]
        assert sum(e["payload"]["seat"] == seat["seat"] for e in moves) >= 13


def test_bot_accounts_play_a_tournament_and_hearts_verify_checks_it(hearts, tmp_path):
    from hearts_client.verify_tournament import verify_tournament

    players = [Player.register(hearts, f"T{uuid.uuid4().hex[:8]}") for _ in range(8)]
    created = players[0].create_tournament("Client cup", rounds=2, boards=1, min_players=8)
    tid = created["id"]
    assert tid in [t["id"] for t in hearts.tournaments(status="upcoming", limit=100)]
    for player in players:
        player.enter_tournament(tid, stand_in="random")
    assert players[0].start_tournament(tid)["status"] == "running"
    deadline = time.monotonic() + 120
    while hearts.tournament(tid)["status"] != "finished":
        assert time.monotonic() < deadline, "the tournament did not finish"
        time.sleep(0.2)
    rounds = hearts.tournament_pairings(tid)
    assert [r["ended"] for r in rounds] == [True, True]
    standings = hearts.tournament_standings(tid)
    assert {row["player"] for row in standings["standings"]} == {p.id for p in players}
    assert len(hearts.tournament_board(tid, 1, 1)["tables"]) == 2
    findings = verify_tournament(hearts.tournament_export(tid))
    assert findings and all(f.ok for f in findings), [str(f) for f in findings]
    # Its live stream from the start: every entry once, in order, and it ends (it is over).
    log = hearts.tournament_events(tid)
    followed = list(hearts.follow_tournament(tid))
    assert [e["seq"] for e in followed] == list(range(1, log["version"] + 1))
    assert followed == log["events"]


def test_bot_accounts_play_an_arena_through_the_client(hearts):
    players = [Player.register(hearts, f"A{uuid.uuid4().hex[:8]}") for _ in range(4)]
    created = players[0].create_arena("Client arena", duration_seconds=60, min_players=4)
    tid = created["id"]
    assert created["format"] == "arena" and created["arena"]["hands"] == 1
    for player in players:
        player.enter_tournament(tid, stand_in="random")
    assert players[0].start_tournament(tid)["arena"]["games_paired"] == 1
    deadline = time.monotonic() + 60
    while sum(g["scores"] is not None for g in hearts.arena_games(tid)) < 2:
        assert time.monotonic() < deadline, "the arena's bots did not finish two games"
        time.sleep(0.2)
    standings = hearts.tournament_standings(tid)
    assert standings["frozen"] is False and standings["games_counted"] >= 2
    assert {row["player"] for row in standings["standings"]} == {p.id for p in players}
    assert sum(row["points"] for row in standings["standings"]) == 12 * standings["games_counted"]
    players[0].cancel_tournament(tid)


def test_the_main_readme_shows_the_example_tested_here() -> None:
    """The top-level README's Python example is this one, so it runs as written too."""
    text = (CLIENT.parents[1] / "README.md").read_text()
    assert re.findall(r"```python\n(.*?)```", text, flags=re.S) == [readme_example()]
