"""Where a reader resumes a stream or page: every ``after`` and ``Last-Event-ID``, one parser.

Two forms are handed out: a game's events are numbered by their seq (``12``, the game's
version), a player's notices by their Redis stream entry id (``1700000000000-0``). Both come
back from clients as text, in a query parameter or a header, and a value Redis cannot take
(``1-18446744073709551616``: each part of an entry id is 64 bits unsigned) once answered 500,
or ended a live stream in the middle of its body. So :func:`parse_event_id` reads both forms, by
one rule, before anything is read or any stream starts: ASCII digits only (``int()`` reads other
scripts' digits and a sign), the parts the form has, each within its bound; anything else is 400
``invalid-event-id``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from marshmallow import fields

from service.app.errors import InvalidEventId

U64_MAX = 2**64 - 1  # a part of a Redis stream id
MAX_SEQ = 2**63 - 1  # an event seq: the store reads from seq + 1, which must fit a stream id too
_DIGITS = 20  # len(str(U64_MAX))


@dataclass(frozen=True, slots=True)
class IdForm:
    """A form of event id: how many dash-separated parts, each at most ``maximum``."""

    parts: int
    maximum: int
    what: str  # said in the problem's detail

    @property
    def pattern(self) -> str:
        """The OpenAPI ``pattern`` of the form (its bound is the parser's)."""
        return "^" + "-".join([rf"\d{{1,{_DIGITS}}}"] * self.parts) + "$"


GAME_SEQ = IdForm(1, MAX_SEQ, f"an event seq from 0 to {MAX_SEQ}")
NOTICE_ID = IdForm(2, U64_MAX, f"a notice id '<n>-<m>', each part from 0 to {U64_MAX}")


def parse_event_id(name: str, raw: str | None, form: IdForm) -> tuple[int, ...] | None:
    """The parts of ``raw`` (a parameter or header called ``name``) in ``form``; None if it is
    absent or blank; else 400 invalid-event-id."""
    if raw is None or raw.strip() == "":
        return None
    parts = raw.strip().split("-")
    if len(parts) != form.parts or not all(_number(p) for p in parts):
        raise InvalidEventId(name, raw, form.what)
    values = tuple(int(p) for p in parts)
    if any(v > form.maximum for v in values):
        raise InvalidEventId(name, raw, form.what)
    return values


def game_seq(name: str, raw: str | None, default: int) -> int:
    """A game event seq (``default`` if absent)."""
    parsed = parse_event_id(name, raw, GAME_SEQ)
    return default if parsed is None else parsed[0]


def notice_id(name: str, raw: str | None) -> str | None:
    """A player notice's entry id, written as Redis writes it (None if absent)."""
    parsed = parse_event_id(name, raw, NOTICE_ID)
    return None if parsed is None else "-".join(str(v) for v in parsed)


def _number(text: str) -> bool:
    return 0 < len(text) <= _DIGITS and text.isascii() and text.isdigit()


class _AsSent(fields.Field):
    """A parameter handed to the view as sent: the view parses it with :func:`parse_event_id`,
    so a bad ``after`` is the same 400 invalid-event-id as a bad ``Last-Event-ID`` (not a 422
    of the schema)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        return value


class SeqParameter(_AsSent, fields.Integer):
    """A game event seq, documented as an integer from 0 to MAX_SEQ."""


class NoticeIdParameter(_AsSent, fields.String):
    """A player notice's id, documented as a string of NOTICE_ID's pattern."""
