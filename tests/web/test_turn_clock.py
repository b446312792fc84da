"""The turn clock in the browser (issue 19) against ``hearts serve`` and its in-process
timekeeper, in real time: the seat's countdown is shown and moves; with the seat's page closed
the timeout bot plays on the deadline and the seat is marked away; reopened, "I'm back" returns
the seat to its player."""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

from playwright.sync_api import Browser, expect

from tests.replay.live import request

SECONDS = 6  # per decision: long enough to watch the countdown, short enough to wait out
RULES = {
    "seconds_per_decision": SECONDS,
    "timeouts_until_away": 1,  # the first timeout marks the seat away
    "pass_cycle": "hold_always",
    "score_limit": 10_000,  # the bots that play on do not end the game meanwhile
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
