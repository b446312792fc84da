"""Read models: ``/games/{id}/scoreboard``, ``/leaderboard``, ``/players/{name}``.

They are served from the projector's read models (``service.store.read_models``), which trail the
log by the projection lag. Every response carries ``as_of``: the read-model generation and, per
partition, the id of the last log entry applied (``positions``); the figures include at least
every event up to those positions.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from flask import Flask, current_app, has_app_context, request
from flask_smorest import Blueprint
from prometheus_client.core import GaugeMetricFamily

from projections.leaderboard import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    BadQuery,
    page,
    parse_limit,
    parse_order,
)
from projections.scoreboard import Scoreboard
from projections.stats import FIGURES
from service import metrics
from service.api.common import json_response, service
from service.api.problems import CATALOGUE, Problem, ProblemType, documented
from service.api.schemas import LeaderboardSchema, PlayerSchema, ScoreboardSchema
from service.app.projector import Projector
from service.app.transparency import Appender
from service.store.read_models import AsOf, Checkpoint, ProjectionStore

log = logging.getLogger(__name__)

blp = Blueprint(
    "projections",
    __name__,
    url_prefix="/api/v1",
    description="Scoreboards, the leaderboard and player statistics (folded from the log)",
)

MAX_RECENT = 50
DEFAULT_RECENT = 10

for _problem in (
    ProblemType(
        "invalid-sort",
        400,
        "Unknown sort",
        f"Sort the leaderboard by one of: {', '.join(FIGURES)}.",
    ),
    ProblemType("invalid-order", 400, "Unknown order", "order is 'asc' or 'desc'."),
    ProblemType(
        "invalid-limit", 400, "Invalid limit", f"limit is an integer from 1 to {MAX_LIMIT}."
    ),
    ProblemType("player-not-found", 404, "No such player", "No game has counted this player."),
    ProblemType(
        "scoreboard-not-ready",
        404,
        "Scoreboard not ready",
        "The game exists but the projector has not reached it yet; retry shortly.",
    ),
):
    CATALOGUE.setdefault(_problem.code, _problem)


def projections() -> ProjectionStore:
    """The app's ProjectionStore, on the game service's event store."""
    found = current_app.extensions.get("hearts.projections")
    if found is None:
        settings = current_app.extensions["hearts.settings"]
        found = ProjectionStore(service().store, settings.count_arranged_games)
        current_app.extensions["hearts.projections"] = found
    return found


def start_in_process_projector(app: Flask) -> threading.Thread:
    """With fakeredis no other process can reach the data: project in a daemon thread of the
    app (``create_app`` starts it when ``Settings.projector_in_process``)."""
    settings = app.extensions["hearts.settings"]
    store = ProjectionStore(app.extensions["hearts"].store, settings.count_arranged_games)
    app.extensions["hearts.projections"] = store
    # Not blocking: fakeredis's blocking XREADGROUP spins, holding a gevent worker's only thread.
    public_log = app.extensions["hearts.log"]
    projector = Projector(
        store,
        consumer="in-process",
        blocking=False,
        public_log=Appender(public_log.store, public_log.origin),
    )
    stop = threading.Event()
    app.extensions["hearts.projector_stop"] = stop  # set it to stop the thread
    app.extensions["hearts.projector"] = projector
    thread = threading.Thread(
        target=_run_supervised, args=(projector, stop), name="projector", daemon=True
    )
    thread.start()
    return thread


def _run_supervised(projector: Projector, stop: threading.Event) -> None:
    """The in-process projector's thread: ``run`` again (with back-off) if it ever fails, as
    ``hearts serve`` restarts a projector process (Redis unreachable is waited out inside)."""
    delay = 0.5
    while not stop.is_set():
        try:
            projector.run(stop)
            return
        except Exception:
            log.exception("in-process projector failed; restarting in %.1f s", delay)
            stop.wait(delay)
            delay = min(delay * 2, 30.0)


def _figure_docs() -> str:
    return ", ".join(f"{f.name} (best: {f.better})" for f in FIGURES.values())


@blp.route("/games/<game_id>/scoreboard", methods=["GET"])
@blp.doc(operationId="getScoreboard")
@blp.response(200, ScoreboardSchema, description="Hand by hand, running totals, standings")
@documented(blp, 404)
def scoreboard(game_id: str):
    """A game's scoreboard: each hand's pass, points taken, moon or sun, score changes and
    running totals; the standings and winners."""
    store = projections()
    generation = store.current_generation()
    found = None
    if generation is not None:
        found = _scoreboard_with_checkpoint(store, generation, game_id)
    if found is None:
        if not store.store.exists(game_id):
            raise Problem("game-not-found", f"no game {game_id!r}", status=404)
        raise Problem(
            "scoreboard-not-ready",
            f"game {game_id!r} is not projected yet",
            status=404,
            headers={"Retry-After": "1"},
        )
    board, checkpoint = found
    body = board.to_dict()
    body["as_of"] = {
        "generation": generation,
        "partition": checkpoint.partition,
        "position": checkpoint.position,
        "seq": board.seq,
    }
    return json_response(body)


def _scoreboard_with_checkpoint(
    store: ProjectionStore, generation: str, game_id: str
) -> tuple[Scoreboard, Checkpoint] | None:
    # Checkpoint first: the board read after it is at least as current as the position.
    partition = store.store.partition_of(game_id)
    checkpoint = store.checkpoint(generation, partition)
    board = store.scoreboard(game_id, generation)
    return (board, checkpoint) if board is not None else None


@blp.route("/leaderboard", methods=["GET"])
@blp.doc(operationId="getLeaderboard")
@blp.doc(
    parameters=[
        {
            "in": "query",
            "name": "sort",
            "schema": {"type": "string", "enum": list(FIGURES), "default": "wins"},
            "description": f"The figure to rank by: {_figure_docs()}.",
        },
        {
            "in": "query",
            "name": "order",
            "schema": {"type": "string", "enum": ["asc", "desc"]},
            "description": "Default: the figure's best end first.",
        },
        {
            "in": "query",
            "name": "limit",
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
            "description": f"Rows per page (default {DEFAULT_LIMIT}).",
        },
        {
            "in": "query",
            "name": "cursor",
            "schema": {"type": "string"},
            "description": "next_cursor of the previous page (same sort and order).",
        },
    ],
)
@blp.response(200, LeaderboardSchema)
@documented(blp, 400)
def leaderboard():
    """Players ranked by one figure, paginated with an opaque cursor."""
    args = request.args
    try:
        order = parse_order(args.get("sort"), args.get("order"))
        limit = parse_limit(args.get("limit"))
        cursor = args.get("cursor")
        store = projections()
        as_of = store.as_of()
        rows = page(store.players(as_of).values(), order, limit, cursor or None)
    except BadQuery as error:
        raise Problem(error.code, error.detail, status=400) from None
    return json_response(
        {
            "sort": order.sort,
            "order": order.direction,
            "players": [
                {"rank": rows.start + i + 1, **p.to_dict()} for i, p in enumerate(rows.rows)
            ],
            "total": rows.total,
            "next_cursor": rows.next_cursor,
            "as_of": as_of.to_dict(),
        }
    )


@blp.route("/players/<path:name>", methods=["GET"])
@blp.doc(operationId="getPlayer")
@blp.doc(
    parameters=[
        {
            "in": "query",
            "name": "recent",
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_RECENT},
            "description": f"How many recent games to list (default {DEFAULT_RECENT}).",
        }
    ],
)
@blp.response(200, PlayerSchema)
@documented(blp, 400, 404)
def player(name: str):
    """A player's figures and most recently started games (bots under their strategy name)."""
    recent = _recent_limit(request.args.get("recent"))
    store = projections()
    as_of = store.as_of()
    stats = store.player(name, as_of.generation) if as_of.generation is not None else None
    if stats is None:
        raise Problem("player-not-found", f"no games counted for player {name!r}", status=404)
    games = store.recent_games(name, as_of.generation, recent)  # type: ignore[arg-type]
    body = stats.to_dict()
    body["recent_games"] = [_recent_game(g.game_id, g.board, name) for g in games]
    body["as_of"] = as_of.to_dict()
    return json_response(body)


