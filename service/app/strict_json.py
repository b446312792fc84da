"""JSON as every reader reads it (RFC 8259 and I-JSON, RFC 7493), for what others hand us: a
request body (service/api/hygiene.py), an export given to ``hearts audit`` or ``hearts import``.

Python's parser takes more than that: ``NaN`` and ``Infinity`` (not JSON), numbers past a
double's range (``1e999`` becomes infinity), and a name twice in one object, of which it keeps
the last while other readers keep the first: ``{"card": "AS", "card": "2C"}`` is the 2C to us and
may be the AS to a proxy, a log or another auditor. Each is refused, never guessed at.
(``hearts-verify``, in the client package, which uses no server code, reads its files the same
way: clients/python/src/hearts_client/verify.py.)
"""

from __future__ import annotations

import json
import math
from typing import Any


class AmbiguousJson(ValueError):
    """Parsed by Python's json, but not JSON that every reader reads alike."""


def loads(data: str | bytes) -> Any:
    """``json.loads``, refusing what readers may read apart (``AmbiguousJson``); malformed JSON
    raises ``ValueError`` as ``json.loads`` does."""
    return json.loads(
        data, parse_constant=_not_json, parse_float=_finite, object_pairs_hook=_object
    )


def _not_json(constant: str) -> Any:
    raise AmbiguousJson(f"{constant} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # 1e999: JSON, but past every double (RFC 7493, 2.2)
        raise AmbiguousJson(f"{text[:40]} is past the range of a JSON number")
    return number


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                shown = json.dumps(name[:40])  # escaped, and short: it is someone else's text
                raise AmbiguousJson(f"the name {shown} appears twice in one object")
            seen.add(name)
    return members
