"""Issue 34: every page and state of the web table, in one browser against one server.

The states: the lobby, the lobby with a registered player's account panel, a table waiting for
your pass, a table on your turn to play, watching a game, a replay, a replay with its analysis,
a scoreboard, the leaderboard, a player's page. On each:

- axe-core (the engine behind Lighthouse's accessibility audit) finds no serious or critical
  violation of WCAG 2.2 A/AA. Its script comes from the PyPI package axe-playwright-python (the
  test extra: no npm step, no vendored copy) and is injected into the page by Playwright (an
  evaluate, which the page's Content-Security-Policy does not govern).
- a monkey clicks its controls in a random order drawn from a fixed seed (each kind of control
  first, then any), coming back to the state's page whenever a click leaves it: no click may
  raise an error or log one, and the state's main control does its job afterwards (the replay's
  step buttons once went dead after a click elsewhere in the replay).

And a whole hand played with the keyboard alone (Tab, arrows, Enter, Space: no click, no script
that acts), its cards named as they are spoken and its plays said in the live region; and the
replay's step keys, pressed while it loads, applied in order."""

from __future__ import annotations

import json
import random
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.replay.live import request
from tests.web.console import RECORD_SAID, watch
from tests.web.test_analysis import finished_hand

STATES = [
    "lobby",
    "account",
    "pass",
    "play",
    "watch",
    "replay",
    "scoreboard",
    "leaderboard",
    "player",
    "analysis",  # last: its analysis runs in the server meanwhile
]

SERIOUS = ("serious", "critical")
WCAG = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}
}

SEED = 34
# Clicks per state: at least MIN_CLICKS, and on until each kind of control the page showed first
# was clicked, at most MAX_CLICKS.
MIN_CLICKS = 12
MAX_CLICKS = 40
# What may be clicked: the page's own controls (links inside the app only, by their hash).
INTERACTIVE = (
    "#page a[href^='#'], #page button:not([disabled]), #page select, #page input, "
    "#page [tabindex]:not([tabindex='-1']), header a[href^='#']"
)
# Each control, in one round trip: visible (Playwright's own test: a box, not hidden) and its
# kind (a card, a step button, a link to a game's page...), so that each kind is clicked once.
CONTROLS = """els => els.map(e => {
  const visible = e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const href = (e.getAttribute("href") || "")
    .replace(/[gp][0-9a-f]{20}/g, "ID").replace(/\\/\\d+$/, "/N");
  const data = Object.keys(e.dataset).sort().join(",");
  // Named apart: the step buttons (by their labels), a link or button without data by its
  // text; the others by their data and link alone (a card, a marked move, a game's Watch).
  const label = e.getAttribute("aria-label") || (data || href ? "" : e.textContent || "");
  const name = e.dataset.card ? "card" : label.trim().slice(0, 20);
  return [visible, [e.tagName, e.id, e.type || "", data, href, href ? "" : name].join("|")];
})"""

CARD_NAME = re.compile(r"(?:[2-9]|10|jack|queen|king|ace) of (?:clubs|diamonds|spades|hearts)")


@dataclass(frozen=True)
class Scene:
    base: str
    finished: str  # a game of four bots, its first hand over (its analysis asked for)
    player: dict  # a registered player (id, name, key), sitting in a game in play
    playing: str  # that game in play


def _call(base: str, method: str, path: str, body=None, token: str | None = None):
    headers = {"Idempotency-Key": secrets.token_hex(32)} if method == "POST" else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    status, _, answer = request(urlsplit(base).port, method, f"/api/v1{path}", body, headers)
    assert status < 300, (status, answer)
    return answer


