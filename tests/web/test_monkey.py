"""Issue 34: a monkey test. On each page (the lobby, watching a game, a replay, a scoreboard,
the leaderboard) Playwright clicks its interactive elements in a random order drawn from a fixed
seed, coming back to the page whenever a click leaves it; no click may raise an error or log
one to the console, and the page's main control still works afterwards (the replay's step
buttons once went dead after a click elsewhere in the replay)."""

from __future__ import annotations

import random
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.web.console import watch
from tests.web.test_analysis import finished_hand

SEED = 34
CLICKS = 40
# What may be clicked: the page's own controls (links inside the app only, by their hash).
INTERACTIVE = (
    "#page a[href^='#'], #page button:not([disabled]), #page select, #page input, "
    "#page [tabindex]:not([tabindex='-1']), header a[href^='#']"
)


@pytest.fixture(scope="module")
def finished_game(web_server: str) -> str:
    return finished_hand(urlsplit(web_server).port)


def monkey(page: Page, url: str, rng: random.Random) -> int:
    """Click CLICKS random controls of the page at ``url`` (back to it when a click leaves it);
    how many were clicked."""
    clicked = 0
    for _ in range(CLICKS):
        if page.url != url:
            page.goto(url)
            page.wait_for_load_state()
        controls = [c for c in page.locator(INTERACTIVE).all() if c.is_visible()]
        if not controls:
            continue
        control = rng.choice(controls)
        try:
            control.click(timeout=2000)
            clicked += 1
        except Exception:  # covered or re-rendered meanwhile: a click the page never got
            continue
    return clicked


def still_works(page: Page, where: str) -> None:
    """The page's main control does its job after the monkey."""
    if where == "replay":
        replay = page.locator("#replay")
        page.get_by_role("button", name="First").click()
        expect(replay).to_have_attribute("data-step", "0")
        page.get_by_role("button", name="Forward").click()
        expect(replay).to_have_attribute("data-step", "1")
    elif where == "lobby":
        page.get_by_role("button", name="Refresh").click()
        expect(page.locator("#games .game").first).to_be_visible()
    elif where == "leaderboard":
        page.get_by_label("Rank by").select_option("wins")
        expect(page.locator("#board table")).to_be_visible()
    elif where == "scoreboard":
        expect(page.locator(".standings li")).to_have_count(4)
    else:
        expect(page.locator("#table .felt")).to_be_visible()


@pytest.mark.parametrize("where", ["lobby", "watch", "replay", "scoreboard", "leaderboard"])
def test_random_clicks_break_nothing(browser: Browser, web_server: str, finished_game, where):
    paths = {
        "lobby": "/#/",
        "watch": f"/#/watch/{finished_game}",
        "replay": f"/#/replay/{finished_game}/1",
        "scoreboard": f"/#/scoreboard/{finished_game}",
        "leaderboard": "/#/leaderboard",
    }
    url = web_server + paths[where]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = watch(page)
    page.on("dialog", lambda dialog: dialog.dismiss())
    page.goto(url)
    page.wait_for_load_state()
    assert monkey(page, url, random.Random(f"{SEED}-{where}")) > 0
    assert errors == []
    # Watching, "Audit" shows its report in place of the felt (a state of the page, not a
    # broken one), so the watch page is opened again before its felt is looked for.
    if page.url != url or where == "watch":
        page.goto(url)
    still_works(page, where)
    assert errors == []
    page.close()
