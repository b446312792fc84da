"""Text that is safe to print: one helper for every text the CLI or a ``format=text`` answer
shows (hands, summaries, exports, audits).

A stored name, a seed or anything else a client once sent may hold control characters (ANSI and
OSC escape sequences that clear or retitle a terminal, CR/LF that forge lines) or invisible ones
(bidi overrides that reorder a line, zero-width characters). Names are checked since issue 22
(domain/names.py), but a game stored before then, or a seed, still holds what it was sent: so
every such text is escaped when printed, whatever it is.
"""

from __future__ import annotations

import json
from typing import Any


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` with every character Python's Unicode database calls non-printable (controls,
    format characters such as bidi overrides and zero-width spaces, line and paragraph
    separators, surrogates, private-use and unassigned code points; ASCII space stays) written
    as an escape such as ``\\x1b`` or ``\\u202e``. ``keep``: characters left as they are (the
    ``\\n`` between the lines of a whole report)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escape(c) for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def json_text(document: Any, indent: int | None = 1) -> str:
    """``document`` as JSON that keeps readable non-ASCII text (names in any script) yet holds
    no character a terminal would act on: those become JSON escapes (``\\u202e``), so the
    document reads back the same."""
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\n" else _json_escape(c) for c in text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON writes characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