@pytest.fixture(scope="module")
def scene(web_server: str) -> Scene:
    finished = finished_hand(urlsplit(web_server).port)
    # The analysis runs in the server while the other states are looked at.
    _call(web_server, "POST", f"/games/{finished}/hands/1/analysis", {})
    # A registered player (no rated game: one takes four players a whole game to 50 points,
    # too long here; test_ratings.py plots one) in a game in play: "Resume here".
    player = _call(web_server, "POST", "/players", {"name": f"Ada{str(time.time_ns())[-6:]}"})
    bots = [None] + [{"bot": "random"}] * 3
    waiting = _call(web_server, "POST", "/games", {"seats": bots})
    _call(web_server, "POST", f"/games/{waiting['id']}/seats", {}, player["key"])
    return Scene(web_server, finished, player, waiting["id"])


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A context of its own per test: its own seats and player in localStorage."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context
    context.close()


def sit_down(page: Page, base: str, name: str) -> None:
    """Create a game with three bots in the lobby and sit down: the table, your pass to make."""
    page.goto(base + "/")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Create and sit down").click()
    expect(page.locator(".hand .card")).to_have_count(13)


def seated_by_api(context: BrowserContext, base: str, name: str, *, passed: bool) -> str:
    """A game with three random bots, seated as ``name`` (and the pass made) through the API,
    the seat kept in the context's localStorage as a join leaves it: the table's URL. For the
    tests whose subject is the table, not the lobby's form or the pass."""
    seats = [None] + [{"bot": "random"}] * 3
    game = _call(base, "POST", "/games", {"seats": seats})["id"]
    joined = _call(base, "POST", f"/games/{game}/seats", {"name": name})
    if passed:
        view = _call(base, "GET", f"/games/{game}", token=joined["token"])
        cards = view["legal_cards"][: view["cards_to_pass"]]
        _call(base, "POST", f"/games/{game}/pass", {"cards": cards}, joined["token"])
    kept = {game: {"seat": joined["seat"], "token": joined["token"], "name": name}}
    context.add_init_script(f"localStorage.setItem('hearts.seats', {json.dumps(json.dumps(kept))})")
    return f"{base}/#/game/{game}"


def pass_cards(page: Page) -> None:
    """Choose the cards still to choose and pass them."""
    expect(page.locator("#pass")).to_be_visible()
    while page.locator(".hand .card.selected").count() < 3:
        page.locator(".hand .card:not(.selected)").first.click()
    page.locator("#pass").click()
    expect(page.locator(".hand .card.received")).to_have_count(3)


def your_turn(page: Page) -> None:
    page.locator(".hand .card.legal:not(:disabled)").first.wait_for(timeout=60_000)
    expect(page.locator(".status")).to_contain_text("your turn")


# What shows that a state's page has loaded.
READY = {
    "lobby": "#games .game",
    "account": ".account .my-games .game",
    "pass": ".hand .card, #table[data-phase='finished']",
    "play": ".hand .card, #table[data-phase='finished']",
    "watch": "#table .felt",
    "replay": "#replay .audit h2",
    "analysis": ".analysis .accuracies li",
    "scoreboard": ".standings li",
    "leaderboard": "#board table, #board p",
    "player": ".player h1",
}
# How long each may take, bounded: the replay's audit recomputes the game's chain (a long-work
# job on a busy machine: it once took over 30 s), the analysis runs bots' searches.
READY_MS = {"replay": 120_000, "analysis": 180_000}


def wait_ready(page: Page, where: str) -> None:
    """Wait until the state shows (within its bound); if not, fail saying what the page said."""
    try:
        page.locator(READY[where]).first.wait_for(timeout=READY_MS.get(where, 30_000))
    except PlaywrightTimeout:
        shown = page.locator("#problem:not([hidden])")
        said = shown.inner_text() if shown.count() else "no problem shown"
        pytest.fail(f"{where} not ready at {page.url}: {said}", pytrace=False)


def seek_without_bots(route: Route) -> None:
    if route.request.method != "POST":
        route.continue_()
        return
    body = route.request.post_data_json or {}
    route.continue_(post_data=json.dumps({**body, "fill_with_bots_after": 3600}))


