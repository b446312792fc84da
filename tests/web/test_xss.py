"""Issue 22, item 1: no crafted link or player name runs script in the web table.

Chromium follows links that once ran an attacker's script (a game id that closes the scoreboard's
path with "%2F" and carries markup: the page decoded it, fetched a real scoreboard with it and
wrote it as HTML), and shows a game whose player is named with markup on every page that shows
names. Each time: the flag the payload would set stays unset, no dialog opens, no element the
payload would make exists, and the name is there as literal text. The Content-Security-Policy is
on every answer the page loads, and stops inline handlers even if markup got in."""

from __future__ import annotations

import functools
import json
import re
import secrets
from collections.abc import Iterator
from unittest import mock
from urllib.parse import urlsplit

import pytest
import redis
from playwright.sync_api import Browser, Page, expect

from domain.commands import CreateGame
from domain.names import NameRules
from service.api.factory import create_app
from service.settings import Settings
from tests.replay.live import request
from tests.web.conftest import SERVED

# No spaces: another helper's name rules may refuse spaces and control characters.
NAME = "<img/src=x/onerror=window.__pwned=1>"
FLAG_PAYLOAD = "<img src=x onerror=window.__pwned=1>"
DIALOG_PAYLOAD = "<img src=x onerror=alert(document.cookie)>"


def post(base: str, path: str, body: dict, key: str | None = None) -> dict:
    headers = {"Idempotency-Key": key or secrets.token_hex(32)}
    status, _, answer = request(urlsplit(base).port, "POST", f"/api/v1{path}", body, headers)
    assert status in (200, 201), answer
    return answer


@pytest.fixture(scope="module")
def game(web_server: str) -> dict:
    """A game in its first hand whose one person is named NAME (the others are bots).

    New games take names by the UTS #39 identifier profile (issue 32), which has no markup; a
    game created under the earlier rule (RFC 8266 nicknames) still shows its names, so the
    game is created as such a game was, in the server's own store, and the page must still
    show its markup as text."""
    redis_url, prefix = SERVED[web_server]
    old_rule = functools.partial(CreateGame, names=NameRules.NICKNAME)
    settings = Settings(key_prefix=prefix, bot_runner=False, rate_limits=False)
    writer = create_app(settings, redis=redis.Redis.from_url(redis_url)).test_client()
    seats = [None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}]
    with mock.patch("service.app.game_service.CreateGame", old_rule):
        created = writer.post("/api/v1/games", json={"seats": seats}).get_json()
    joined = writer.post(f"/api/v1/games/{created['id']}/seats", json={"name": NAME, "seat": 0})
    assert joined.status_code == 201, joined.get_json()
    answer = joined.get_json()
    return {"id": created["id"], "token": answer["token"], "seat": answer["seat"]}


class Watched:
    """A page with everything an attack would leave behind recorded: dialogs, requests and
    answers (with their headers) from the server."""

    def __init__(self, page: Page, base: str) -> None:
        self.page = page
        self.base = base
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.answers: list[tuple[str, dict[str, str]]] = []
        page.on("dialog", self._dialog)
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("response", self._response)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _response(self, response) -> None:
        if response.url.startswith(self.base):
            self.answers.append((response.url, response.headers))

    def assert_nothing_ran(self) -> None:
        page = self.page
        assert page.evaluate("window.__pwned") is None
        assert self.dialogs == []
        # The page itself makes no <img> but its card faces (an <img> of its own files inside
        # a card), and no element carries an inline handler.
        assert page.locator("#page img:not(.card > img), #page [onerror]").count() == 0
        faces = page.locator("#page .card > img").evaluate_all(
            "els => els.map(e => e.getAttribute('src'))"
        )
        assert all(re.fullmatch(r"/web/cards/[0-9A-Za-z-]+\.svg", src) for src in faces), faces
        for answer_url, headers in self.answers:
            policy = headers.get("content-security-policy", "")
            assert "default-src 'self'" in policy, answer_url
            assert "'unsafe-inline'" not in policy, answer_url


