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

Look-alikes (issue 32) are UTS #39's, computed by ICU's ``SpoofChecker`` (the ``pyicu``
binding), never by tables of ours:

- ``identifier_name``: a nickname whose every character has Identifier_Status=Allowed in UTS
  #39's identifier profile, or is the ASCII space between words (the profile is for
  identifiers, which have no spaces; "Jean Dupont" and "Taro 太郎" stay names). It refuses what
  PRECIS lets through and a reader cannot tell apart: blanks such as U+2800 (BRAILLE PATTERN
  BLANK), symbols, emoji, obsolete and technical letters.
- ``skeletons``: UTS #39 confusable skeletons of a name as written, in lower case and in upper
  case (ICU's skeletons keep case, while names compare ignoring it: "Вob" looks like "Bob", and
  "ΑLICE" like "ALICE", which is "Alice"). Two names are look-alikes when they share one.

ICU's data is Unicode's: U+04CF CYRILLIC SMALL LETTER PALOCHKA's prototype is "i", so "Аӏісе"
looks like "Aiice" to UTS #39, not like "Alice" (see docs/api.md).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from enum import StrEnum
from functools import lru_cache

import icu
from precis_i18n import get_profile

MAX_NAME_LENGTH = 64  # code points, after enforcement
_MAX_RAW = 4 * MAX_NAME_LENGTH  # as sent: room for spaces to collapse and forms to compose

_DISPLAY = get_profile("NicknameCasePreserved")
_COMPARE = get_profile("NicknameCaseMapped")

# UTS #39: confusable skeletons, and Identifier_Status=Allowed (the union of the Recommended and
# Inclusion identifier types). A configured checker is only read: safe to share across threads.
_SPOOF = icu.SpoofChecker()
_ALLOWED = icu.UnicodeSet()  # a copy of ICU's sets would be frozen, as they are
_ALLOWED.addAll(_SPOOF.getRecommendedUnicodeSet())
_ALLOWED.addAll(_SPOOF.getInclusionUnicodeSet())
_ALLOWED.add(" ")  # between words only: display_name trims and collapses spaces
_ALLOWED.freeze()


class NameRules(StrEnum):
    """How a game checks and compares its players' names, fixed when the game is created.

    A game's audit decides every join again, years later, with the rules the game was played
    under: a game created before names were checked keeps the rule it had (``AS_WRITTEN``), so
    its names are not refused or respelt now and its audit stays clean.
    """

    # RFC 8266 nicknames in UTS #39's identifier profile; look-alikes are taken (every new game)
    IDENTIFIER = "rfc8266+uts39"
    NICKNAME = "rfc8266"  # before: RFC 8266 nicknames, compared case- and width-folded
    AS_WRITTEN = "as_written"  # before that: trimmed, 1 to 64 characters, compared as written


class Clash(StrEnum):
    """How a name clashes with another of the same table."""

    SAME = "same"  # the same name, as the game's rules compare names
    LOOKALIKE = "lookalike"  # a UTS #39 confusable (NameRules.IDENTIFIER only)


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


def identifier_name(raw: str) -> str:
    """``display_name``, every character of it in UTS #39's identifier profile (or a space)."""
    name = display_name(raw)
    for position, char in enumerate(name):
        if not _ALLOWED.contains(char):
            raise InvalidNameText(
                f"a name may not contain U+{ord(char):04X} (outside the Unicode identifier "
                f"profile, UTS #39) at position {position}"
            )
    return name


@lru_cache(maxsize=4096)
def skeletons(name: str) -> frozenset[str]:
    """UTS #39 skeletons of ``name`` as written, lower- and upper-cased: names that share one
    look alike (a name is compared ignoring case, and ICU's skeletons keep it)."""
    forms = {name, name_key(name), name.upper()}
    return frozenset(_SPOOF.getSkeleton(0, form) for form in forms)


# The folding done before the skeletons of a name beside registered players' (issue 42): UTS
# #39 alone lets "Mạllory" (a dot below) and "Maӏӏory" (Cyrillic palochka, whose prototype is
# "i") pass beside "Mallory". NFD, then every combining mark dropped, then the palochkas (small
# U+04CF, capital U+04C0) read as "l", which is what they look like.
_AS_L = str.maketrans({"\u04cf": "l", "\u04c0": "l"})


def folded(name: str) -> str:
    """``name`` decomposed (NFD), its combining marks dropped, its palochkas read as "l"."""
    decomposed = unicodedata.normalize("NFD", name)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", bare.translate(_AS_L))


@lru_cache(maxsize=4096)
def account_skeletons(name: str) -> frozenset[str]:
    """The skeletons a name is compared by against registered players' names: UTS #39's, and
    those of its ``folded`` form. Only there: a table's own names (``clash``) keep UTS #39's
    alone, as games were decided and are audited with them."""
    return skeletons(name) | skeletons(folded(name))


def lookalike(a: str, b: str) -> bool:
    return not skeletons(a).isdisjoint(skeletons(b))


def resembles(name: str, word: str) -> bool:
    """The same name as ``word``, or a look-alike of it (a bot's name, a reserved word)."""
    return same_name(name, word) or lookalike(name, word)


def player_name(raw: str, rules: NameRules, registered: bool = False) -> str:
    """The name a join stores under ``rules``; InvalidNameText if those rules refuse it.

    A registered player's name (``registered``) was checked when it was registered, under the
    rules of that day: it is taken as a nickname, so no account is renamed by a new rule."""
    if rules is NameRules.IDENTIFIER and not registered:
        return identifier_name(raw)
    if rules in (NameRules.IDENTIFIER, NameRules.NICKNAME):
        return display_name(raw)
    name = raw.strip() if isinstance(raw, str) else ""
    if not name or len(name) > MAX_NAME_LENGTH:
        raise InvalidNameText(f"a player's name is 1 to {MAX_NAME_LENGTH} characters")
    return name


def compared_as(name: str, rules: NameRules) -> str:
    """The form two of a game's names are compared in under ``rules``."""
    return name if rules is NameRules.AS_WRITTEN else name_key(name)


def clash(name: str, others: Iterable[str], rules: NameRules) -> tuple[Clash, str] | None:
    """The first of ``others`` (a table's names) that ``name`` may not sit beside, and why:
    the same name first, else (``NameRules.IDENTIFIER``) a look-alike."""
    others = list(others)
    key = compared_as(name, rules)
    same = next((o for o in others if compared_as(o, rules) == key), None)
    if same is not None:
        return Clash.SAME, same
    if rules is NameRules.IDENTIFIER:
        alike = next((o for o in others if lookalike(name, o)), None)
        if alike is not None:
            return Clash.LOOKALIKE, alike
    return None


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