def open_state(context: BrowserContext, page: Page, scene: Scene, where: str) -> str:
    """Bring the page to the state; the URL that shows it again."""
    base = scene.base
    if where in ("pass", "play"):
        sit_down(page, base, f"{where}-er")
        if where == "pass":
            page.locator(".hand .card").first.click()  # one chosen, the others not
            expect(page.locator(".hand .card[aria-pressed='true']")).to_have_count(1)
        else:
            pass_cards(page)
            your_turn(page)
        return page.url
    if where == "account":
        player = {k: scene.player[k] for k in ("id", "name", "key")}
        # The key kept in this browser, as registering leaves it (account.js).
        context.add_init_script(
            f"localStorage.setItem('hearts.player', {json.dumps(json.dumps(player))})"
        )
        # The monkey presses "Play now": a seek that bots would fill after the form's 30 s, and
        # the page would then go to its table whenever that fell (once in the check after the
        # monkey, on a busy machine). Here nobody fills it: still_works calls it off.
        page.route("**/api/v1/seeks", seek_without_bots)
        page.goto(base + "/#/")
        expect(page.locator(".account")).to_contain_text(f"Playing as {player['name']}")
        expect(page.locator(".my-games .game")).to_have_count(1)
        return page.url
    paths = {
        "lobby": "/#/",
        "watch": f"/#/watch/{scene.finished}",
        "replay": f"/#/replay/{scene.finished}/1",
        "analysis": f"/#/replay/{scene.finished}/1",
        "scoreboard": f"/#/scoreboard/{scene.finished}",
        "leaderboard": "/#/leaderboard",
        "player": f"/#/player/{scene.player['id']}",
    }
    page.goto(base + paths[where])
    # The analysis: asked for by the scene, it may still be running; the audit too.
    wait_ready(page, where)
    return page.url


def violations(page: Page) -> list[str]:
    found = Axe().run(page, options=WCAG).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(node["target"][0] if node["target"] else "?" for node in v["nodes"][:5])
        for v in found
        if v["impact"] in SERIOUS
    ]


def back_to(page: Page, url: str, ready: str) -> None:
    """Show the state again if a click left it: another page (a link), or another state of the
    page ("Forget my key", the watch page's "Audit" report in place of the felt). A reload when
    the page does not come back: an answer to an earlier click may move it on meanwhile
    ("Resume here" goes to its table once its seat is given)."""
    if page.url != url:
        page.goto(url)
    elif page.locator(ready).count():
        return
    else:
        page.reload()
    if not shows_unless_it_leaves(page, url, ready, seconds=5):
        page.goto(url)
        page.reload()
        page.locator(ready).first.wait_for(timeout=max(READY_MS.values()))


def shows_unless_it_leaves(page: Page, url: str, ready: str, seconds: float) -> bool:
    """Wait until ``ready`` shows (True), or False once the page left ``url`` (a late answer
    took it to a table: it will not show there, so waiting out the bound is time lost) or the
    bound passed. In slices: a predicate polled in the page is eval'd script, which the page's
    Content-Security-Policy refuses."""
    shown = page.locator(ready).first
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            shown.wait_for(timeout=250)
            return True
        except PlaywrightTimeout:
            if page.url != url:
                return False
    return False


def monkey(page: Page, url: str, ready: str, rng: random.Random) -> tuple[set[str], set[str]]:
    """Click controls of the page at ``url`` (back to it when a click leaves it, once ``ready``
    shows), each kind not clicked yet first; the kinds the page showed first, and those clicked."""
    clicked: set[str] = set()
    first: set[str] = set()
    for count in range(MAX_CLICKS):
        if count >= MIN_CLICKS and first <= clicked:
            break
        back_to(page, url, ready)
        controls = page.locator(INTERACTIVE)
        found = controls.evaluate_all(CONTROLS)
        shown = [(index, kind) for index, (visible, kind) in enumerate(found) if visible]
        if not shown:
            continue
        first = first or {kind for _, kind in shown}
        fresh = [item for item in shown if item[1] not in clicked]
        index, kind = rng.choice(fresh or shown)
        try:
            controls.nth(index).click(timeout=1000)
        except Exception:  # covered, disabled or redrawn meanwhile: a click the page never got
            continue
        clicked.add(kind)
    return first, clicked


