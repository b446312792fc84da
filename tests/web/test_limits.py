"""A form refused over a rate limit for longer than the page waits (issue 34): api.js waits out
a 429 or 503 of up to 30 s itself (test_defaults.py); past that it gives up, and the page says
what happened and when to try again (a countdown in the problem box), drawn as text, and
kept in sight: no poll hides it a second later."""

from __future__ import annotations

import json
import re
import time
import uuid
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.replay.live import request, start_server, stop_server
from tests.web.console import watch
from tests.web.test_ratings import _call

HOSTILE = '<img src=x onerror="window.__pwned=1">'


@pytest.fixture(scope="module")
def web_server(redis_server, tmp_path_factory):
    """tests/web/conftest.py's server, with one registration a minute per client address: the
    server's own 429 is met at once, with a Retry-After past the page's 30 s."""
    prefix = f"web-limits-{uuid.uuid4().hex[:8]}"
    process, port = start_server(
        redis_server,
        prefix,
        tmp_path_factory.mktemp("gunicorn-web-limits"),
        HEARTS_PROJECTOR_IN_PROCESS="1",
        HEARTS_RATE_LIMIT_REGISTER="1/minute",
    )
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


def refuse(route: Route, seconds: int, problem: dict | None = None) -> None:
    """Answer as a server over its limit (``problem``), or a proxy (no problem body)."""
    if problem is None:
        route.fulfill(status=429, headers={"Retry-After": str(seconds)}, body="<h1>slow</h1>")
        return
    headers = {"Retry-After": str(seconds), "Content-Type": "application/problem+json"}
    route.fulfill(status=429, headers=headers, body=json.dumps(problem))


def retry_seconds(page: Page) -> int:
    """The seconds the problem box's countdown says are left."""
    return int(page.locator("#problem .retry").get_attribute("data-seconds") or "-1")


def test_a_refused_registration_says_so_and_when_to_try_again(
    browser: Browser, web_server: str
) -> None:
    # This address has used its one registration of the minute: the browser's is refused by
    # the server itself, Retry-After about 60 s (past the 30 s the page waits by itself).
    port = urlsplit(web_server).port
    status, _, _ = request(port, "POST", "/api/v1/players", {"name": f"Api{uuid.uuid4().hex[:6]}"})
    assert status == 201
    page = browser.new_page()
    errors = watch(page)
    answers: list[tuple[int, str | None]] = []
    page.on(
        "response",
        lambda r: (
            answers.append((r.status, r.headers.get("retry-after")))
            if r.url.endswith("/api/v1/players")
            else None
        ),
    )
    page.goto(f"{web_server}/#/")
    name = f"Reg{uuid.uuid4().hex[:6]}"
    page.locator('.account input[name="player"]').fill(name)
    page.get_by_role("button", name="Register").click()

    problem = page.locator("#problem")
    expect(problem).to_be_visible()
    expect(problem.locator(".title")).to_have_text("Too many requests")
    expect(problem).to_contain_text("the limit is 1 per 1 minute")
    expect(problem.locator(".retry")).to_be_visible()
    expect(problem.locator(".retry")).to_contain_text(re.compile(r"Try again in \d+ s \(at .+\)"))
    assert 30 < retry_seconds(page) <= 61
    # It counts down, and nothing (no poll, no redraw) hides it or the form as typed.
    first = retry_seconds(page)
    expect(problem.locator(".retry")).not_to_have_attribute("data-seconds", str(first))
    assert retry_seconds(page) < first
    expect(problem).to_be_visible()
    expect(page.locator('.account input[name="player"]')).to_have_value(name)
    expect(page.locator("#waiting")).to_be_hidden()
    # Sent once: a wait past 30 s is the reader's to choose, not the page's.
    assert [status for status, _ in answers] == [429]
    assert int(answers[0][1] or 0) > 30
    assert page.evaluate("localStorage.getItem('hearts.player')") is None
    assert [e for e in errors if "status of 429" not in e] == []
    # Dismissed, it goes with its countdown.
    problem.get_by_role("button", name="Dismiss").click()
    expect(problem).to_be_hidden()
    page.close()


