"""gunicorn's own refusals as RFC 9457 problems, and the bounds it refuses by.

gunicorn answers a request it cannot parse (a request line past ``limit_request_line``: 414;
header fields past their count or size: 431; a malformed line or header: 400) itself, before
the app sees it, with an HTML page. ``post_worker_init`` (a gunicorn server hook) makes each
worker write those answers as ``application/problem+json`` with the same types the app uses
(``service/api/hygiene.py`` refuses the same bounds itself, so both agree). The detail is the
catalogue's, never gunicorn's message: that message may quote what the client sent.

This module stays light: ``hearts serve`` imports it in the master, before the metrics
directory's users (the app) are imported.
"""

from __future__ import annotations

import json
from typing import Any

# The bounds, as gunicorn options: its largest request line, its default header count and size.
# service/api/hygiene.py's MAX_REQUEST_LINE, MAX_HEADERS and MAX_HEADER_BYTES are the same
# (tests/security/test_input_hygiene.py holds them equal).
LIMITS: dict[str, int] = {
    "limit_request_line": 8190,
    "limit_request_fields": 100,
    "limit_request_field_size": 8190,
}

_CODES = {414: "uri-too-long", 431: "headers-too-large", 403: "forbidden", 400: "bad-request"}


def problem_bytes(status: int, reason: str) -> bytes:
    """The whole HTTP answer (head and problem body) for a refusal gunicorn makes itself."""
    from service.api.problems import CATALOGUE  # the worker has it loaded by now

    code = _CODES.get(status, "internal-error" if status >= 500 else "bad-request")
    known = CATALOGUE.get(code)
    body = json.dumps(
        {
            "type": f"/problems/{code}",
            "title": known.title if known else reason,
            "status": status,
            "detail": (known.description or known.title) if known else reason,
            "code": code,
        }
    ).encode()
    from service.api.security_headers import HEADERS  # the same headers as every app answer

    security = "".join(f"{name}: {value}\r\n" for name, value in HEADERS.items())
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/problem+json\r\n"
        f"{security}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def _write_problem(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    from gunicorn import util

    util.write_nonblock(sock, problem_bytes(int(status_int), reason))


def post_worker_init(worker: Any) -> None:
    """gunicorn server hook: this worker's refusals are problems (``util.write_error`` is the
    one function its workers answer them with)."""
    from gunicorn import util

    util.write_error = _write_problem
