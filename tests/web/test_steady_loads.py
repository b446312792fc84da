"""A page load whose own files the machine's network change cut off is made again (conftest's
``_steady``: Chromium cancels requests in flight when interfaces come and go)."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Route, expect

from tests.web import conftest


def test_a_load_that_lost_its_script_to_a_network_change_is_made_again(
    context: BrowserContext, web_server: str, monkeypatch
):
    # Chromium's ERR_NETWORK_CHANGED cannot be made on purpose: a reset stands in for it.
    monkeypatch.setattr(conftest, "NETWORK_CHANGED", "net::ERR_CONNECTION_RESET")
    cut: list[str] = []

    def once(route: Route) -> None:
        if not cut:
            cut.append(route.request.url)
            route.abort("connectionreset")
        else:
            route.continue_()

    context.route("**/web/app.js", once)
    page = context.new_page()
    page.goto(f"{web_server}/#/")
    assert cut, "the script was cut off once"
    expect(page.get_by_text("Loading…")).to_have_count(0)
    expect(page.locator("main")).not_to_be_empty()
