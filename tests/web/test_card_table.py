"""Issue 44: the table that feels like a card game, in a real browser against ``hearts serve``.

A whole hand played on it, by mouse and by keyboard in turns: the cards drawn as the project's
own SVG faces, each seat's card in front of that seat, the last trick opened on request (the
button and the L key) and said in the live region, the motion there unless the reader asked
for less, the sound off until chosen; and axe-core finds no serious or critical violation with
the last trick open. And a private table: created in the lobby, its invitation link copied,
opened in a second browser context that asks a name and sits down."""

from __future__ import annotations

import re

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.web.console import watch
from tests.web.test_table import (
    api,
    choose_to_pass,
    create_game,
    game_id_of,
    screenshot,
    token_of,
)

SERIOUS = ("serious", "critical")
WCAG = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}
}
POSITIONS = ["bottom", "left", "top", "right"]  # four players, clockwise from your seat


# Records, in the page, the most elements ever drawn at once with each motion class: the motion
# classes are on the draw where the thing moved, and a later redraw (the bots' next card) may
# come before a test could look.
RECORD_MOTION = """
(() => {
  const most = { arrive: 0, played: 0, taken: 0 };
  window.__motion = most;
  const scan = () => {
    const count = (selector) => document.querySelectorAll(selector).length;
    most.arrive = Math.max(most.arrive, count(".hand .card.arrive"));
    most.played = Math.max(most.played, count(".trick .slot.played"));
    most.taken = Math.max(most.taken, count(".trick.taken"));
  };
  new MutationObserver(scan).observe(document, { subtree: true, childList: true });
})();
"""


def serious_violations(page: Page) -> list[str]:
    found = Axe().run(page, options=WCAG).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']}" for v in found if v["impact"] in SERIOUS]


def pass_three(page: Page) -> None:
    choose_to_pass(page, (0, 4, 8))
    page.locator("#pass").click()
    expect(page.locator(".hand .card.received")).to_have_count(3)


def wait_for_turn_or_end(page: Page) -> bool:
    page.locator("#table[data-phase='finished'], .hand .card.legal:not(:disabled)").first.wait_for(
        timeout=60_000
    )
    return page.locator("#table").get_attribute("data-phase") != "finished"


def check_faces(page: Page) -> None:
    """Every card of the hand is a loaded SVG face of the project's, named as it is spoken."""
    # decode(): once the picture has loaded (and drawn: a broken file rejects).
    faces = page.locator(".hand .card img").evaluate_all(
        """els => Promise.all(els.map(e => e.decode().then(
          () => [e.getAttribute('src'), e.naturalWidth > 0],
          () => [e.getAttribute('src'), false],
        )))"""
    )
    codes = page.locator(".hand .card").evaluate_all("els => els.map(e => e.dataset.card)")
    assert [src for src, _ in faces] == [f"/web/cards/{code}.svg" for code in codes]
    assert all(loaded for _, loaded in faces), faces


def check_trick_in_front_of_seats(page: Page, view: dict) -> None:
    """Each card of the trick on the felt lies on the side of the seat that played it."""
    me = view["seat"]
    for play in view["current_trick"]:
        position = POSITIONS[(play["seat"] - me) % 4]
        slot = page.locator(f"#table > .felt > .trick:not(.taken) .slot.pos-{position}")
        expect(slot.locator(".card")).to_have_attribute("data-card", play["card"])


def check_last_trick(page: Page, view: dict) -> None:
    """The last trick opens by L and by its button, shows the four cards and its winner, says
    them in the live region, and closes by L, Escape or the button."""
    last = view["tricks"][-1]
    panel = page.locator("#last-trick-panel")
    button = page.locator("#last-trick")
    expect(panel).to_have_count(0)
    expect(button).to_have_attribute("aria-pressed", "false")
    page.keyboard.press("l")  # the keyboard is in the hand on your turn
    expect(panel).to_be_visible()
    expect(button).to_have_attribute("aria-pressed", "true")
    shown = panel.locator(".card").evaluate_all("els => els.map(e => e.dataset.card)")
    assert sorted(shown) == sorted(p["card"] for p in last["cards"])
    winner = POSITIONS[(last["winner"] - view["seat"]) % 4]
    expect(panel.locator(f".slot.pos-{winner}.winner")).to_have_count(1)
    expect(panel.locator("h2")).to_contain_text(f"Trick {len(view['tricks'])}")
    expect(page.locator("#announce")).to_contain_text("Last trick, taken by")
    assert serious_violations(page) == []
    page.keyboard.press("L")
    expect(panel).to_have_count(0)
    button.click()
    expect(panel).to_be_visible()
    page.keyboard.press("Escape")
    expect(panel).to_have_count(0)


