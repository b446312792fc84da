"""Security headers on every answer of the app: the web table's pages and files, the API docs
and the API itself (issue 22).

The Content-Security-Policy is the second wall behind the web table's rendering (data is
always text, ``service/web/static/ui.js``): should markup ever slip through, the browser still
runs no script and loads nothing that is not the service's own file. So the pages carry no
inline script, inline style or style attribute (none of them may run under this policy), and
the API docs page is the service's own files too (``service/web/docs.py``). ``img-src`` also
allows ``data:`` images: Swagger UI's stylesheet draws its icons with them, and an image cannot
run script. Headers a view set itself are kept (``setdefault``)."""

from __future__ import annotations

from flask import Flask, Response

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'self'",
    )
)

HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # For browsers older than CSP's frame-ancestors: the pages are never framed either way.
    "X-Frame-Options": "DENY",
}


def _secure(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def add_security_headers(app: Flask) -> None:
    """Adds the headers to every response of ``app`` (after_request: pages, static files, API
    answers and problems alike)."""
    app.after_request(_secure)
