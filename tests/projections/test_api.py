"""Full games through the API; scoreboards and the leaderboard checked against hand records.

The expected figures are computed here from the hand records of each game's log
(``service.app.hand_records``), not with the projection code.
"""

from __future__ import annotations

from collections import defaultdict

import fakeredis
import pytest

from projections.stats import FIGURES
from service.api.factory import create_app
from service.api.projections import projections as app_projections
from service.app.hand_records import decode_events, hand_records
from service.app.projector import Projector
from service.settings import Settings
from tests.api.helpers import PROBLEM, Hearts
from tests.background import settle
from tests.projections.helpers import drain

BOTS = [{"bot": "random"}] * 4


@pytest.fixture
def app(real_redis, key_prefix):
    return create_app(Settings(key_prefix=key_prefix), redis=real_redis)


@pytest.fixture
def client(app):
    return app.test_client()


def _seated(hearts: Hearts, seats: list, names: list[str], **body) -> tuple[str, dict[int, str]]:
    game = hearts.create(seats, **body)
    tokens = {}
    for name in names:
        seat, token = hearts.join(game["id"], name)
        tokens[seat] = token
    return game["id"], tokens


def _play_games(client) -> list[str]:
    hearts = Hearts(client)
    rules = {"score_limit": 30}
    ids = [hearts.create(BOTS, rules=rules)["id"]]  # bots play it out in the background
    ids.append(hearts.create(BOTS, rules={"preset": "omnibus", "score_limit": 30})["id"])
    for game_id in ids:
        hearts.wait_for(game_id, lambda v: v["phase"] == "finished")
    game, tokens = _seated(hearts, [None] + BOTS[:3], ["ann"], rules={"score_limit": 20})
    hearts.play_out(game, tokens)
    ids.append(game)
    game, tokens = _seated(hearts, [None, None] + BOTS[:2], ["ann", "bob"], rules=rules)
    hearts.play_out(game, tokens)
    ids.append(game)
    # Unfinished: started (counts as played), a few moves in.
    game, tokens = _seated(hearts, [None, None, None, BOTS[0]], ["bob", "cy", "ann"])
    for _ in range(5):
        waiting = hearts.wait_for_humans(game, tokens)["awaiting"]
        seat = next(s for s in waiting if s in tokens)
        hearts.act(game, seat, tokens[seat])
    hearts.wait_for_humans(game, tokens)  # its bot done: the game waits on a player
    ids.append(game)
    # Waiting for players: never started, so nobody's figures change.
    ids.append(_seated(hearts, [None, None] + BOTS[:2], ["dee"])[0])
    return ids


def _records(store, game_id: str):
    return hand_records(decode_events(store.read(game_id)))


def _expected_players(store, game_ids: list[str]) -> dict[str, dict]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for game_id in game_ids:
        records = _records(store, game_id)
        if not records:
            continue
        names = [seat["name"] for seat in records[0].seats]
        for name in names:
            counts[name]["games_played"] += 1
        for event in store.read(game_id):
            if event.type == "SeatTimedOut":
                counts[names[event.payload["seat"]]]["timeouts"] += 1
        runs = [0] * len(names)  # hands in a row the seat took no point in (this game)
        for record in records:
            for trick in record.tricks:
                cards = [card for _, card in trick.plays] + list(trick.kitty or ())
                winner = names[trick.winner]
                counts[winner]["qs_taken"] += "QS" in cards
                counts[winner]["hearts_taken"] += sum(1 for c in cards if c.endswith("H"))
            if not record.finished:
                continue
            for seat, name in enumerate(names):
                counts[name]["hands_played"] += 1
                counts[name]["points"] += record.score_changes[seat]
                runs[seat] = runs[seat] + 1 if record.points_taken[seat] == 0 else 0
                best = max(counts[name]["longest_clean_streak"], runs[seat])
                counts[name]["longest_clean_streak"] = best
                if record.shooter == seat:
                    counts[name][f"{record.shot}s_shot"] += 1
            if record.game_over:
                for seat, name in enumerate(names):
                    counts[name]["games_finished"] += 1
                    counts[name]["final"] += record.totals[seat]
                    counts[name]["wins"] += seat in record.winners
    expected = {}
    for name, c in counts.items():
        finished, hands = c["games_finished"], c["hands_played"]
        expected[name] = {
            "name": name,
            "games_played": c["games_played"],
            "games_finished": finished,
            "wins": c["wins"],
            "hands_played": hands,
            "moons_shot": c["moons_shot"],
            "suns_shot": c["suns_shot"],
            "qs_taken": c["qs_taken"],
            "hearts_taken": c["hearts_taken"],
            "timeouts": c["timeouts"],
            "longest_clean_streak": c["longest_clean_streak"],
            "win_rate": c["wins"] / finished if finished else None,
            "average_final_score": c["final"] / finished if finished else None,
            "average_points_per_hand": c["points"] / hands if hands else None,
            "rating": None,  # guests and bots are not rated
        }
    return expected


