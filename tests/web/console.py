"""What a page said went wrong: uncaught exceptions and console errors (a failed request is one:
Chromium logs it), collected from the moment ``watch`` is called.

Back-pressure is not a page's error: a 429 or 503 answer (a rate limit, the long-work queue
full on a busy machine) is waited out and sent again by api.js, and a page that gives up says
so (tests/web/test_limits.py). Those answers, and Chromium's line for them, are left out."""

from __future__ import annotations

import re

from playwright.sync_api import Page

BACK_PRESSURE = (429, 503)
# Chromium's error when the machine's network changed under a request (conftest.py's _steady).
NETWORK_CHANGED = "net::ERR_NETWORK_CHANGED"
_BACK_PRESSURE_LINE = re.compile(r"status of (?:429|503)\b")


def watch(page: Page) -> list[str]:
    """A list that fills with the page's uncaught errors, console errors and 5xx answers."""
    seen: list[str] = []
    page.on("pageerror", lambda error: seen.append(f"uncaught: {error}"))
    page.on(
        "console",
        lambda message: (
            seen.append(f"console: {message.text}")
            if message.type == "error"
            and not _BACK_PRESSURE_LINE.search(message.text)
            and NETWORK_CHANGED not in message.text  # the machine's, not the page's
            else None
        ),
    )
    # Chromium's console line names no URL: the server's failures are told with theirs.
    page.on(
        "response",
        lambda response: (
            seen.append(f"response: {response.status} {response.request.method} {response.url}")
            if response.status >= 500 and response.status not in BACK_PRESSURE
            else None
        ),
    )
    return seen


# Every text the table's live region says, in order (read back at the end; it acts on nothing).
RECORD_SAID = """
window.__said = [];
new MutationObserver(() => {
  const region = document.getElementById("announce");
  if (region && region.textContent) window.__said.push(region.textContent);
}).observe(document, { subtree: true, childList: true, characterData: true });
"""
