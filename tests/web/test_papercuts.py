"""First-hour papercuts of the web pages (issue 44): the scoreboard's winner mark is an image of
the project's own (an emoji is a missing-glyph box without an emoji font), and the leaderboard's
empty states say in words what makes a player appear, instead of a docs path a web user cannot
open. The words' figures are the rating rules' own."""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Browser, expect

from projections import ratings
from tests.replay.live import request

BOARDS = Path(__file__).resolve().parents[2] / "service" / "web" / "static" / "boards.js"


def call(base: str, method: str, path: str, body=None):
    return request(urlsplit(base).port, method, f"/api/v1{path}", body, {})


def finished_game(base: str) -> str:
    status, _, game = call(
        base, "POST", "/games", {"rules": {"score_limit": 10}, "seats": [{"bot": "random"}] * 4}
    )
    assert status == 201, game
    deadline = time.monotonic() + 60
    while call(base, "GET", f"/games/{game['id']}")[2]["phase"] != "finished":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return game["id"]


def test_the_winner_mark_is_our_own_image(browser: Browser, web_server: str):
    game = finished_game(web_server)
    page = browser.new_page()
    page.goto(f"{web_server}/#/scoreboard/{game}")
    trophy = page.locator(".standings li img.trophy").first
    expect(trophy).to_have_attribute("alt", "winner")
    expect(trophy).to_have_attribute("src", "/web/trophy.svg")
    page.wait_for_function("() => document.querySelector('img.trophy').naturalWidth > 0")
    assert "\U0001f3c6" not in page.locator(".standings").inner_text()
    page.close()


def test_the_empty_leaderboard_says_in_words_what_lists_a_player(browser: Browser, web_server):
    page = browser.new_page()
    page.goto(f"{web_server}/#/leaderboard")
    page.get_by_label("Rank by").select_option("rating")
    empty = page.locator("#no-ratings")
    expect(empty).to_be_visible()
    text = empty.inner_text()
    assert "docs/" not in text and ".md" not in text
    assert f"after {ratings.PROVISIONAL_GAMES} rated games" in text
    assert f"at least {ratings.PROVISIONAL_OPPONENTS} different opponents" in text
    assert f"at least {ratings.MIN_RATED_SCORE_LIMIT} points" in text
    page.close()


def test_the_pages_figures_are_the_rating_rules():
    """The page cannot import Python: its copies of the rules' numbers are checked here."""
    source = BOARDS.read_text()
    for name in ("PROVISIONAL_GAMES", "PROVISIONAL_OPPONENTS", "MIN_RATED_SCORE_LIMIT"):
        found = re.search(rf"const {name} = (\d+);", source)
        assert found is not None and int(found.group(1)) == getattr(ratings, name), name