def test_scoreboards_and_leaderboard_match_the_hand_records(app, client, store):
    game_ids = _play_games(client)
    response = client.get(f"/api/v1/games/{game_ids[0]}/scoreboard")
    assert response.status_code == 404 and response.mimetype == PROBLEM
    assert response.get_json()["code"] == "scoreboard-not-ready"
    assert response.headers["Retry-After"] == "1"

    with app.app_context():
        projections = app_projections()
    drain(Projector(projections, consumer="api-test"))

    for game_id in game_ids:
        response = client.get(f"/api/v1/games/{game_id}/scoreboard")
        assert response.status_code == 200
        board = response.get_json()
        records = _records(store, game_id)
        assert board["as_of"]["seq"] == store.version(game_id)
        partition = store.partition_of(game_id)
        head = store.redis.xrevrange(store.log_key(partition), count=1)[0][0].decode()
        assert board["as_of"]["partition"] == partition and board["as_of"]["position"] == head
        assert len(board["hands"]) == len(records)
        for hand, record in zip(board["hands"], records, strict=True):
            assert hand["hand_number"] == record.number
            assert hand["pass_direction"] == record.pass_direction
            assert hand["scored"] == record.finished
            if record.finished:
                assert hand["points_taken"] == list(record.points_taken)
                assert (hand["shot"], hand["shooter"]) == (record.shot, record.shooter)
                assert hand["score_changes"] == list(record.score_changes)
                assert hand["totals"] == list(record.totals)
        finished = bool(records) and records[-1].game_over
        assert board["status"] == ("finished" if finished else "playing" if records else "waiting")
        if finished:
            assert board["winners"] == list(records[-1].winners)
            totals = list(records[-1].totals)
            assert board["totals"] == totals
            ranked = sorted(range(len(totals)), key=lambda s: (totals[s], s))
            assert [s["seat"] for s in board["standings"]] == ranked
            assert [s["winner"] for s in board["standings"]] == [
                s in records[-1].winners for s in ranked
            ]

    expected = _expected_players(store, game_ids)
    games_of = defaultdict(set)
    for game_id in game_ids:
        for record in _records(store, game_id)[:1]:
            for seat in record.seats:
                games_of[seat["name"]].add(game_id)
    assert {"ann", "bob", "cy", "random"} == set(expected)
    for name, figures in expected.items():
        response = client.get(f"/api/v1/players/{name}")
        assert response.status_code == 200
        body = response.get_json()
        assert {k: body[k] for k in figures} == figures
        assert body["as_of"]["lag"] == 0
        listed = [g["game_id"] for g in body["recent_games"]]
        assert sorted(listed) == sorted(games_of[name])  # fewer than 10 each
        for game in body["recent_games"]:
            seats = [s["seat"] for s in game["seats"]]
            board = client.get(f"/api/v1/games/{game['game_id']}/scoreboard").get_json()
            assert seats == [s["seat"] for s in board["seats"] if s["name"] == name]

    for sort, figure in FIGURES.items():
        # Guests and bots have no rating: ranked by rating (established ratings only), the
        # board lists nobody here.
        shown = {} if sort == "rating" else expected
        rows, cursor = [], None
        while True:
            query = f"/api/v1/leaderboard?sort={sort}&limit=2" + (
                f"&cursor={cursor}" if cursor else ""
            )
            body = client.get(query).get_json()
            assert body["total"] == len(shown) and body["as_of"]["lag"] == 0
            rows += body["players"]
            cursor = body["next_cursor"]
            if cursor is None:
                break
        assert [r["rank"] for r in rows] == list(range(1, len(shown) + 1))
        descending = figure.better == "high"

        def key(name, sort=sort, descending=descending):
            value = expected[name][sort]
            return (1, 0, name) if value is None else (0, -value if descending else value, name)

        assert [r["name"] for r in rows] == sorted(shown, key=key)
        for row in rows:
            assert {k: row[k] for k in expected[row["name"]]} == expected[row["name"]]


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("/api/v1/leaderboard?sort=luck", 400, "invalid-sort"),
        ("/api/v1/leaderboard?order=sideways", 400, "invalid-order"),
        ("/api/v1/leaderboard?limit=0", 400, "invalid-limit"),
        ("/api/v1/leaderboard?limit=1000", 400, "invalid-limit"),
        ("/api/v1/leaderboard?limit=two", 400, "invalid-limit"),
        ("/api/v1/leaderboard?cursor=%%%", 400, "invalid-cursor"),
        ("/api/v1/players/nobody", 404, "player-not-found"),
        ("/api/v1/players/ann?recent=0", 400, "invalid-limit"),
        ("/api/v1/games/no-such-game/scoreboard", 404, "game-not-found"),
    ],
)
def test_bad_queries_and_unknown_names_are_problems(client, query, status, code):
    response = client.get(query)
    assert response.status_code == status and response.mimetype == PROBLEM
    body = response.get_json()
    assert body["code"] == code and body["type"] == f"/problems/{code}"
    described = client.get(f"/problems/{code}")
    assert described.status_code == 200