def refresh_games(page: Page) -> None:
    cancel = page.get_by_role("button", name="Cancel seek")
    if cancel.is_visible():  # the monkey's "Play now" still waits: call it off
        cancel.click(timeout=10_000)
        expect(page.locator(".seek-status")).to_have_text("Your seek cancelled.")
    page.get_by_role("button", name="Refresh").click(timeout=10_000)
    expect(page.locator("#games .game").first).to_be_visible()


def resume(page: Page, game: str, url: str) -> None:
    """ "Resume here" takes the page to its game's table, the hand shown. A late answer to the
    monkey's own "Resume here" may take it there first (the button then leaves the page under
    this click): the table reached either way is the check. A late answer to another of its
    clicks ("Create and sit down") may take it to another table: then back, and again."""
    row = page.locator(f".my-games .game[data-game='{game}']")
    table = f"#/game/{game}"
    for _ in range(3):
        if page.url.endswith(table):
            break
        if page.url != url:
            back_to(page, url, READY["account"])
        try:
            row.get_by_role("button", name="Resume here").click(timeout=10_000)
            break
        except PlaywrightTimeout:
            continue
    # A resume's answer and the table's first view, on a loaded machine: the ready bound.
    expect(page).to_have_url(re.compile(re.escape(table) + "$"), timeout=30_000)
    expect(page.locator(".hand .card").first).to_be_visible(timeout=30_000)


def still_works(page: Page, scene: Scene, where: str, url: str) -> None:
    """The state's main control does its job after the monkey."""
    if where in ("replay", "analysis"):
        replay = page.locator("#replay")
        page.get_by_role("button", name="First").click()
        expect(replay).to_have_attribute("data-step", "0")
        page.get_by_role("button", name="Forward").click()
        expect(replay).to_have_attribute("data-step", "1")
        if where == "analysis":  # a marked move's button takes the replay to it
            mark = page.locator(".analysis .marks li.marked button").first
            mark.click()
            expect(replay).to_have_attribute("data-step", mark.get_attribute("data-goto"))
    elif where in ("lobby", "account"):
        # An answer to one of the monkey's last clicks ("Resume here") may still take the page
        # to a table after it came back: then back again, and the check once more.
        for _ in range(3):
            try:
                refresh_games(page)
                break
            except (PlaywrightTimeout, AssertionError):
                if page.url == url:
                    raise
                back_to(page, url, READY[where])
        else:
            pytest.fail(f"the page kept leaving {url}")
        if where == "account":
            resume(page, scene.playing, url)
    elif where == "leaderboard":
        page.get_by_label("Rank by").select_option("wins")
        expect(page.locator("#board table")).to_be_visible()
    elif where == "scoreboard":
        expect(page.locator(".standings li")).to_have_count(4)
    elif where == "player":
        expect(page.locator(".player h1")).to_contain_text(scene.player["name"])
        page.get_by_role("link", name="Leaderboard").click()
        expect(page.locator("#board table, #board p").first).to_be_visible()
    elif where in ("pass", "play"):
        # Whatever the monkey left (a pass half chosen, a card to play): the hand still plays.
        page.locator("#pass:visible, .status:has-text('your turn')").first.wait_for(timeout=60_000)
        if page.locator("#pass").count():
            pass_cards(page)
            your_turn(page)
        up_to_date(page, scene.base, url)
        held = page.locator(".hand .card").count()
        page.locator(".hand .card.legal:not(:disabled)").first.click()
        expect(page.locator(".hand .card")).not_to_have_count(held)
    else:
        expect(page.locator("#table .felt")).to_be_visible()


