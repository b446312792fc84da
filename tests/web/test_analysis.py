"""Issue 23: the replay of an analysed hand shows an evaluation on every move and the marks
(and followed the job's progress as Server-Sent Events).

A game of four random bots (a random player leaves points on the table: marks to show) is played
by the server; its first hand is analysed from the replay page's button, and then every step of
the replay that is a decision shows that decision's evaluation, and the list of marked moves is
the analysis's own."""

from __future__ import annotations

import math
import secrets
import time
from urllib.parse import urlsplit

from playwright.sync_api import Browser, expect

from tests.replay.live import request
from tests.web.console import watch


def finished_hand(port: int) -> str:
    seats = [{"bot": "random"}] * 4
    headers = {"Idempotency-Key": secrets.token_hex(32)}
    status, _, body = request(port, "POST", "/api/v1/games", {"seats": seats}, headers)
    assert status == 201, body
    game_id = body["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status, _, hand = request(port, "GET", f"/api/v1/games/{game_id}/hands/1")
        if status == 200 and hand["finished"]:
            return game_id
        time.sleep(0.2)
    raise AssertionError("the bots did not finish hand 1")


def test_an_analysed_hand_shows_every_evaluation_and_the_marks(browser: Browser, web_server: str):
    port = urlsplit(web_server).port
    game_id = finished_hand(port)
    page = browser.new_context().new_page()
    errors = watch(page)
    streams: list[str] = []
    page.on(
        "request",
        lambda r: (
            streams.append(r.url)
            if "text/event-stream" in r.headers.get("accept", "") and r.url.endswith("/analysis")
            else None
        ),
    )
    page.goto(f"{web_server}/#/replay/{game_id}/1")
    page.locator(".analysis button.analyse").click()
    expect(page.locator(".analysis .accuracies li")).to_have_count(4, timeout=180_000)

    assert streams, "the page follows the job's progress as Server-Sent Events"
    status, _, job = request(port, "GET", f"/api/v1/games/{game_id}/hands/1/analysis")
    assert status == 200 and job["state"] == "done"
    analysis = job["result"]
    marked = [d for d in analysis["decisions"] if d["mark"]]
    assert marked, "random bots leave marks"
    expect(page.locator(".analysis .marks li.marked")).to_have_count(len(marked))
    for item, decision in zip(
        page.locator(".analysis .marks li.marked").all(), marked, strict=True
    ):
        expect(item).to_have_attribute("data-mark", decision["mark"])

    # Each seat's line in plain words (issue 44): forced decisions only counted, the share and
    # the points given away of real choices alone.
    lines = page.locator(".analysis .accuracies li").all()
    for line, seat in zip(lines, analysis["seats"], strict=True):
        text = " ".join(line.inner_text().split())
        assert "choice(s)" not in text and "forced" not in text and "loss" not in text, text
        every = seat["decisions"] + seat["forced"]
        if seat["decisions"]:
            assert f"{seat['decisions']} of {every} decision" in text, text
            shown = math.floor(seat["accuracy"] + 0.5)  # as JS's toFixed(0): half up, not even
            assert f"{shown}% of choices unmarked" in text, text
            assert f"about {seat['total_loss']:.1f} points given away" in text, text
        else:
            assert "no real choice this hand" in text, text

    # Every play step shows its play's evaluation; the pass step all four passes.
    plays = [d for d in analysis["decisions"] if d["kind"] == "play"]
    passes = [d for d in analysis["decisions"] if d["kind"] == "pass"]
    slider = page.locator("#replay input[type=range]")
    last = int(slider.get_attribute("max"))
    seen_plays = 0
    for at in range(last + 1):
        slider.fill(str(at))
        expect(page.locator("#replay")).to_have_attribute("data-step", str(at))
        caption = page.locator("#replay .caption").inner_text()
        here = page.locator(".analysis .here .evaluation")
        if "plays" in caption:
            expect(here).to_have_count(1)
            expect(here).to_have_attribute("data-kind", "play")
            seen_plays += 1
        elif caption.split(": ", 1)[1].startswith("Pass") and passes:
            expect(here).to_have_count(len(passes))
    assert seen_plays == len(plays) == 52

    # A marked move's button takes the replay to that move, which shows its mark.
    page.locator(".analysis .marks li.marked button").first.click()
    mark = marked[0]["mark"]
    expect(
        page.locator(f'.analysis .here .evaluation .mark[data-mark="{mark}"]').first
    ).to_be_visible()

    # Issue 34: a click in the replay (the button above, the felt, a marked move) no longer
    # reads the section's own data-step as a move: the step stays a number and the controls
    # and the arrow keys keep working.
    page.locator("#replay .felt").click()
    at = int(page.locator("#replay").get_attribute("data-step"))
    page.get_by_role("button", name="Forward").click()
    expect(page.locator("#replay")).to_have_attribute("data-step", str(at + 1))
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#replay")).to_have_attribute("data-step", str(at))
    page.get_by_role("button", name="Last").click()
    expect(page.locator("#replay")).to_have_attribute("data-step", str(last))
    assert errors == []
