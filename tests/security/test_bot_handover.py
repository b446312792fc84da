"""Issue 42, all-bot games by a hand-over: the bot-game limits hold whatever route a game takes.

The attack: create a game with one open seat and three bots (an ordinary create), join the open
seat as a guest, hand it to a bot. That made a clockless game of bots only that ran at full
speed, counted neither by ``HEARTS_MAX_BOT_GAMES`` nor by the all-bot rate limit
(``bots:playing`` stayed 0 with 40 of them running). Now a game that becomes all-bot is counted
at the change: the hand-over is refused past the per-address limit (429 ``rate-limited``) and
past the deployment's cap (503 ``bot-games-full``), its place is given back when a person takes
a seat back, and bots standing in for every person of a clockless game play at a person's pace.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

from service.app.bot_runner import table_pace
from service.app.game_service import GameService
from tests.api.helpers import PROBLEM, Hearts, auth
from tests.security.test_rate_limits import assert_limited, limited_app

GAMES = "/api/v1/games"
ONE_OPEN = [None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}]


def service_of(app: Flask) -> GameService:
    return app.extensions["hearts"]


def seated_guest(hearts: Hearts, n: int) -> tuple[str, str]:
    """A game with one open seat and three bots, its open seat taken by a guest."""
    game = hearts.create(ONE_OPEN)
    _, token = hearts.join(game["id"], f"guest{n}", seat=0)
    return game["id"], token


def hand_to_bot(app: Flask, game_id: str, token: str, bot: str | None = "random") -> Any:
    return app.test_client().post(
        f"{GAMES}/{game_id}/seats/0/bot", json={"bot": bot}, headers=auth(token)
    )


def test_forty_hand_overs_from_one_address_are_refused_past_the_bot_game_limit(key_prefix):
    # The default all-bot limit (3 a minute); every other limit out of the way, and no runner
    # (what is counted is the point, not the play).
    app = limited_app(key_prefix, rate_limit_bot_games="3/minute;20/hour", bot_runner=False)
    hearts = Hearts(app.test_client())
    answers = []
    for n in range(40):
        game_id, token = seated_guest(hearts, n)
        answers.append((game_id, hand_to_bot(app, game_id, token)))
    assert [a.status_code for _, a in answers[:3]] == [200, 200, 200]
    for _, refused in answers[3:]:
        assert_limited(refused)
    # The three that became games of bots only count among those in play; the refused ones
    # kept their person's seat (nothing appended).
    playing = service_of(app).bot_games
    assert playing.count() == 3
    for game_id, refused in answers[3:]:
        view = hearts.view(game_id)
        assert view["version"] == refused.get_json().get("version", view["version"])
        assert service_of(app).snapshot(game_id).state.state.seats[0].bot is None
    # Another address has its own budget.
    game_id, token = seated_guest(hearts, 41)
    other = app.test_client().post(
        f"{GAMES}/{game_id}/seats/0/bot",
        json={"bot": "random"},
        headers=auth(token),
        environ_base={"REMOTE_ADDR": "10.4.2.42"},
    )
    assert other.status_code == 200 and playing.count() == 4


def test_a_hand_over_past_the_cap_is_refused_as_a_create_would_be(key_prefix):
    app = limited_app(key_prefix, max_bot_games=2, bot_runner=False)
    hearts = Hearts(app.test_client())
    games = [seated_guest(hearts, n) for n in range(3)]
    assert [hand_to_bot(app, g, t).status_code for g, t in games[:2]] == [200, 200]
    full = hand_to_bot(app, *games[2])
    assert full.status_code == 503 and full.mimetype == PROBLEM
    assert full.get_json()["code"] == "bot-games-full"
    assert 1 <= int(full.headers["Retry-After"]) <= 60
    assert service_of(app).snapshot(games[2][0]).state.state.seats[0].bot is None
    # A create of a game of bots only meets the same full cap.
    created = app.test_client().post(GAMES, json={"seats": [{"bot": "random"}] * 4})
    assert created.status_code == 503
    # A person taking their seat back gives the place back; the next hand-over takes it.
    back = app.test_client().post(
        f"{GAMES}/{games[0][0]}/seats/0/back", json={}, headers=auth(games[0][1])
    )
    assert back.status_code == 200 and service_of(app).bot_games.count() == 1
    assert hand_to_bot(app, *games[2]).status_code == 200
    assert service_of(app).bot_games.count() == 2


def test_bots_standing_in_for_every_person_of_a_clockless_game_play_at_a_persons_pace(
    key_prefix,
):
    app = limited_app(key_prefix, bot_runner=False, bot_away_pace=2.0)
    hearts = Hearts(app.test_client())
    game_id, token = seated_guest(hearts, 0)
    handed = hand_to_bot(app, game_id, token)
    assert handed.status_code == 200
    # No bot move in the request that handed the seat over: the background runner plays them,
    # one per pace.
    assert not [e for e in handed.get_json()["events"] if e["type"] == "CardPlayed"]
    state = service_of(app).snapshot(game_id).state.state
    assert not state.rules.clocked
    assert table_pace(state, 2.0) == 2.0
    # A game created with every seat a bot (capped and limited at its create) is not paced.
    bots = hearts.create([{"bot": "random"}] * 4)
    assert table_pace(service_of(app).snapshot(bots["id"]).state.state, 2.0) == 0.0
