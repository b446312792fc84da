"""A game a silent player left (issue 32), in the browser against ``hearts serve``: a guest
who never moves in a game without a clock is taken to have left after HEARTS_ABANDON_AFTER,
and the table says so ("<name> left the game")."""

from __future__ import annotations

import time
import uuid
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, expect

from tests.replay.live import request, start_server, stop_server

RULES = {"pass_cycle": "hold_always"}  # no clock (the default), no pass: the guest must play


@pytest.fixture(scope="module")
def impatient_server(redis_server, tmp_path_factory):
    """hearts serve that ends a clockless game after two seconds of its player's silence."""
    process, port = start_server(
        redis_server,
        f"left-{uuid.uuid4().hex[:8]}",
        tmp_path_factory.mktemp("gunicorn-left"),
        HEARTS_ABANDON_AFTER="2",
    )
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


def call(base: str, method: str, path: str, body=None):
    return request(urlsplit(base).port, method, f"/api/v1{path}", body, {})


def test_the_table_says_who_left_the_game(browser: Browser, impatient_server: str):
    base = impatient_server
    status, _, game = call(
        base, "POST", "/games", {"rules": RULES, "seats": [None] + [{"bot": "random"}] * 3}
    )
    assert status == 201, game
    status, _, joined = call(base, "POST", f"/games/{game['id']}/seats", {"name": "zed"})
    assert status == 201, joined
    deadline = time.monotonic() + 30
    while True:  # the bots play up to the guest's turn; the guest never plays
        _, _, view = call(base, "GET", f"/games/{game['id']}")
        if view["phase"] == "finished":
            break
        assert time.monotonic() < deadline, view
        time.sleep(0.3)
    assert view["abandoned_by"] == joined["seat"]
    page = browser.new_page()
    page.goto(f"{base}/#/game/{game['id']}")
    expect(page.locator(".banner.over")).to_contain_text("zed")
    expect(page.locator(".banner.over")).to_contain_text("left the game")
    # The lobby says so too, not a plain "finished" (issue 44); and a copy imported from the
    # game's export is marked as one, naming its original, not a second identical row.
    status, _, export = call(base, "GET", f"/games/{game['id']}/export")
    assert status == 200
    status, _, copy = call(base, "POST", "/games/import", export)
    assert status == 201, copy
    page.goto(f"{base}/")
    original = page.locator(f'li.game[data-game="{game["id"]}"]')
    expect(original.locator(".phase")).to_have_text("abandoned")
    expect(original.locator(".phase")).to_have_attribute(
        "title", "zed left the game, which ended it"
    )
    expect(original.locator(".tag.imported")).to_have_count(0)
    imported = page.locator(f'li.game[data-game="{copy["id"]}"]')
    expect(imported.locator(".tag.imported")).to_have_text("imported")
    expect(imported.locator(".from")).to_have_text(f"copy of {game['id']}")
    page.close()
