"""Issue 34: axe-core (the engine behind Lighthouse's accessibility audit) finds no serious or
critical violation of WCAG 2.2 A/AA on the web table's pages: the lobby, a table in play,
watching it, a replay, the scoreboard, the leaderboard.

axe-core's script comes from the PyPI package axe-playwright-python (the test extra), which
ships axe.min.js (MPL-2.0): CI installs the test extra already, so no npm step and no vendored
copy to keep current; it is injected into each page by Playwright (an evaluate, which the
page's Content-Security-Policy does not govern)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.web.test_analysis import finished_hand
from tests.web.test_table import create_game

SERIOUS = ("serious", "critical")
WCAG = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}
}


def violations(page: Page) -> list[str]:
    found = Axe().run(page, options=WCAG).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(node["target"][0] if node["target"] else "?" for node in v["nodes"][:5])
        for v in found
        if v["impact"] in SERIOUS
    ]


@pytest.fixture(scope="module")
def finished_game(web_server: str) -> str:
    return finished_hand(urlsplit(web_server).port)


@pytest.mark.parametrize(
    "where", ["lobby", "table", "watch", "replay", "scoreboard", "leaderboard"]
)
def test_no_serious_violation(browser: Browser, web_server: str, finished_game: str, where):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    if where == "lobby":
        page.goto(web_server + "/")
        expect(page.locator("#games .game").first).to_be_visible()
    elif where == "table":
        create_game(page, web_server)
    elif where == "watch":
        page.goto(f"{web_server}/#/watch/{finished_game}")
        expect(page.locator("#table .felt")).to_be_visible()
    elif where == "replay":
        page.goto(f"{web_server}/#/replay/{finished_game}/1")
        expect(page.locator("#replay .audit h2")).to_be_visible(timeout=30_000)
    elif where == "scoreboard":
        page.goto(f"{web_server}/#/scoreboard/{finished_game}")
        expect(page.locator(".standings li").first).to_be_visible(timeout=30_000)
    else:
        page.goto(f"{web_server}/#/leaderboard")
        expect(page.locator("#board table, #board p").first).to_be_visible()
    assert violations(page) == []
    page.close()
