"""The web table's end-to-end fixtures: real gunicorn (``hearts serve``) on the throwaway
redis-server, and pytest-playwright's Chromium launched from the system's binary.

No browser is downloaded at run time: the tests use Debian's ``chromium-headless-shell`` or
``chromium`` (docs/testing.md, ``.ci/run``). Without either they skip, unless
``HEARTS_REQUIRE_BROWSER=1`` (CI), where a missing browser fails them."""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.replay.live import SERVER_LOGS, start_server, stop_server
from tests.web.console import NETWORK_CHANGED

REQUIRE_ENV = "HEARTS_REQUIRE_BROWSER"
BINARY_ENV = "HEARTS_CHROMIUM"


# Chromium's old headless mode, a build of its own since Chromium 132 (Debian's package
# chromium-headless-shell): the tests never show a window, and the whole browser's headless
# mode spent ~80% more CPU on the same pages (measured: tests/web/test_table.py and
# test_pages.py, 71.6 CPU-s of browser against 39.2, docs/testing.md).
SHELL = "chromium-headless-shell"


def chromium_binary() -> str | None:
    """The system Chromium: $HEARTS_CHROMIUM, else the headless shell, else the whole browser."""
    candidates = [os.environ.get(BINARY_ENV), shutil.which(SHELL), f"/usr/bin/{SHELL}"]
    candidates += [shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium"]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch arguments, with the system Chromium as the executable."""
    binary = chromium_binary()
    if binary is None:
        message = (
            "no Chromium found ($HEARTS_CHROMIUM, chromium-headless-shell or chromium on "
            "PATH); install it with `apt-get install -y chromium-headless-shell` "
            "(docs/testing.md)"
        )
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return {**browser_type_launch_args, "executable_path": binary}


class Witness:
    """What the browser met during one test, told only if the test fails: requests that failed,
    answers of 400 and up, console errors and warnings, uncaught errors, navigations; and the
    new lines of the logs of the servers its pages talked to. A page that stays on "Loading…"
    (a module script that did not load) then says which request and what the server saw."""

    MOST_LINES = 80

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.lines: list[str] = []
        self.ports: set[int] = set()
        # Where each server's log stood when the test began: only its new lines are told.
        self.offsets = {port: _size(path) for port, path in SERVER_LOGS.items()}

    def watch(self, context: BrowserContext) -> None:
        context.on("requestfailed", lambda r: self._say(f"failed {r.method} {r.url}: {r.failure}"))
        context.on("response", self._response)
        context.on("console", self._console)
        context.on("weberror", lambda error: self._say(f"uncaught: {error.error}"))

    def watch_page(self, page: Page) -> None:
        page.on("framenavigated", self._navigated)

    def _say(self, line: str) -> None:
        if len(self.lines) < self.MOST_LINES:
            self.lines.append(f"{time.monotonic() - self.start:7.2f}s {line}")

    def _response(self, response: Any) -> None:
        port = urlsplit(response.url).port
        if port is not None:
            self.ports.add(port)
        if response.status >= 400:
            self._say(f"{response.status} {response.request.method} {response.url}")

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self._say(f"console {message.type}: {message.text}")

    def _navigated(self, frame: Any) -> None:
        if frame.parent_frame is None:
            self._say(f"navigated to {frame.url}")

    def report(self) -> str:
        parts = ["\n".join(self.lines) or "(nothing)"]
        for port in sorted(self.ports & SERVER_LOGS.keys()):
            path = SERVER_LOGS[port]
            try:
                with path.open("rb") as log:
                    log.seek(self.offsets.get(port, 0))
                    lines = log.read().decode(errors="replace").splitlines()
                tail = [_AGENT.sub("", line) for line in lines[-self.MOST_LINES :]]
            except OSError as error:
                tail = [f"(unreadable: {error})"]
            parts.append(f"--- server :{port} ({path.name}), its lines since the test began")
            parts.append("\n".join(tail))
        return "\n".join(parts)


# An access log line's referrer and user agent: the same on every line of a test.
_AGENT = re.compile(r' "[^"]*" "[^"]*"$')


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_witness: Witness | None = None


@pytest.fixture(autouse=True)
def witness():
    """This test's Witness: every context the browser fixtures make is watched by it."""
    global _witness
    _witness = Witness()
    yield _witness
    _witness = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    found = getattr(item, "funcargs", {}).get("witness")
    if report.failed and found is not None:
        report.sections.append(("What the browser met", found.report()))
    return report


def _watched(context: BrowserContext) -> BrowserContext:
    if _witness is not None:
        _witness.watch(context)
    context.on("page", _page_made)
    return context


def _page_made(page: Page) -> None:
    """Every new page, however made: its loads kept steady, its navigations witnessed."""
    _steady(page)
    if _witness is not None:
        _witness.watch_page(page)


# Chromium cancels every request in flight when the machine's network changes (Chromium issue
# 41465264), as it does while the container tests beside the web tests add and remove podman's
# interfaces: a page whose own files were cut off so never runs its module graph (CI-style run
# of 29 Nov: "failed GET /web/app.js: net::ERR_NETWORK_CHANGED", the lobby stuck on
# "Loading…"). A load that lost a document, script or style sheet that way is made again.
_PAGE_FILES = ("document", "script", "stylesheet")


def _steady(page: Page) -> None:
    cut: list[str] = []
    page.on(
        "requestfailed",
        lambda r: (
            cut.append(r.url)
            if r.failure == NETWORK_CHANGED and r.resource_type in _PAGE_FILES
            else None
        ),
    )

    def steady(load: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            cut.clear()
            response = load(*args, **kwargs)
            for _ in range(2):
                if not cut:
                    break
                cut.clear()
                response = reload(timeout=kwargs.get("timeout"))  # every file fetched again
            return response

        return run

    reload = page.reload
    page.goto = steady(page.goto)  # type: ignore[method-assign]
    page.reload = steady(page.reload)  # type: ignore[method-assign]


class CalmBrowser:
    """The session's browser, whose new contexts ask for reduced motion unless told otherwise.

    The table's animations (a glow on the seat to play, cards dealt in and gathered) repaint
    while a page is open, and Playwright waits for a moving card to come to rest before it
    clicks it: CPU and seconds for every test that is not about motion. A test of the motion
    itself says ``reduced_motion="no-preference"``."""

    def __init__(self, browser: Browser) -> None:
        self._browser = browser

    def new_context(self, **options: Any) -> BrowserContext:
        options.setdefault("reduced_motion", "reduce")
        return _watched(self._browser.new_context(**options))

    def new_page(self, **options: Any) -> Page:
        options.setdefault("reduced_motion", "reduce")
        page = self._browser.new_page(**options)  # its own context, closed with it
        _watched(page.context)
        _page_made(page)  # made before its context was watched
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@pytest.fixture
def browser(browser: Browser) -> CalmBrowser:
    return CalmBrowser(browser)


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's ``context`` and ``page`` fixtures: calm too (above)."""
    return {**browser_context_args, "reduced_motion": "reduce"}


# Each web_server's Redis URL and key prefix, by its base URL: for a test that writes what the
# API no longer lets anyone write (a game of before a rule), straight into the server's store.
SERVED: dict[str, tuple[str, str]] = {}


@pytest.fixture(scope="module")
def web_server(redis_server, tmp_path_factory):
    """Base URL of ``hearts serve`` (one gevent worker, projector in-process) on its own key
    prefix of the throwaway redis-server."""
    prefix = f"web-{int(time.time() * 1000)}-{uuid.uuid4().hex[:6]}"
    process, port = start_server(
        redis_server,
        prefix,
        tmp_path_factory.mktemp("gunicorn-web"),
        HEARTS_PROJECTOR_IN_PROCESS="1",
        # What the pages show of an analysis does not depend on its accuracy: an eighth of
        # the default's deals (the default's own analyses: tests/client, tests/api).
        HEARTS_ANALYSIS_SAMPLES="24",
    )
    base = f"http://127.0.0.1:{port}"
    SERVED[base] = (redis_server, prefix)
    yield base
    stop_server(process)