@pytest.fixture
def watched(browser: Browser, web_server: str) -> Iterator[Watched]:
    context = browser.new_context()
    try:
        yield Watched(context.new_page(), web_server)
    finally:
        context.close()


def crafted_links(game_id: str) -> list[str]:
    """Fragments an attacker may send; the browser percent-encodes the spaces and brackets."""
    links = []
    for payload in (FLAG_PAYLOAD, DIALOG_PAYLOAD):
        links += [
            f"#/scoreboard/{game_id}%2Fscoreboard%3Fx%3D{payload}",
            f"#/replay/{game_id}%2Fhands%2F1%3Fx%3D{payload}/1",
            f"#/replay/{game_id}/1{payload}",
            f"#/watch/{game_id}%2F..%2F..%2Fleaderboard%3Fx%3D{payload}",
            f"#/game/{game_id}%3Fx%3D{payload}",
            f"#/scoreboard/{payload}",
        ]
    return links


@pytest.mark.parametrize("index", range(12))
def test_a_crafted_link_is_refused_and_runs_nothing(watched: Watched, game: dict, index: int):
    link = crafted_links(game["id"])[index]
    page = watched.page
    page.goto(f"{watched.base}/{link}")
    expect(page.locator("#problem")).to_be_visible()
    expect(page.locator("#problem .title")).to_have_text("Not a valid link")
    expect(page.locator("#page")).to_contain_text("Back to the lobby")
    watched.assert_nothing_ran()
    # The id never reached a request: nothing asked the API with the payload in its path.
    api_calls = [url for url in watched.requests if "/api/" in url]
    assert api_calls == [], api_calls


def open_as_player(page: Page, game: dict) -> None:
    """The browser holds the seat's token, as after a join from the lobby."""
    seats = {game["id"]: {"seat": game["seat"], "token": game["token"], "name": NAME}}
    page.add_init_script(f"localStorage.setItem('hearts.seats', {json.dumps(json.dumps(seats))})")


@pytest.mark.parametrize(
    ("fragment", "shown"),
    [
        ("#/game/{id}", ".felt .seat.me"),
        ("#/watch/{id}", ".felt"),
        ("#/", '.game[data-game="{id}"]'),
        ("#/replay/{id}/1", "#replay .felt"),
        ("#/scoreboard/{id}", ".scoreboard .legend"),
    ],
)
def test_a_name_made_of_markup_is_shown_as_text(
    watched: Watched, game: dict, fragment: str, shown: str
):
    page = watched.page
    open_as_player(page, game)
    page.goto(f"{watched.base}/{fragment.format(id=game['id'])}")
    expect(page.locator(shown.format(id=game["id"])).first).to_contain_text(NAME, timeout=30_000)
    watched.assert_nothing_ran()
    if fragment == "#/":
        # The lobby's "Resume (name)" is the name kept in localStorage: text as well.
        expect(page.locator(f'.game[data-game="{game["id"]}"] .button.primary')).to_have_text(
            f"Resume ({NAME})"
        )


def test_the_policy_stops_inline_handlers_even_if_markup_got_in(watched: Watched):
    """Defence in depth: markup written straight into the page (as an XSS bug would) runs no
    inline handler, and the browser reports the policy it broke."""
    page = watched.page
    page.goto(f"{watched.base}/#/leaderboard")
    expect(page.locator("#board")).to_be_visible()
    violated = page.evaluate(
        """() => new Promise((resolve) => {
          document.addEventListener("securitypolicyviolation", (e) => resolve(e.violatedDirective));
          document.body.insertAdjacentHTML("beforeend",
            '<img src="data:," onerror="window.__pwned = 1"><div onclick="x()"></div>');
          const box = document.createElement("div");
          box.innerHTML = '<svg><script>window.__pwned = 2</' + 'script></svg>';
          document.body.append(box);
        })"""
    )
    assert violated.startswith("script-src")
    assert page.evaluate("window.__pwned") is None
    assert watched.dialogs == []
