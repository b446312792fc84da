"""The tournament page (#/tournament/ID): standings, each round's tables with their replays,
each board's traveller; names shown as text; no serious axe-core violation."""

from __future__ import annotations

import secrets
import time
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, expect

from tests.replay.live import request
from tests.web.console import watch

pytestmark = pytest.mark.unlimited("eight players register at once for one tournament")

SERIOUS = ("serious", "critical")
WCAG = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}
}
NAME = "<b>Cup</b> & co"


def _call(base: str, method: str, path: str, body=None, token: str | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    status, _, answer = request(urlsplit(base).port, method, f"/api/v1{path}", body, headers)
    assert status < 300, (status, answer)
    return answer


@pytest.fixture(scope="module")
def tournament(web_server: str) -> str:
    keys = [
        _call(web_server, "POST", "/players", {"name": f"W{secrets.token_hex(4)}"})["key"]
        for _ in range(8)
    ]
    body = {"name": NAME, "rounds": 1, "boards": 2, "min_players": 8, "max_players": 8}
    tid = _call(web_server, "POST", "/tournaments", body, keys[0])["id"]
    for key in keys:
        _call(web_server, "POST", f"/tournaments/{tid}/entries", {"stand_in": "random"}, key)
    _call(web_server, "POST", f"/tournaments/{tid}/start", {}, keys[0])
    deadline = time.monotonic() + 120
    while _call(web_server, "GET", f"/tournaments/{tid}")["status"] != "finished":
        assert time.monotonic() < deadline, "the tournament did not finish"
        time.sleep(0.2)
    return tid


def test_the_tournament_page_shows_standings_tables_and_travellers(
    browser: Browser, web_server: str, tournament: str
) -> None:
    page = browser.new_page()
    errors = watch(page)
    page.goto(f"{web_server}/#/tournament/{tournament}")
    expect(page.locator(".standings-table tbody tr")).to_have_count(8)
    expect(page.locator(".tournament h1")).to_contain_text(NAME)  # text, not markup
    assert page.locator(".tournament h1 b").count() == 0
    expect(page.locator(".table-of-round a[href^='#/replay/g']")).to_have_count(2)
    page.get_by_role("button", name="Board 2").click()
    expect(page.locator("#traveller-1 tbody tr")).to_have_count(8)
    found = Axe().run(page, options=WCAG).response["violations"]
    assert [v["id"] for v in found if v["impact"] in SERIOUS] == []
    page.locator(".table-of-round a[href^='#/replay/g']").first.click()
    expect(page.locator("#replay")).to_be_visible()
    assert errors == []


def test_a_link_to_no_tournament_is_refused_before_any_request(
    browser: Browser, web_server: str
) -> None:
    page = browser.new_page()
    page.goto(f"{web_server}/#/tournament/%3Cimg%3E")
    expect(page.locator("#problem")).to_contain_text("tournament id")


@pytest.fixture(scope="module")
def arena(web_server: str):
    keys = [
        _call(web_server, "POST", "/players", {"name": f"A{secrets.token_hex(4)}"})["key"]
        for _ in range(4)
    ]
    body = {"name": NAME, "format": "arena", "duration_seconds": 120, "min_players": 4}
    tid = _call(web_server, "POST", "/tournaments", body, keys[0])["id"]
    for key in keys:
        _call(web_server, "POST", f"/tournaments/{tid}/entries", {"stand_in": "random"}, key)
    _call(web_server, "POST", f"/tournaments/{tid}/start", {}, keys[0])
    deadline = time.monotonic() + 120
    while _call(web_server, "GET", f"/tournaments/{tid}/standings")["games_counted"] < 2:
        assert time.monotonic() < deadline, "the arena's bots did not finish two games"
        time.sleep(0.2)
    yield tid
    _call(web_server, "POST", f"/tournaments/{tid}/cancel", {}, keys[0])  # no more pairing


def test_the_arena_page_shows_its_standings_and_games(
    browser: Browser, web_server: str, arena: str
) -> None:
    page = browser.new_page()
    errors = watch(page)
    page.goto(f"{web_server}/#/tournament/{arena}")
    expect(page.locator(".arena .standings-table tbody tr")).to_have_count(4)
    expect(page.locator(".arena h1")).to_contain_text(NAME)  # text, not markup
    assert page.locator(".arena h1 b").count() == 0
    expect(page.locator(".arena-game a[href^='#/replay/g']").first).to_be_visible()
    found = Axe().run(page, options=WCAG).response["violations"]
    assert [v["id"] for v in found if v["impact"] in SERIOUS] == []
    assert errors == []


def test_the_lobby_links_to_an_upcoming_tournament_by_its_name_as_text(
    browser: Browser, web_server: str
) -> None:
    key = _call(web_server, "POST", "/players", {"name": f"L{secrets.token_hex(4)}"})["key"]
    body = {"name": NAME, "rounds": 1, "boards": 1, "min_players": 4, "max_players": 8}
    tid = _call(web_server, "POST", "/tournaments", body, key)["id"]
    page = browser.new_page()
    errors = watch(page)
    page.goto(f"{web_server}/")
    link = page.locator(f"#tournaments a[href='#/tournament/{tid}']")
    expect(link).to_have_text(NAME)  # text, not markup
    assert page.locator("#tournaments a b").count() == 0
    link.click()
    expect(page.locator(".tournament h1")).to_contain_text(NAME)
    assert not errors, errors
    page.close()
