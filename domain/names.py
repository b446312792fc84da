"""Player names, as identity systems treat them: one pure module for the table and, later, accounts.

A name is a *nickname* in the sense of RFC 8266 (PRECIS, RFC 8264), enforced and compared with
the ``precis-i18n`` library rather than hand-written Unicode tables:

- ``display_name``: the form stored and shown, from the ``NicknameCasePreserved`` profile. It
  allows what people put in display names (spaces inside, letters of any script, punctuation,
  symbols and emoji), keeps the case the player chose, folds width and compatibility forms
  (NFKC: "ＡＮＮ" is "ANN"), maps other spaces to ASCII space, trims and collapses runs of spaces.
  It refuses control characters (C0/C1: ESC, CR, LF, BEL), default-ignorable and format
  characters (zero-width space/joiners, bidi overrides and marks, soft hyphen), unassigned code
  points and lone surrogates. The Username profiles were not chosen: they refuse spaces and
  symbols ("Jean Dupont"), which a display name at a card table should allow.
- ``name_key``: the form compared, from ``NicknameCaseMapped`` (RFC 8266's comparison: the same
  rules, then lower case): "Ann", "ANN" and "ａｎｎ" are one name.

Confusable look-alikes across scripts (Unicode TR39 skeletons: Latin "a" and Cyrillic "а") are
not folded: we found no maintained Python package that computes TR39 skeletons
(``confusable-homoglyphs`` only flags mixed-script look-alikes, and would refuse honest mixes
such as "Taro 太郎"); see README.
"""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache

from precis_i18n import get_profile

MAX_NAME_LENGTH = 64  # code points, after enforcement
_MAX_RAW = 4 * MAX_NAME_LENGTH  # as sent: room for spaces to collapse and forms to compose

_DISPLAY = get_profile("NicknameCasePreserved")
_COMPARE = get_profile("NicknameCaseMapped")


class NameRules(StrEnum):
    """How a game checks and compares its players' names, fixed when the game is created.

    A game's audit decides every join again, years later, with the rules the game was played
    under: a game created before names were checked keeps the rule it had (``AS_WRITTEN``), so
    its names are not refused or respelt now and its audit stays clean.
    """

    NICKNAME = "rfc8266"  # RFC 8266 nicknames, compared case- and width-folded (every new game)
    AS_WRITTEN = "as_written"  # before: trimmed, 1 to 64 characters, compared as written


class InvalidNameText(ValueError):
    """A name the profile refuses; ``str()`` says why (the character and its position)."""


def display_name(raw: str) -> str:
    """The name as stored and shown; InvalidNameText if it is empty, too long or refused."""
    if not isinstance(raw, str):
        raise InvalidNameText("a name is text")
    if len(raw) > _MAX_RAW:  # before the profile: its cost grows with the length
        raise InvalidNameText(f"a name is at most {MAX_NAME_LENGTH} characters")
    if not raw.strip():
        raise InvalidNameText("a name must not be empty")
    try:
        name = _DISPLAY.enforce(raw)
    except UnicodeError as error:
        raise InvalidNameText(_why(raw, error)) from None
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidNameText(f"a name is at most {MAX_NAME_LENGTH} characters")
    return name


@lru_cache(maxsize=4096)  # a game list filtered by player compares every seat's name
def name_key(name: str) -> str:
    """The form two names are compared in: equal keys are the same name.

    A name stored before names were checked may be one the profile refuses; it is then compared
    as it is written, so an old game still loads and its seats still count.
    """
    try:
        return _COMPARE.enforce(name)
    except UnicodeError:
        return name


def player_name(raw: str, rules: NameRules) -> str:
    """The name a join stores under ``rules``; InvalidNameText if those rules refuse it."""
    if rules is NameRules.NICKNAME:
        return display_name(raw)
    name = raw.strip() if isinstance(raw, str) else ""
    if not name or len(name) > MAX_NAME_LENGTH:
        raise InvalidNameText(f"a player's name is 1 to {MAX_NAME_LENGTH} characters")
    return name


def compared_as(name: str, rules: NameRules) -> str:
    """The form two of a game's names are compared in under ``rules``."""
    return name_key(name) if rules is NameRules.NICKNAME else name


def same_name(a: str, b: str) -> bool:
    return name_key(a) == name_key(b)


def _why(raw: str, error: UnicodeError) -> str:
    if isinstance(error, UnicodeEncodeError) and error.reason.startswith("DISALLOWED"):
        char = raw[error.start] if error.start < len(raw) else ""
        what = error.reason.split("/", 1)[-1].replace("precis_ignorable_properties", "invisible")
        return (
            f"a name may not contain U+{ord(char):04X} ({what}) at position {error.start}"
            if char
            else "this name is not allowed"
        )
    return f"this name is not allowed ({getattr(error, 'reason', error)})"
