"""An error answer of the API: an RFC 9457 problem, raised as HeartsProblem."""

from __future__ import annotations

from typing import Any


class HeartsProblem(Exception):
    """The server refused a request. ``code`` is stable (e.g. ``not-your-turn``,
    ``must-follow-suit``); ``errors`` names each invalid field of a validation-error."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        self.code: str = str(body.get("code") or body.get("type", "").rsplit("/", 1)[-1])
        self.title: str = str(body.get("title", ""))
        self.detail: str = str(body.get("detail", ""))
        self.errors: dict[str, Any] = body.get("errors") or {}
        super().__init__(f"{status} {self.code}: {self.detail}")
