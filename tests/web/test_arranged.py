"""A game whose deal its creator chose (``arranged``: a seed or explicit deals) is marked in the
lobby's list and on the table's header, and only such a game: the answers of the API are
patched in the browser to say ``arranged: true`` for one game, the other is left as served."""

from __future__ import annotations

import re
import secrets
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Route, expect

from tests.replay.live import request


def create(base: str) -> str:
    seats = [None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}]
    headers = {"Idempotency-Key": secrets.token_hex(32)}
    port = urlsplit(base).port
    status, _, body = request(port, "POST", "/api/v1/games", {"seats": seats}, headers)
    assert status == 201, body
    return body["id"]


def test_an_arranged_game_has_a_badge_and_the_others_none(browser: Browser, web_server: str):
    arranged, plain = create(web_server), create(web_server)

    def mark(game: dict) -> dict:
        return {**game, "arranged": game["id"] == arranged or game.get("arranged") is True}

    def games_page(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        route.fulfill(response=response, json={**body, "games": [mark(g) for g in body["games"]]})

    def view(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, json=mark(response.json()))

    context = browser.new_context()
    try:
        context.route(re.compile(r"/api/v1/games\?"), games_page)
        context.route(re.compile(r"/api/v1/games/g[0-9a-f]{20}$"), view)
        page = context.new_page()
        page.goto(f"{web_server}/#/")
        expect(page.locator(f'.game[data-game="{arranged}"] .tag.arranged')).to_have_text(
            "arranged"
        )
        expect(page.locator(f'.game[data-game="{plain}"]')).to_be_visible()
        expect(page.locator(f'.game[data-game="{plain}"] .tag.arranged')).to_have_count(0)

        page.goto(f"{web_server}/#/watch/{arranged}")
        expect(page.locator("#table .status .tag.arranged")).to_have_text("arranged")
        page.goto(f"{web_server}/#/watch/{plain}")
        expect(page.locator("#table .felt .seat")).to_have_count(4)
        expect(page.locator("#table .status .tag.arranged")).to_have_count(0)
    finally:
        # A view the watch page is still fetching would otherwise be fulfilled after the close,
        # and its error surface in whichever test runs next.
        context.unroute_all(behavior="ignoreErrors")
        context.close()