def up_to_date(page: Page, base: str, url: str, seconds: float = 60) -> None:
    """Wait until the table shows the game as the server has it, on its turn. A card the
    monkey played just before the page was opened again may be answered after the new page
    loaded its view: that view says "your turn" for a moment after the server moved on, and a
    card clicked then is refused (409, a console error), rightly."""
    game_id = url.rsplit("/", 1)[-1]
    table = page.locator("#table")
    deadline = time.monotonic() + seconds
    agreed = 0
    while time.monotonic() < deadline:
        version = page.request.get(f"{base}/api/v1/games/{game_id}").json()["version"]
        if (
            table.get_attribute("data-version") == str(version)
            and page.locator(".hand .card.legal:not(:disabled)").count()
        ):
            agreed += 1
            if agreed == 2:  # twice, a moment apart: no command of the last page on its way
                return
        else:
            agreed = 0
        time.sleep(0.25)
    pytest.fail(f"the table never showed the server's version of {game_id} on its turn")


@pytest.mark.parametrize("where", STATES)
def test_no_serious_violation_and_random_clicks_break_nothing(
    context: BrowserContext, scene: Scene, where: str
):
    # One load of the state for both checks: axe only reads the page, so the monkey starts
    # from the page as freshly opened as it did when each check loaded its own (half the
    # sit-downs, passes and page loads).
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.dismiss())
    url = open_state(context, page, scene, where)
    assert violations(page) == [], f"axe-core on {where}"
    errors = watch(page)
    first, clicked = monkey(page, url, READY[where], random.Random(f"{SEED}-{where}"))
    assert first and first <= clicked, f"never clicked: {sorted(first - clicked)}"
    assert errors == []
    back_to(page, url, READY[where])
    still_works(page, scene, where, url)
    assert errors == []


def focused(page: Page):
    return page.locator(":focus")


def test_a_whole_hand_is_played_with_the_keyboard_alone(context: BrowserContext, scene: Scene):
    seats = [None] + [{"bot": "random"}] * 3
    game = _call(scene.base, "POST", "/games", {"rules": {"score_limit": 1}, "seats": seats})
    context.add_init_script(RECORD_SAID)
    page = context.new_page()
    errors = watch(page)
    page.goto(f"{scene.base}/#/game/{game['id']}")
    keys = page.keyboard

    # Tab to the table's join form, type a name, Enter: seated, the pass to choose. Once it is
    # drawn: Tabs pressed before it (a loaded machine) would all pass it by.
    expect(page.locator(".join input")).to_be_visible()
    for _ in range(30):
        if page.locator(".join input:focus").count():
            break
        keys.press("Tab")
    expect(page.locator(".join input")).to_be_focused()
    keys.type("kay")
    keys.press("Enter")
    hand = page.locator(".hand")
    expect(hand.locator(".card")).to_have_count(13)
    expect(hand).to_have_attribute("role", "toolbar")

    # Every card is a button named as it is spoken; the hand is one Tab stop (roving tabindex).
    # The hand may be re-rendered as the seat's view arrives (a busy machine): read it once settled.
    deadline = time.monotonic() + 15
    while True:
        snapshot = hand.aria_snapshot()
        names = re.findall(r'button "([^"]+)"', snapshot)
        if len(names) == 13 or time.monotonic() > deadline:
            break
        page.wait_for_timeout(100)
    assert len(names) == 13 and all(CARD_NAME.fullmatch(name) for name in names), snapshot
    for name in names:
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(1)
    expect(hand.locator(".card[tabindex='0']")).to_have_count(1)
    expect(hand.locator(".card[tabindex='0']")).to_be_focused()

    # Three cards chosen (Space, Enter, Space), each said pressed; Shift+Tab to Pass, Enter.
    chosen = []
    for index, key in enumerate(("Space", "Enter", "Space")):
        if index:
            keys.press("ArrowRight")
        chosen.append(focused(page).get_attribute("data-card"))
        name = focused(page).get_attribute("aria-label")
        keys.press(key)
        expect(page.get_by_role("button", name=name, exact=True, pressed=True)).to_have_count(1)
    expect(hand.locator(".card[aria-pressed='true']")).to_have_count(3)
    keys.press("Shift+Tab")
    expect(page.locator("#pass")).to_be_focused()
    keys.press("Enter")
    expect(hand.locator(".card.received")).to_have_count(3)
    for card in chosen:
        expect(hand.locator(f".card[data-card='{card}']")).to_have_count(0)

    # Every card of the hand, by arrows and Enter or Space, against the bots.
    rng = random.Random(SEED)
    played: list[str] = []
    while True:
        page.locator("#table[data-phase='finished'], .hand .card.legal:focus").first.wait_for(
            timeout=60_000
        )
        if page.locator("#table").get_attribute("data-phase") == "finished":
            break
        legal = hand.locator(".card.legal").count()
        for _ in range(rng.randrange(legal)):
            keys.press("ArrowRight")
        card = focused(page)
        expect(card).to_have_class(re.compile(r"\blegal\b"))
        name = card.get_attribute("aria-label")
        code = card.get_attribute("data-card")
        keys.press(rng.choice(("Enter", "Space")))
        expect(hand.locator(f".card[data-card='{code}']")).to_have_count(0)
        played.append(name)
    assert len(played) == 13
    expect(page.locator(".banner.over")).to_contain_text("Game over")

    # The live region said the pass, each card you played, the others' plays, your turns.
    said = " ".join(page.evaluate("window.__said"))
    assert "You received the " in said
    for name in played:
        assert f"You played the {name}." in said
    assert re.search(r"Random bot \(seat [123]\) played the " + CARD_NAME.pattern, said)
    assert "Your turn." in said and "Game over." in said
    assert errors == []


