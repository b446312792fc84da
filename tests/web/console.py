"""What a page said went wrong: uncaught exceptions and console errors (a failed request is one:
Chromium logs it), collected from the moment ``watch`` is called."""

from __future__ import annotations

from playwright.sync_api import Page


def watch(page: Page) -> list[str]:
    """A list that fills with the page's uncaught errors and console errors."""
    seen: list[str] = []
    page.on("pageerror", lambda error: seen.append(f"uncaught: {error}"))
    page.on(
        "console",
        lambda message: (
            seen.append(f"console: {message.text}") if message.type == "error" else None
        ),
    )
    return seen
