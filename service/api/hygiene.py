"""Input hygiene, in one place: what every request must be before any view reads it.

- The head: a request line (the URI) and headers within the bounds gunicorn also enforces in
  front (``service/cli/serve.py``), answered as problems here so that the app alone (tests,
  another WSGI server) refuses them the same documented way: 414 ``uri-too-long``, 431
  ``headers-too-large``.
- A JSON body: nested at most ``MAX_JSON_DEPTH`` deep, checked by a scan of the raw bytes
  *before* ``json.loads`` (which recurses once per level and would raise RecursionError near
  1,000), 400 ``json-too-deep``; and every string in it (keys too) valid Unicode scalar values:
  JSON may write a lone surrogate as ``"\\ud800"``, which no encoder can store, 422
  ``invalid-unicode`` naming the field. And JSON as RFC 8259 and I-JSON (RFC 7493) have it, not
  as Python's parser takes it (service/app/strict_json.py), 400 ``malformed-json``: no ``NaN``
  or ``Infinity``, no number past a double's range, no name twice in one object.

Query strings, paths and headers need no surrogate check: werkzeug decodes them from bytes
(invalid UTF-8 becomes U+FFFD), so only a JSON escape can make a surrogate.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from flask import request

from service.api.problems import Problem
from service.app import strict_json

MAX_JSON_DEPTH = 32  # our deepest body (an export) nests 6 levels
# gunicorn's own bounds (its maximum request line, its default header size and count): the app
# refuses the same requests itself, as problems, whoever serves it.
MAX_REQUEST_LINE = 8190
MAX_HEADER_BYTES = 8190
MAX_HEADERS = 100

# A JSON string, escapes included; possessive, and ending at the end of the body if unterminated,
# so the scan stays linear on any input (no backtracking, no quadratic restarts).
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def check_head() -> None:
    """414 if the request line is longer than gunicorn would take; 431 for too many or too
    large header fields."""
    environ = request.environ
    uri = (
        environ.get("RAW_URI") or environ.get("REQUEST_URI") or quote(environ.get("PATH_INFO", ""))
    )
    query = environ.get("QUERY_STRING", "")
    if query and "?" not in uri:  # some servers (werkzeug's test client) leave the query out
        uri = f"{uri}?{query}"
    line = len(request.method) + 1 + len(uri) + len(" HTTP/1.1")
    if line > MAX_REQUEST_LINE:
        raise Problem(
            "uri-too-long",
            f"the request line is {line} bytes; at most {MAX_REQUEST_LINE} are read",
            status=414,
        )
    if len(request.headers) > MAX_HEADERS:
        raise Problem(
            "headers-too-large", f"at most {MAX_HEADERS} header fields are read", status=431
        )
    for name, value in request.headers.items():
        if len(name) + 2 + len(value) > MAX_HEADER_BYTES:
            raise Problem(
                "headers-too-large",
                f"header {name[:64]} is longer than {MAX_HEADER_BYTES} bytes",
                status=431,
            )


def json_depth(data: bytes, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep ``data``'s arrays and objects nest, counted up to ``limit + 1`` (enough to
    refuse): brackets inside strings do not count."""
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKET)
    depth = deepest = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def load_json(data: bytes) -> Any:
    """The body parsed, or the problem that refuses it (400 malformed or too deep, 422 a string
    that is not Unicode)."""
    if json_depth(data) > MAX_JSON_DEPTH:
        raise Problem(
            "json-too-deep",
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels is not read",
            status=400,
        )
    try:
        body = strict_json.loads(data)
    except strict_json.AmbiguousJson as error:
        raise Problem(
            "malformed-json", f"the body is not valid JSON: {error}", status=400
        ) from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise Problem("malformed-json", "the body is not valid JSON", status=400) from None
    if _SURROGATE_ESCAPE.search(data):  # only an escape can spell a surrogate: else nothing to do
        bad = not_unicode(body)
        if bad:
            raise Problem(
                "invalid-unicode",
                "a string is not valid Unicode (a lone surrogate such as \\ud800)",
                status=422,
                errors={path: ["not valid Unicode text: a lone surrogate"] for path in bad},
            )
    return body


def not_unicode(body: Any) -> list[str]:
    """The paths (``rules.pass_cycle.2``, ``seed``) of strings holding a lone surrogate; a key
    that holds one is named by its escaped form."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [("", body)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if _has_surrogate(value):
                found.append(path or "_schema")
        elif isinstance(value, dict):
            for key, item in value.items():
                name = key
                if _has_surrogate(key):
                    name = key.encode("utf-8", "backslashreplace").decode()
                    found.append(_join(path, name))
                stack.append((_join(path, name), item))
        elif isinstance(value, list):
            stack.extend((_join(path, str(i)), item) for i, item in enumerate(value))
    return sorted(found)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