def test_the_replays_keys_pressed_while_it_loads_are_applied_in_order(
    context: BrowserContext, scene: Scene
):
    page = context.new_page()
    errors = watch(page)
    page.goto(f"{scene.base}/#/replay/{scene.finished}/1")
    # Pressed at once, while the hand may still be loading: End, then one step back.
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    replay = page.locator("#replay")
    last = int(page.locator("#replay input[type=range]").get_attribute("max"))
    expect(replay).to_have_attribute("data-step", str(last - 1))
    # And once it has: Last, then ArrowLeft, ArrowRight; the slider says its step in words.
    page.get_by_role("button", name="First").click()
    expect(replay).to_have_attribute("data-step", "0")
    page.get_by_role("button", name="Last").click()
    page.keyboard.press("ArrowLeft")
    expect(replay).to_have_attribute("data-step", str(last - 1))
    page.keyboard.press("End")
    expect(replay).to_have_attribute("data-step", str(last))
    page.keyboard.press("ArrowLeft")
    expect(replay).to_have_attribute("data-step", str(last - 1))
    expect(page.get_by_role("slider", name="Step")).to_have_attribute(
        "aria-valuetext", re.compile(rf"^{last - 1} of {last}: Trick 13")
    )
    assert errors == []


def test_a_page_that_loads_late_draws_nothing_over_the_next(context: BrowserContext, scene: Scene):
    # The monkey found it: a scoreboard still loading when the reader went to the lobby drew
    # itself over the lobby once its answer came.
    page = context.new_page()
    errors = watch(page)
    held: list[Route] = []
    page.route("**/api/v1/games/*/scoreboard", lambda route: held.append(route))
    page.goto(f"{scene.base}/#/scoreboard/{scene.finished}")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the scoreboard was never asked for"
    page.get_by_role("link", name="Lobby").click()
    expect(page.locator("#games .game").first).to_be_visible()
    with page.expect_response("**/scoreboard"):
        held[0].continue_()
    page.get_by_role("button", name="Refresh").click()  # a round trip after the late answer
    expect(page.locator("#games .game").first).to_be_visible()
    expect(page.locator(".scoreboard")).to_have_count(0)
    assert errors == []


def refuse_as_over_the_limit(route: Route, seconds: int) -> None:
    """Answer as the server answers a request over its rate limit."""
    problem = {
        "type": "/problems/rate-limited",
        "code": "rate-limited",
        "title": "Too many requests",
        "status": 429,
        "detail": f"retry in {seconds} s",
    }
    headers = {"Retry-After": str(seconds), "Content-Type": "application/problem+json"}
    route.fulfill(status=429, headers=headers, body=json.dumps(problem))


