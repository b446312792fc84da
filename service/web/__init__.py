"""The web table: a static browser client (plain ES modules, no build step) served at ``/``.

Its files are under ``/web/`` (the app's own ``/static/`` route would shadow a blueprint's).

It talks to the service only through the public HTTP API and its event stream, so it is also
the reference client for integrators (see ``static/api.js``)."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory

from service.web.docs import bp as api_reference

STATIC = Path(__file__).parent / "static"

bp = Blueprint("web", __name__, static_folder=str(STATIC), static_url_path="/web")
bp.register_blueprint(api_reference)  # /api/v1/docs: Swagger UI from our own files (docs.py)


@bp.route("/", methods=["GET"])
def index() -> Response:
    # The page routes itself by URL fragment (#/game/ID, #/replay/ID/N, ...): one document.
    response = send_from_directory(STATIC, "index.html")
    response.headers["Cache-Control"] = "no-cache"
    return response
