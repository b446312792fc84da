"""What a user gets by default (issue 34), in a real browser against ``hearts serve``: the web
table waits out a 429 and says so instead of failing the click."""

from __future__ import annotations

from playwright.sync_api import Browser, Route, expect


def test_a_429_is_waited_out_and_said(browser: Browser, web_server: str):
    page = browser.new_page()
    refused: list[str] = []
    sent_again: list[str] = []

    def once_too_many(route: Route) -> None:
        # The first game created is refused as the server refuses one over its limit.
        if route.request.method == "POST" and not refused:
            refused.append(route.request.headers.get("idempotency-key", ""))
            route.fulfill(
                status=429,
                headers={"Retry-After": "2", "Content-Type": "application/problem+json"},
                body='{"type": "/problems/rate-limited", "code": "rate-limited", '
                '"title": "Too many requests", "status": 429, "detail": "retry in 2 s"}',
            )
            return
        if route.request.method == "POST":
            sent_again.append(route.request.headers.get("idempotency-key", ""))
        route.continue_()

    page.route("**/api/v1/games", once_too_many)
    page.goto(web_server + "/")
    page.get_by_label("Your name").fill("ann")
    page.get_by_label("Play to").fill("1")
    page.get_by_role("button", name="Create and sit down").click()
    expect(page.locator("#waiting")).to_be_visible()
    expect(page.locator("#waiting")).to_contain_text("Too many requests: waiting 2 s")
    expect(page.locator(".hand .card")).to_have_count(13)
    expect(page.locator("#waiting")).to_be_hidden()
    expect(page.locator("#problem")).to_be_hidden()
    # Sent again as the same request (its Idempotency-Key): nothing can act twice.
    assert len(refused) == 1 and sent_again == refused
    page.close()