def test_the_table_waits_out_a_429_and_says_so(context: BrowserContext, scene: Scene):
    # A play refused once as the server refuses one over its limit: the table waits the
    # Retry-After, says so, and sends the same play again (its Idempotency-Key): played once.
    page = context.new_page()
    errors = watch(page)
    refused: list[str] = []
    sent: list[str] = []

    def once_too_many(route: Route) -> None:
        key = route.request.headers.get("idempotency-key", "")
        if not refused:
            refused.append(key)
            refuse_as_over_the_limit(route, 2)
            return
        sent.append(key)
        route.continue_()

    page.goto(seated_by_api(context, scene.base, "tia", passed=True))
    your_turn(page)
    page.route("**/api/v1/games/*/play", once_too_many)
    card = page.locator(".hand .card.legal:not(:disabled)").first
    code = card.get_attribute("data-card")
    card.click()
    expect(page.locator("#waiting")).to_contain_text("Too many requests: waiting 2 s")
    expect(page.locator(f".hand .card[data-card='{code}']")).to_have_count(0)
    expect(page.locator("#waiting")).to_be_hidden()
    expect(page.locator("#problem")).to_be_hidden()
    assert sent[:1] == refused
    # Chromium logs the refused request itself; nothing else went wrong.
    assert [e for e in errors if "status of 429" not in e] == []


def test_the_tables_stream_waits_out_a_429_and_says_so(context: BrowserContext, scene: Scene):
    # The table's event stream refused once over its limit: the badge says why and when it
    # tries again, and it waits the Retry-After.
    page = context.new_page()
    table = seated_by_api(context, scene.base, "uma", passed=False)
    refused: list[int] = []
    asked: list[float] = []  # when each stream was asked for

    def once_too_many(route: Route) -> None:
        asked.append(time.monotonic())
        if not refused:
            refused.append(1)
            refuse_as_over_the_limit(route, 3)
            return
        route.continue_()

    page.route("**/api/v1/games/*/events", once_too_many)
    page.goto(table)  # the table's first stream is the one refused
    badge = page.locator("#connection")
    expect(badge).to_have_attribute("data-state", "lost")
    expect(badge).to_contain_text("Too many requests: retrying in 3 s")
    # Then it follows the game again, having waited as asked (not the 1 s of a dropped line).
    expect(badge).to_have_attribute("data-state", "live", timeout=15_000)
    assert asked[1] - asked[0] >= 2.5


def test_leaving_the_table_mid_contribution_and_coming_back_sends_it_once(
    context: BrowserContext, scene: Scene
):
    # The seat's contribution to the next hand's shuffle is held on its way, the table left
    # (which cuts the request off) and opened again: whether it arrived or not, the page must not
    # send that hand's contribution again (a second is refused, 409: a console error).
    game = _call(scene.base, "POST", "/games", {"seats": [None] + [{"bot": "random"}] * 3})
    held: list[Route] = []
    context.route("**/contribution", lambda route: held.append(route))
    page = context.new_page()
    errors = watch(page)
    page.goto(f"{scene.base}/#/game/{game['id']}")
    page.locator(".join input").fill("kay")
    page.locator(".join input").press("Enter")
    expect(page.locator(".hand .card")).to_have_count(13)
    deadline = time.monotonic() + 5
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert len(held) == 1, "the seat contributed to the next hand"
    page.goto(f"{scene.base}/#/")
    expect(page.locator(".lobby, main")).not_to_have_count(0)
    page.goto(f"{scene.base}/#/game/{game['id']}")
    expect(page.locator(".hand .card")).to_have_count(13)
    page.wait_for_timeout(500)  # a view or two drawn: time for a second contribution to go
    assert len(held) == 1
    # Nor after a reload: the tab remembers (sessionStorage), not only the page's module.
    page.reload()
    expect(page.locator(".hand .card")).to_have_count(13)
    page.wait_for_timeout(500)
    assert len(held) == 1
    assert errors == []
