"""Read models: ``/games/{id}/scoreboard``, ``/leaderboard``, ``/players/{name}``,
``/ratings/{player_id}``.

A leaderboard row or a player's figures are a registered player's (``kind`` ``player``, with its
``player_id``: the seats it joined with its key), a guest's (``guest``: seats joined under a typed
name, without a key) or a bot strategy's (``bot``). A guest who typed a registered player's name
(before the name was registered) has a row of its own.

They are served from the projector's read models (``service.store.read_models``), which trail the
log by the projection lag. Every response carries ``as_of``: the read-model generation and, per
partition, the id of the last log entry applied (``positions``); the figures include at least
every event up to those positions.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
from typing import Any

from flask import Flask, current_app, has_app_context, request
from flask_smorest import Blueprint
from prometheus_client.core import GaugeMetricFamily

from bots import bot_names
from domain.names import InvalidNameText, display_name, name_key
from projections.leaderboard import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    BadQuery,
    page,
    parse_limit,
    parse_order,
)
from projections.ratings import PlayerRating
from projections.scoreboard import Scoreboard
from projections.standings import MAX_GAMES, MAX_GROUP, group_games, standings
from projections.stats import FIGURES, PlayerStats, who
from service import metrics
from service.api.common import json_response, service
from service.api.problems import CATALOGUE, Problem, ProblemType, documented
from service.api.rate_limits import rate_limited
from service.api.schemas import (
    GroupStandingsSchema,
    LeaderboardSchema,
    PlayerRatingsSchema,
    PlayerSchema,
    ScoreboardSchema,
)
from service.app.archiver import archived_scoreboard
from service.app.errors import CorruptGame
from service.app.players import PlayerService
from service.app.projector import Projector
from service.app.ratings import RatingBook
from service.app.transparency import Appender
from service.store.blobs import BlobStoreError
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
MAX_GROUP_QUERY = 1000  # characters of the players parameter

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
    ProblemType(
        "player-not-found",
        404,
        "No such player",
        "No game has counted this player (or no player is registered under this id).",
    ),
    ProblemType(
        "invalid-group",
        400,
        "Invalid group",
        f"players names 2 to {MAX_GROUP} different players, separated by commas.",
    ),
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


def rating_book() -> RatingBook:
    """The app's ratings (matchmaking asks it for a player's conservative rating)."""
    found = current_app.extensions.get("hearts.ratings")
    if found is None:
        found = RatingBook(projections())
        current_app.extensions["hearts.ratings"] = found
    return found


def _accounts():
    players: PlayerService = current_app.extensions["hearts.players"]
    return players.accounts


def _with_ratings(
    players: dict[str, PlayerStats], ratings: dict[str, PlayerRating]
) -> list[PlayerStats]:
    out = []
    for stats in players.values():
        player_id = stats.player_id
        rating = ratings.get(player_id) if player_id is not None else None
        out.append(dataclasses.replace(stats, rating=rating) if rating is not None else stats)
    return out


def _kind(stats: PlayerStats) -> str:
    if stats.player_id is not None:
        return "player"
    return "bot" if stats.name in bot_names() else "guest"


def _row(stats: PlayerStats, names: dict[str, str]) -> dict[str, Any]:
    """A player's figures as shown: the registered name for a player's who."""
    body = stats.to_dict()
    player_id = stats.player_id
    body["name"] = names.get(player_id, "") if player_id is not None else stats.name
    body["player_id"] = player_id
    body["kind"] = _kind(stats)
    return body


def start_in_process_projector(app: Flask) -> threading.Thread:
    """Project in a daemon thread of the app (``create_app`` starts it when
    ``Settings.projector_in_process``): with fakeredis no other process can reach the data."""
    settings = app.extensions["hearts.settings"]
    store = ProjectionStore(app.extensions["hearts"].store, settings.count_arranged_games)
    app.extensions["hearts.projections"] = store
    # Blocking on a real Redis (an idle one costs nothing); polling fakeredis (Projector).
    public_log = app.extensions["hearts.log"]
    projector = Projector(
        store,
        consumer="in-process",
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
    return ", ".join(f"{name} (best: {f.better})" for name, f in FIGURES.items())


@blp.route("/games/<game_id>/scoreboard", methods=["GET"])
@blp.doc(operationId="getScoreboard")
@blp.response(200, ScoreboardSchema, description="Hand by hand, running totals, standings")
@documented(blp, 404, 409)  # 409 corrupt-game: an archived game's log, folded when read
def scoreboard(game_id: str):
    """A game's scoreboard: each hand's pass, points taken, moon or sun, score changes and
    running totals; the standings and winners."""
    store = projections()
    generation = store.current_generation()
    found = None
    if generation is not None:
        found = _scoreboard_with_checkpoint(store, generation, game_id)
        if found is None:  # an archived game's board is folded from the archive
            board = archived_scoreboard(store, game_id)
            if board is not None:
                found = board, store.checkpoint(generation, store.store.partition_of(game_id))
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
            "schema": {"type": "string", "enum": list(FIGURES), "default": "rating"},
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
    """Players ranked by one figure (by default the conservative rating, mu - 3 sigma, of
    established players only: a provisional or no rating has no row in that ranking),
    paginated with an opaque cursor. Registered players, guests and bots each have their own
    rows (``kind``)."""
    args = request.args
    try:
        order = parse_order(args.get("sort"), args.get("order"))
        limit = parse_limit(args.get("limit"))
        cursor = args.get("cursor")
        store = projections()
        as_of = store.as_of()
        players = _with_ratings(store.players(as_of), store.ratings(as_of))
        rows = page(players, order, limit, cursor or None)
    except BadQuery as error:
        raise Problem(error.code, error.detail, status=400) from None
    names = _accounts().names([p.player_id for p in rows.rows if p.player_id is not None])
    return json_response(
        {
            "sort": order.sort,
            "order": order.direction,
            "players": [
                {"rank": rows.start + i + 1, **_row(p, names)} for i, p in enumerate(rows.rows)
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
    """A player's figures and most recently started games (bots under their strategy name).
    A registered player's name gives the registered player's figures (the seats it joined with
    its key), with its rating."""
    recent = _recent_limit(request.args.get("recent"))
    store = projections()
    as_of = store.as_of()
    player_id = _registered(name)
    key = who(name, player_id)
    stats = store.player(key, as_of.generation) if as_of.generation is not None else None
    if stats is None:
        raise Problem("player-not-found", f"no games counted for player {name!r}", status=404)
    if player_id is not None:
        stats = dataclasses.replace(stats, rating=store.ratings(as_of).get(player_id))
    games = store.recent_games(key, as_of.generation, recent)  # type: ignore[arg-type]
    names = _accounts().names([player_id]) if player_id is not None else {}
    body = _row(stats, names)
    body["recent_games"] = [
        _recent_game(g.game_id, g.board or _archived_board(store, g.game_id), key) for g in games
    ]
    body["as_of"] = as_of.to_dict()
    return json_response(body)


def _registered(name: str) -> str | None:
    """The id of the registered player holding ``name`` (in any spelling), if any."""
    try:
        compared = name_key(display_name(name))
    except InvalidNameText:
        return None
    return _accounts().holder_of(compared)


_PLAYER_ID = re.compile(r"p[0-9a-f]{20}")


@blp.route("/ratings/<player_id>", methods=["GET"])
@blp.doc(operationId="getPlayerRatings")
@blp.response(200, PlayerRatingsSchema)
@documented(blp, 404)
def player_ratings(player_id: str):
    """A registered player's rating (OpenSkill Bradley-Terry; ``rating`` is mu - 3 sigma) and
    its history, one point per rated game that counted for it, oldest first. A game is rated
    when every seat was joined with a registered player's key, its score limit is at least the
    rated minimum, and it was neither arranged nor imported; a seat handed to a bot is ranked
    last; ``provisional`` until enough games against enough opponents (docs/projections.md)."""
    names = _accounts().names([player_id]) if _PLAYER_ID.fullmatch(player_id) else {}
    if player_id not in names:
        raise Problem("player-not-found", f"no registered player {player_id!r}", status=404)
    store = projections()
    as_of = store.as_of()
    found = store.ratings(as_of).get(player_id)
    body: dict[str, Any] = {
        "player_id": player_id,
        "name": names[player_id],
        # A player flagged before any game counted for it has evidence but no rating yet.
        "rating": found.rating if found is not None and found.games else None,
        "mu": found.mu if found is not None and found.games else None,
        "sigma": found.sigma if found is not None and found.games else None,
        "rated_games": found.games if found is not None else 0,
        "rated_opponents": found.opponents if found is not None else 0,
        "weighted_games": found.weight if found is not None else 0.0,
        "provisional": found.provisional if found is not None else True,
        "flagged": found is not None and found.flagged is not None,
        "history": [
            {
                "game_id": point.game_id,
                "finished_at": point.finished_at,
                "rating": point.rating,
                "mu": point.mu,
                "sigma": point.sigma,
                "rank": point.rank,
                "players": point.players,
                "left": point.left,
                "weight": point.weight,
            }
            for point in (found.history if found is not None else ())
        ],
        "as_of": as_of.to_dict(),
    }
    return json_response(body)


def _recent_limit(raw: str | None) -> int:
    if raw is None or raw == "":
        return DEFAULT_RECENT
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_RECENT:
        raise Problem(
            "invalid-limit", f"recent is an integer from 1 to {MAX_RECENT}, not {raw!r}", status=400
        )
    return int(raw)


def _archived_board(store: ProjectionStore, game_id: str) -> Scoreboard | None:
    """An archived game's board (its read model left Redis with it), folded from the archive
    as ``GET /games/{id}/scoreboard`` folds it; None if it is not archived, or if the archive
    store cannot be reached now, or its archived object is damaged (the game is then listed by
    its id alone, not the page failed whole: as GET /games lists what it can)."""
    try:
        return archived_scoreboard(store, game_id)
    except CorruptGame:  # its own GET /games/{id} answers the 409 corrupt-game
        return None
    except BlobStoreError:  # the store's guard logs the outage, once
        return None


@blp.route("/standings", methods=["GET"])
@blp.doc(operationId="getGroupStandings")
@blp.doc(
    parameters=[
        {
            "in": "query",
            "name": "players",
            "required": True,
            "schema": {"type": "string", "maxLength": MAX_GROUP_QUERY},
            "description": f"2 to {MAX_GROUP} player names (a registered name in any spelling, "
            "or a guest's name), separated by commas.",
        }
    ],
)
@blp.response(200, GroupStandingsSchema)
@documented(blp, 400, 409)
@rate_limited(blp, "long_reads")  # up to 8 x 200 boards, some read from the archive
def group_standings():
    """A group's standings: over the finished games whose every seat was one of the named
    players (each member's most recent games, at most 200 each, are read), each member's
    games, wins and average final points, and the rating of each registered member, a
    provisional one marked as such (docs/projections.md, "A group's standings")."""
    raw = request.args.get("players")
    names = _group(raw)
    store = projections()
    as_of = store.as_of()
    ids = [_registered(name) for name in names]
    whos = [who(name, player_id) for name, player_id in zip(names, ids, strict=True)]
    if len(set(whos)) != len(whos):
        raise Problem("invalid-group", "the players name the same player twice", status=400)
    boards: list[Scoreboard] = []
    if as_of.generation is not None:
        for key in whos:
            for game in store.recent_games(key, as_of.generation, MAX_GAMES):
                board = game.board or _archived_board(store, game.game_id)
                if board is not None:
                    boards.append(board)
    games = group_games(boards, whos)
    ratings = store.ratings(as_of) if as_of.generation is not None else {}
    registered = _accounts().names([p for p in ids if p is not None])
    by_who = dict(zip(whos, zip(names, ids, strict=True), strict=True))
    rows = []
    for row in standings(games, whos):
        name, player_id = by_who[row.who]
        found = ratings.get(player_id) if player_id is not None else None
        rated = found is not None and found.games > 0
        rows.append(
            {
                "name": registered.get(player_id, name) if player_id is not None else name,
                "player_id": player_id,
                "games": row.games,
                "wins": row.wins,
                "average_points": row.average_points,
                "rating": found.rating if rated else None,
                "provisional": found.provisional if found is not None else True,
            }
        )
    return json_response({"players": rows, "games": len(games), "as_of": as_of.to_dict()})


def _group(raw: str | None) -> list[str]:
    """The group's names: 2 to MAX_GROUP, none empty."""
    if raw is None or len(raw) > MAX_GROUP_QUERY:
        raise Problem(
            "invalid-group",
            f"players is required, at most {MAX_GROUP_QUERY} characters",
            status=400,
        )
    names = [name.strip() for name in raw.split(",")]
    if not 2 <= len(names) <= MAX_GROUP or not all(names):
        raise Problem(
            "invalid-group",
            f"players names 2 to {MAX_GROUP} players separated by commas, none empty",
            status=400,
        )
    return names


def _recent_game(game_id: str, board: Scoreboard | None, key: str) -> dict[str, Any]:
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
            if board.seats[s.seat].who == key
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
