"""An error answer of the API: an RFC 9457 problem, raised as HeartsProblem (RateLimited for a
429 the client stopped waiting out)."""

from __future__ import annotations

from typing import Any


class HeartsProblem(Exception):
    """The server refused a request. ``code`` is stable (e.g. ``not-your-turn``,
    ``must-follow-suit``); ``errors`` names each invalid field of a validation-error;
    ``retry_after`` is the server's Retry-After in seconds (None without one)."""

    def __init__(self, status: int, body: dict[str, Any], retry_after: float | None = None) -> None:
        self.status = status
        self.body = body
        self.code: str = str(body.get("code") or body.get("type", "").rsplit("/", 1)[-1])
        self.title: str = str(body.get("title", ""))
        self.detail: str = str(body.get("detail", ""))
        self.errors: dict[str, Any] = body.get("errors") or {}
        self.retry_after = retry_after
        super().__init__(f"{status} {self.code}: {self.detail}")


class RateLimited(HeartsProblem):
    """A 429 (``rate-limited``) the client did not wait out: its retries were spent, were turned
    off, or the wait asked for was longer than it may wait. ``retry_after``: when to try again."""
