"""The turn clock in the browser (issue 19) against ``hearts serve`` and its in-process
timekeeper, in real time: the seat's countdown is shown and moves; with the seat's page closed
the timeout bot plays on the deadline and the seat is marked away; reopened, "I'm back" returns
the seat to its player."""

from __future__ import annotations

import json
import time
import uuid
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, expect

from tests.replay.live import request, start_server, stop_server

SECONDS = 6  # per decision: long enough to watch the countdown, short enough to wait out
RULES = {
    "seconds_per_decision": SECONDS,
    "timeouts_until_away": 1,  # the first timeout marks the seat away
    "pass_cycle": "hold_always",
    "score_limit": 500,  # the most: the bots that play on do not end the game meanwhile
}


def call(base: str, method: str, path: str, body=None, token: str | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    status, _, answer = request(urlsplit(base).port, method, f"/api/v1{path}", body, headers)
    return status, answer


def test_a_countdown_a_timeout_while_away_and_back(browser: Browser, web_server: str):
    base = web_server
    status, game = call(
        base, "POST", "/games", {"rules": RULES, "seats": [None] + [{"bot": "random"}] * 3}
    )
    assert status == 201, game
    game_id = game["id"]
    status, joined = call(base, "POST", f"/games/{game_id}/seats", {"name": "ann"})
    assert status == 201, joined
    token = joined["token"]
    seat = {game_id: {"seat": joined["seat"], "token": token, "name": "ann"}}
    context = browser.new_context()
    context.add_init_script(f"localStorage.setItem('hearts.seats', {json.dumps(json.dumps(seat))})")
    try:
        page = context.new_page()
        page.goto(f"{base}/#/game/{game_id}")
        countdown = page.locator(".seat.me .countdown")
        expect(countdown).to_be_visible(timeout=20_000)
        first = countdown.text_content()
        page.wait_for_timeout(1500)
        assert countdown.text_content() != first, "the countdown did not move"
        assert page.locator(".seat:not(.me) .countdown").count() == 0  # bots have no clock
        # The table added a seed of its own to the next hand's shuffle (issue 21).
        _, log = call(base, "GET", f"/games/{game_id}/events?limit=1000")
        assert ("SeedContributed", 0) in [
            (e["type"], e["payload"].get("seat")) for e in log["events"]
        ]
        page.close()  # the player walks away

        deadline = time.monotonic() + SECONDS + 20
        while True:
            _, view = call(base, "GET", f"/games/{game_id}", token=token)
            if view["clock"]["seats"][0]["away"]:
                break
            assert time.monotonic() < deadline, "the seat was never timed out"
            time.sleep(0.3)
        _, log = call(base, "GET", f"/games/{game_id}/events?limit=1000")
        kinds = [(e["type"], e["payload"].get("seat")) for e in log["events"]]
        timed_out = kinds.index(("SeatTimedOut", 0))
        assert kinds[timed_out + 1] == ("SeatControlChanged", 0)  # away: its bot plays on

        page = context.new_page()
        page.goto(f"{base}/#/game/{game_id}")
        expect(page.locator(".seat.me .tag.away")).to_be_visible()
        page.get_by_role("button", name="I'm back").click()
        expect(page.get_by_role("button", name="I'm back")).to_have_count(0)
        _, view = call(base, "GET", f"/games/{game_id}", token=token)
        assert view["seats"][0]["bot"] is None
        assert view["clock"]["seats"][0]["timeouts"] >= 1
    finally:
        context.close()


@pytest.fixture(scope="module")
def quick_bots_server(redis_server, tmp_path_factory):
    """hearts serve whose bots stand in for away players without the person's pace, so a hand
    whose only person timed out is played out in seconds."""
    prefix = f"clock-{uuid.uuid4().hex[:8]}"
    process, port = start_server(
        redis_server,
        prefix,
        tmp_path_factory.mktemp("gunicorn-clock"),
        HEARTS_BOT_AWAY_PACE="0.01",
        HEARTS_TIMEKEEPER_INTERVAL="0.2",
    )
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


def test_the_replay_marks_the_move_the_clock_gave_to_the_bot(
    browser: Browser, quick_bots_server: str
):
    base = quick_bots_server
    rules = {**RULES, "seconds_per_decision": 1, "score_limit": 1}  # one hand
    status, game = call(
        base, "POST", "/games", {"rules": rules, "seats": [None] + [{"bot": "random"}] * 3}
    )
    assert status == 201, game
    game_id = game["id"]
    call(base, "POST", f"/games/{game_id}/seats", {"name": "cal"})  # and never moves
    deadline = time.monotonic() + 60
    while call(base, "GET", f"/games/{game_id}")[1]["phase"] != "finished":
        assert time.monotonic() < deadline, "the hand was not played out"
        time.sleep(0.2)
    record = call(base, "GET", f"/games/{game_id}/hands/1")[1]
    assert record["timeouts"][0]["seat"] == 0  # then away: its bot played the rest
    page = browser.new_page()
    try:
        page.goto(f"{base}/#/replay/{game_id}/1")
        caption = page.locator(".caption")
        expect(caption).to_contain_text("0 / ")
        total = int((caption.text_content() or "").split(" / ")[1].split(":")[0])
        for step in range(1, total + 1):
            page.get_by_role("button", name="Forward").click()
            expect(caption).to_contain_text(f"{step} / {total}")  # the page drew this step
            if "time ran out" in (caption.text_content() or ""):
                break
        expect(caption).to_contain_text("time ran out: its bot played")
    finally:
        page.close()
