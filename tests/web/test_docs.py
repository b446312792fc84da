"""Issue 18, item 4: the API docs page (/api/v1/docs) works offline and under the CSP.

Chromium may reach the service and nothing else (every other host is blocked); the page still
lists every operation of the OpenAPI document, asked nothing of another host, and broke no rule
of the Content-Security-Policy (no inline script or style)."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import Browser, Route, expect

from tests.replay.live import request


def test_the_docs_page_lists_the_operations_with_no_other_host(browser: Browser, web_server: str):
    origin = urlsplit(web_server).netloc
    _, _, spec = request(urlsplit(web_server).port, "GET", "/api/v1/openapi.json")
    operations = sum(
        1
        for item in spec["paths"].values()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    )
    blocked: list[str] = []
    violations: list[str] = []

    def only_the_service(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == origin or url.startswith("data:"):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    context = browser.new_context()
    try:
        context.route("**/*", only_the_service)
        page = context.new_page()
        page.on(
            "console",
            lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
        )
        page.goto(f"{web_server}/api/v1/docs")
        expect(page.locator(".opblock")).to_have_count(operations, timeout=30_000)
        expect(page.locator(".opblock-summary-path").first).to_contain_text("/api/v1/")
        expect(page.get_by_text("/api/v1/games/{game_id}/play", exact=True)).to_be_visible()
        assert blocked == []
        assert violations == []
    finally:
        context.close()


def test_swagger_ui_is_served_by_the_service(web_server: str):
    port = urlsplit(web_server).port
    status, headers, body = request(port, "GET", "/api/v1/docs")
    assert status == 200
    page = body.decode()
    assert "<script>" not in page and "style=" not in page  # the CSP allows neither
    for path in ("/api/v1/docs/swagger-ui/swagger-ui-bundle.js", "/web/docs.js"):
        assert path in page
        status, headers, _ = request(port, "GET", path)
        assert status == 200
        mimetype = headers["Content-Type"].split(";")[0]
        assert mimetype in {"text/javascript", "application/javascript"}