def test_a_cursor_of_another_sort_is_refused(app, client, store):
    hearts = Hearts(client)
    for _ in range(2):
        hearts.create(BOTS, rules={"score_limit": 10})
    game, tokens = _seated(hearts, [None] + BOTS[:3], ["ann"], rules={"score_limit": 10})
    hearts.play_out(game, tokens)
    with app.app_context():
        drain(Projector(app_projections(), consumer="c"))
    first = client.get("/api/v1/leaderboard?sort=wins&limit=1").get_json()
    assert first["next_cursor"]
    response = client.get(f"/api/v1/leaderboard?sort=qs_taken&cursor={first['next_cursor']}")
    assert response.status_code == 400 and response.get_json()["code"] == "invalid-cursor"


def test_metrics_show_the_projection_lag(app, client):
    hearts = Hearts(client)
    game = hearts.create(BOTS, rules={"score_limit": 10})
    hearts.wait_for(game["id"], lambda v: v["phase"] == "finished")  # bots play in the background
    text = client.get("/metrics").get_data(as_text=True)
    lag = [line for line in text.splitlines() if line.startswith("hearts_projection_lag ")]
    assert len(lag) == 1 and float(lag[0].split()[1]) > 0
    with app.app_context():
        drain(Projector(app_projections(), consumer="m"))
    text = client.get("/metrics").get_data(as_text=True)
    assert "hearts_projection_lag 0.0" in text
    assert 'hearts_projection_lag_events{partition="0"} 0.0' in text


def test_with_fakeredis_serve_projects_in_a_thread_of_the_app(key_prefix):
    fake = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    app = create_app(Settings(key_prefix=key_prefix, projector_in_process=True), redis=fake)
    try:
        client = app.test_client()
        game_id = Hearts(client).create(BOTS, rules={"score_limit": 10})["id"]
        # Waited on the work itself: the bots played it out and the thread folded every entry
        # (issue 34: polling the board for 20 s failed in a loaded run).
        settle(app, [game_id])
        board = client.get(f"/api/v1/games/{game_id}/scoreboard").get_json()
        assert board["status"] == "finished"
        assert board["as_of"]["seq"] == app.extensions["hearts"].store.version(game_id)
    finally:
        app.extensions["hearts.projector_stop"].set()
