"""Issue 44: four friends see their standings on a board of their group, reached from the
leaderboard; axe finds no serious or critical violation."""

from __future__ import annotations

import time

from playwright.sync_api import Browser, expect

from tests.api.helpers import first_legal_move
from tests.web.test_pages import violations
from tests.web.test_ratings import _call


def _play_among(base: str, names: list[str]) -> str:
    sources = [f"127.0.0.{31 + i}" for i in range(len(names))]
    game = _call(base, "POST", "/games", {"rules": {"score_limit": 20}}, source=sources[0])["id"]
    tokens, where = {}, {}
    for name, source in zip(names, sources, strict=True):
        joined = _call(base, "POST", f"/games/{game}/seats", {"name": name}, source=source)
        tokens[joined["seat"]] = joined["token"]
        where[joined["seat"]] = source
    for _ in range(3000):
        public = _call(base, "GET", f"/games/{game}")
        if public["phase"] == "finished":
            return game
        for seat in public["awaiting"]:
            view = _call(base, "GET", f"/games/{game}", token=tokens[seat], source=where[seat])
            path, body = first_legal_move(view)
            _call(base, "POST", f"/games/{game}/{path}", body, tokens[seat], where[seat])
    raise AssertionError("the game did not finish")


def test_friends_see_their_standings_from_the_leaderboard(browser: Browser, web_server: str):
    suffix = str(time.time_ns())[-6:]
    names = [f"Jo{suffix}", f"Kim{suffix}", f"Lee{suffix}", f"Mo{suffix}"]
    _play_among(web_server, names)
    query = ",".join(names)
    deadline = time.monotonic() + 30  # the in-process projector trails the log
    while _call(web_server, "GET", f"/standings?players={query.replace(',', '%2C')}")["games"] < 1:
        assert time.monotonic() < deadline, "the projector did not count the game"
        time.sleep(0.1)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{web_server}/#/leaderboard")
        page.locator("#group-link").click()
        page.locator("#group-names").fill(query)
        page.get_by_role("button", name="Show").click()
        table = page.locator("#group-table")
        expect(table).to_be_visible()
        expect(page.locator("#standings")).to_contain_text("1 game(s) among them")
        expect(table.locator("tbody tr")).to_have_count(4)
        for name in names:
            expect(table).to_contain_text(name)
        assert violations(page) == []
    finally:
        context.close()