def test_a_hand_on_the_card_table_by_mouse_and_keyboard(browser: Browser, web_server: str):
    context = browser.new_context(
        viewport={"width": 1200, "height": 860}, reduced_motion="no-preference"
    )
    try:
        context.add_init_script(RECORD_MOTION)
        page = context.new_page()
        errors = watch(page)
        game_id = create_game(page, web_server, "mo")
        token = token_of(page, game_id)
        check_faces(page)
        # Sound is off until chosen, and the choice is kept in this browser.
        sound = page.locator("#sound")
        expect(sound).not_to_be_checked()
        sound.check()
        assert page.evaluate("localStorage.getItem('hearts.sound')") == "on"
        sound.uncheck()
        expect(page.locator("#last-trick")).to_be_disabled()  # no trick taken yet
        pass_three(page)
        # The pass's cards rose into the hand (an animation while motion is allowed).
        assert page.evaluate("window.__motion.arrive") == 3
        assert (
            page.evaluate(
                """() => {
              const probe = document.createElement("button");
              probe.className = "card arrive";
              document.querySelector(".hand").append(probe);
              const name = getComputedStyle(probe).animationName;
              probe.remove();
              return name;
            }"""
            )
            == "arrive"
        )

        played = 0
        opened = False
        while wait_for_turn_or_end(page):
            view = api(web_server, f"/games/{game_id}", token)
            if view["phase"] != "playing" or view["turn"] != view["seat"]:
                continue
            expect(page.locator(".seat.me.turn .tag.act")).to_have_text("to play")
            check_trick_in_front_of_seats(page, view)
            if view["tricks"] and not opened:
                check_last_trick(page, view)
                opened = True
            held = page.locator(".hand .card")
            before = held.count()
            if played % 2:
                page.keyboard.press("End")
                card = page.locator(".hand .card:focus")
                expect(card).to_have_class(re.compile(r"\blegal\b"))
                code = card.get_attribute("data-card")
                page.keyboard.press("Enter")
            else:
                card = page.locator(".hand .card.legal:not(:disabled)").first
                code = card.get_attribute("data-card")
                card.click()
            played += 1
            expect(held).to_have_count(before - 1)
            expect(page.locator(f".hand .card[data-card='{code}']")).to_have_count(0)
        assert played == 13 and opened
        # Cards came from their seats, and tricks were gathered to their winners.
        motion = page.evaluate("window.__motion")
        assert motion["played"] >= 1 and motion["taken"] >= 1, motion
        expect(page.locator(".banner.over")).to_contain_text("Game over")
        assert errors == []
    finally:
        context.close()


def test_less_motion_when_the_reader_asks_for_it(browser: Browser, web_server: str):
    context = browser.new_context(reduced_motion="reduce")
    try:
        page = context.new_page()
        create_game(page, web_server, "rm")
        pass_three(page)
        wait_for_turn_or_end(page)
        turn = page.locator(".seat.me.turn")
        assert turn.evaluate("e => getComputedStyle(e).animationName") == "none"
        # A trick taken is not gathered across the felt: it is not drawn at all.
        assert (
            page.evaluate(
                """() => {
              const probe = document.createElement("div");
              probe.className = "trick taken";
              document.querySelector(".felt").append(probe);
              const shown = getComputedStyle(probe).display;
              probe.remove();
              return shown;
            }"""
            )
            == "none"
        )
    finally:
        context.close()


def test_a_friend_joins_a_private_table_by_its_invitation_link(browser: Browser, web_server: str):
    host = browser.new_context(viewport={"width": 1200, "height": 860})
    friend = browser.new_context(viewport={"width": 1000, "height": 800})
    stranger = browser.new_context()
    try:
        page = host.new_page()
        errors = watch(page)
        page.goto(web_server + "/")
        page.get_by_label("Your name").fill("hana")
        page.get_by_label("Play to").fill("1")
        page.locator("select[name='seat1']").select_option("")  # open: for the friend
        page.get_by_label("Private table").check()
        page.get_by_role("button", name="Create and sit down").click()
        link = page.get_by_label("Invitation link")
        expect(link).to_have_value(re.compile(r"/#/invite/g[0-9a-f]{20}/[A-Za-z0-9_-]{22}$"))
        game_id = game_id_of(page)
        invitation = link.input_value()
        assert f"/#/invite/{game_id}/" in invitation
        page.get_by_role("button", name="Copy link").click()
        expect(page.locator("#announce")).to_contain_text("Invitation link")
        assert serious_violations(page) == []
        screenshot(page, "web-private-table.png")
        # In no listing: the lobby does not show it.
        listed = api(web_server, "/games?limit=100")["games"]
        assert game_id not in {game["id"] for game in listed}

        # A tampered link is refused, and takes no seat.
        other = stranger.new_page()
        code = invitation.rsplit("/", 1)[1]
        wrong = invitation[: -len(code)] + ("A" if code[0] != "A" else "B") + code[1:]
        other.goto(wrong)
        other.get_by_label("Your name").fill("mal")
        other.get_by_role("button", name="Take a seat").click()
        expect(other.locator("#problem .title")).to_have_text("Join code invalid")

        # The friend opens the link in another browser: a name, and seated.
        guest = friend.new_page()
        guest_errors = watch(guest)
        guest.goto(invitation)
        heading = guest.get_by_role("heading", name="An invitation to a private table")
        expect(heading).to_be_visible()
        expect(guest.locator(".invitation")).to_contain_text("hana")
        assert serious_violations(guest) == []
        screenshot(guest, "web-invitation.png")
        guest.get_by_label("Your name").fill("bea")
        guest.get_by_role("button", name="Take a seat").click()
        expect(guest.locator(".hand .card")).to_have_count(13)
        expect(guest.locator(".seat.me")).to_contain_text("bea")
        # The table is full: both play on, the invitation box gone.
        expect(page.locator(".seat")).to_contain_text(["hana", "bea"])
        expect(page.locator("#invite-link")).to_have_count(0)
        expect(page.locator(".hand .card")).to_have_count(13)
        assert errors == [] and guest_errors == []
    finally:
        host.close()
        friend.close()
        stranger.close()
