"""The API's interactive reference at ``/api/v1/docs``: Swagger UI, served by the service itself.

Its built files come from a pinned PyPI package (``flask-swagger-ui``, whose version is Swagger
UI's), so the page works without internet and loads nothing from another host (issue 18). The
page (``static/docs.html``) and its start-up script (``static/docs.js``) are our own files: no
inline script or style, so it runs under the Content-Security-Policy
(``service/api/security_headers.py``). flask-smorest's own docs page (a CDN and an inline
script) is not used (no ``OPENAPI_SWAGGER_UI_*`` settings in ``create_app``)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from flask import Blueprint, Response, send_from_directory

STATIC = Path(__file__).parent / "static"
# Only the package's files are used, not its blueprint (whose page has an inline script).
SWAGGER_UI = Path(str(files("flask_swagger_ui") / "dist"))
PREFIX = "/api/v1/docs"

bp = Blueprint("api_reference", __name__)


@bp.route(PREFIX, methods=["GET"])
def page() -> Response:
    response = send_from_directory(STATIC, "docs.html")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.route(f"{PREFIX}/", methods=["GET"])
def page_with_slash() -> Response:
    """The page's address as people type it: sent to the one without the slash (the page's
    relative links are from there), with no body (werkzeug's redirect writes HTML)."""
    return Response(status=308, headers={"Location": PREFIX, "Cache-Control": "no-cache"})


@bp.route(f"{PREFIX}/swagger-ui/<path:filename>", methods=["GET"])
def swagger_ui(filename: str) -> Response:
    return send_from_directory(SWAGGER_UI, filename)