def _recent_limit(raw: str | None) -> int:
    if raw is None or raw == "":
        return DEFAULT_RECENT
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_RECENT:
        raise Problem(
            "invalid-limit", f"recent is an integer from 1 to {MAX_RECENT}, not {raw!r}", status=400
        )
    return int(raw)


def _recent_game(game_id: str, board: Scoreboard | None, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"game_id": game_id}
    if board is None:
        return out
    out.update(
        status=board.status,
        hands=sum(1 for h in board.hands if h.scored),
        started_at=board.started_at,
        finished_at=board.finished_at,
        # A name may hold several seats of one game (bots often do): each seat's result.
        seats=[
            {"seat": s.seat, "total": s.total, "rank": s.rank, "winner": s.winner}
            for s in sorted(board.standings, key=lambda s: s.seat)
            if s.name == name
        ],
    )
    return out


# /metrics: the projection lag, read at scrape time ----------------------------------------------


def _lag_metrics():
    if not has_app_context() or "hearts" not in current_app.extensions:
        return
    try:
        as_of: AsOf = projections().as_of()
    except Exception:  # Redis down: /metrics still answers, without these figures
        return
    per_partition = GaugeMetricFamily(
        "hearts_projection_lag_events",
        "Log entries the current read models have not applied yet, per partition.",
        labels=["partition"],
    )
    for checkpoint, length in zip(as_of.checkpoints, as_of.log_lengths, strict=True):
        per_partition.add_metric([str(checkpoint.partition)], max(0, length - checkpoint.applied))
    yield per_partition
    yield GaugeMetricFamily(
        "hearts_projection_lag",
        "Log entries (all partitions) the current read models have not applied yet.",
        value=as_of.lag,
    )


metrics.register_collector(_lag_metrics)