def test_a_refused_create_says_so_and_when_as_text(browser: Browser, web_server: str) -> None:
    page = browser.new_page()
    errors = watch(page)
    refused: list[str] = []

    def too_many(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        refused.append(route.request.method)
        detail = f"retry in 120 s {HOSTILE}"  # the problem's text is data: shown, never parsed
        problem = {"type": "/problems/rate-limited", "code": "rate-limited", "status": 429}
        refuse(route, 120, {**problem, "title": "Too many requests", "detail": detail})

    page.route("**/api/v1/games", too_many)
    page.goto(f"{web_server}/#/")
    page.get_by_label("Your name").fill("ann")
    page.get_by_role("button", name="Create and sit down").click()
    problem = page.locator("#problem")
    expect(problem).to_be_visible()
    expect(problem.locator(".title")).to_have_text("Too many requests")
    expect(problem.locator(".detail")).to_have_text(f"retry in 120 s {HOSTILE}")
    expect(problem.locator(".retry")).to_contain_text(re.compile(r"Try again in 1[12]\d s"))
    expect(page.locator("#waiting")).to_be_hidden()
    assert refused == ["POST"]
    assert page.evaluate("window.__pwned") is None
    assert "#/game/" not in page.url
    assert [e for e in errors if "status of 429" not in e] == []
    page.close()


def test_a_proxys_429_without_a_problem_still_says_when(browser: Browser, web_server: str):
    # No problem+json (a proxy's page), and an HTTP-date: the retry time comes from the header.
    page = browser.new_page()
    page.goto(f"{web_server}/#/")
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 90))

    def proxy(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        route.fulfill(status=429, headers={"Retry-After": when}, body="<h1>slow down</h1>")

    page.route("**/api/v1/games", proxy)
    page.get_by_label("Your name").fill("bea")
    page.get_by_role("button", name="Create and sit down").click()
    problem = page.locator("#problem")
    expect(problem.locator(".title")).to_have_text("HTTP 429")
    expect(problem.locator(".retry")).to_contain_text("Try again in")
    assert 60 < retry_seconds(page) <= 91
    page.close()


def test_a_seek_being_followed_does_not_hide_a_refusal(browser: Browser, web_server: str):
    # A registered player waits on "Play now" (polled each second) and meanwhile creates a game,
    # refused for 60 s: the poll that follows the seek must not hide that problem.
    player = _call(
        web_server, "POST", "/players", {"name": f"Sk{uuid.uuid4().hex[:6]}"}, source="127.0.0.21"
    )
    page = browser.new_page()
    page.goto(f"{web_server}/#/")
    kept = {key: player[key] for key in ("id", "name", "key")}
    page.evaluate("(kept) => localStorage.setItem('hearts.player', kept)", json.dumps(kept))
    page.reload()
    page.locator(".seek input[name=fill]").fill("3600")  # nobody comes: it keeps waiting
    page.get_by_role("button", name="Play now").click()
    expect(page.locator(".seek-status")).to_contain_text("Waiting for players")

    page.route(
        "**/api/v1/games",
        lambda route: refuse(route, 60) if route.request.method == "POST" else route.continue_(),
    )
    page.get_by_role("button", name="Create and sit down").click()
    problem = page.locator("#problem")
    expect(problem.locator(".title")).to_have_text("HTTP 429")
    polls = []
    page.on("response", lambda r: polls.append(r.url) if "/api/v1/seeks/" in r.url else None)
    deadline = time.monotonic() + 15
    while len(polls) < 3:  # three polls of the seek went by
        assert time.monotonic() < deadline, "the seek was not polled"
        page.wait_for_timeout(200)
    expect(problem).to_be_visible()
    expect(problem.locator(".retry")).to_contain_text("Try again in")
    page.close()
