"""The HTTP API: blueprints under /api/v1, plus /healthz, /metrics and /problems at the root."""

from __future__ import annotations

from flask import Flask
from flask_smorest import Api

from . import (
    analysis,
    challenges,
    commands,
    games,
    health,
    players,
    projections,
    replay,
    seats,
    seeks,
    tournaments,
    transparency,
)


def register(app: Flask, api: Api) -> None:
    for module in (
        games,
        seats,
        commands,
        players,
        seeks,
        challenges,
        projections,
        replay,
        analysis,
        transparency,
        tournaments,
    ):
        api.register_blueprint(module.blp)
    app.register_blueprint(health.bp)
