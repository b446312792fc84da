"""``/tournaments``: duplicate tournaments (docs/tournaments.md).

Use cases are ``service/app/tournaments.py``'s; a player acts with its key
(``Authorization: Bearer hp_...``). Reads take any progress step due (``TournamentService.get``)
and show nothing of a round before it has ended: no result, seed, standing or board. The game
reads of a table game of a round still in play are refused to all but its own seats by
``guard_game_reads``, which the app runs before every request.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

from flask import Flask, current_app, request
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from domain.tournament import arena as arena_rules
from domain.tournament.decider import (
    MAX_BOARDS,
    MAX_PLAYERS,
    MAX_ROUNDS,
    MIN_PLAYERS,
    Status,
    Tournament,
)
from domain.tournament.errors import TournamentStepRefused
from domain.tournament.events import Format
from domain.tournament.matchpoints import half_matchpoints
from projections.tournaments import ended_results, standings_rows
from service.api import storage_costs
from service.api.common import BEARER_DOC, json_response, token
from service.api.event_ids import game_seq
from service.api.players import players
from service.api.problems import BODY, Problem, documented
from service.api.rate_limits import client, rate_limited, spends_storage
from service.api.replay import (
    EVENT_STREAM,
    TEXT,
    StreamHeaders,
    event_stream,
    sse_message,
    wants_stream,
)
from service.api.schemas import EmptySchema
from service.app.arena import games_rows
from service.app.auth import bearer_token
from service.app.live import StreamSlots
from service.app.tournaments import BoardsHidden, Loaded, TournamentService

blp = Blueprint(
    "tournaments", __name__, url_prefix="/api/v1/tournaments", description="Tournaments"
)


def tournaments() -> TournamentService:
    return current_app.extensions["hearts.tournaments"]


# -- schemas ------------------------------------------------------------------------------------


class CreateTournamentSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(1, 80))
    format = fields.String(
        load_default="duplicate", validate=validate.OneOf([f.value for f in Format])
    )
    rounds = fields.Integer(
        load_default=None,
        validate=validate.Range(1, MAX_ROUNDS),
        metadata={"description": "A duplicate's rounds (required for it)"},
    )
    boards = fields.Integer(
        load_default=None,
        validate=validate.Range(1, MAX_BOARDS),
        metadata={
            "description": "A duplicate's boards (hands) per round, required for it: every "
            "table plays the same ones"
        },
    )
    min_players = fields.Integer(
        load_default=8, validate=validate.Range(MIN_PLAYERS, arena_rules.MAX_PLAYERS)
    )
    max_players = fields.Integer(
        load_default=16,
        validate=validate.Range(MIN_PLAYERS, arena_rules.MAX_PLAYERS),
        metadata={
            "description": f"At most {MAX_PLAYERS} (a duplicate), "
            f"{arena_rules.MAX_PLAYERS} (an arena)"
        },
    )
    # An arena's (docs/tournaments.md, "Arena").
    duration_seconds = fields.Integer(
        load_default=None,
        validate=validate.Range(arena_rules.MIN_SECONDS, arena_rules.MAX_SECONDS),
        metadata={"description": "An arena's length: pairing stops after it (required for it)"},
    )
    grace_seconds = fields.Integer(
        load_default=arena_rules.DEFAULT_GRACE_SECONDS,
        validate=validate.Range(0, arena_rules.MAX_GRACE_SECONDS),
        metadata={
            "description": "An arena's grace: a game in play at its end counts if it finishes "
            "within this"
        },
    )
    hands = fields.Integer(
        load_default=1,
        validate=validate.Range(1, arena_rules.MAX_HANDS),
        metadata={"description": "An arena's hands per game: 1 (one-hand games) or a few"},
    )
    rated = fields.Boolean(
        load_default=False,
        metadata={
            "description": "An arena's games rated (they then need a turn clock in rules: "
            "time_control)"
        },
    )
    rules = fields.Dict(
        load_default=None,
        allow_none=True,
        metadata={
            "description": "The tables' rule options (players, hand and score limits "
            "are the tournament's)"
        },
    )
    house_bot = fields.String(
        load_default="heuristic",
        metadata={"description": "The bot that fills short tables (it does not rank)"},
    )


class EnterSchema(Schema):
    stand_in = fields.String(
        load_default=None,
        allow_none=True,
        metadata={"description": "A bot account: this strategy plays every board for you"},
    )


class ListTournamentsSchema(Schema):
    status = fields.String(validate=validate.OneOf([s.value for s in Status]))
    limit = fields.Integer(load_default=20, validate=validate.Range(1, 100))


class TournamentSchema(Schema):
    id = fields.String()
    name = fields.String()
    format = fields.String()
    status = fields.String()
    organiser = fields.String()
    rules = fields.Dict()
    rounds = fields.Integer()
    boards = fields.Integer()
    min_players = fields.Integer()
    max_players = fields.Integer()
    house_bot = fields.String()
    created = fields.String()
    starts_at = fields.String(allow_none=True, metadata={"description": "a scheduled start"})
    current_round = fields.Integer(allow_none=True)
    version = fields.Integer()
    players = fields.List(fields.Dict())
    arena = fields.Dict(
        allow_none=True,
        metadata={"description": "An arena's clock and games (null for a duplicate)"},
    )


class TournamentListSchema(Schema):
    tournaments = fields.List(fields.Nested(TournamentSchema))


class PairingsSchema(Schema):
    rounds = fields.List(fields.Dict())
    games = fields.List(fields.Dict(), metadata={"description": "An arena's games, paired"})


class StandingsSchema(Schema):
    rounds_counted = fields.Integer()
    standings = fields.List(fields.Dict())
    games_counted = fields.Integer(metadata={"description": "An arena's games counted"})
    frozen = fields.Boolean(metadata={"description": "An arena's standings are final"})


class BoardSchema(Schema):
    round = fields.Integer()
    board = fields.Integer()
    tables = fields.List(fields.Dict())


class TournamentExportSchema(Schema):
    format = fields.String()
    tournament_id = fields.String()
    log = fields.List(fields.Dict())
    games = fields.Dict()
    standings = fields.List(fields.Dict())


# -- views --------------------------------------------------------------------------------------


def _summary(loaded: Loaded) -> dict[str, Any]:
    state = loaded.state
    created = state.created
    assert created is not None
    return {
        "id": created.tournament_id,
        "name": created.name,
        "format": created.format.value,
        "status": state.status.value,
        "organiser": created.organiser,
        "rules": created.rules,
        "rounds": created.rounds,
        "boards": created.boards,
        "min_players": created.min_players,
        "max_players": created.max_players,
        "house_bot": created.house_bot,
        "created": created.at,
        "starts_at": created.starts_at,
        "current_round": state.current.number if state.current else None,
        "arena": arena_summary(state),
        "version": loaded.version,
        "players": [
            {
                "id": e.player_id,
                "name": e.name,
                "stand_in": e.stand_in,
                "withdrawn_after": e.withdrawn_after,
            }
            for e in state.entrants
        ],
    }


def arena_summary(state: Tournament) -> dict[str, Any] | None:
    created, arena = state.created, state.arena
    if created is None or created.format is not Format.ARENA:
        return None
    return {
        "hands": created.boards,
        "duration_seconds": created.duration_seconds,
        "grace_seconds": created.grace_seconds,
        "rated": created.rated,
        "starts_at": arena.starts_at if arena else None,
        "ends_at": arena.ends_at if arena else None,
        "closes_at": arena.closes_at if arena else None,
        "games_paired": len(arena.games) if arena else 0,
        "games_in_play": len(arena.in_play) if arena else 0,
        "waiting": len(arena_rules.waiting(state)) if arena else 0,
    }


@blp.route("", methods=["POST"])
@blp.doc(operationId="createTournament", security=BEARER_DOC)
@blp.arguments(CreateTournamentSchema)
@blp.response(201, TournamentSchema)
@documented(blp, *BODY, 401, 403, 404, 409)
@spends_storage(blp, storage_costs.TOURNAMENT)
@rate_limited(blp, "tournament")
def create(body: dict[str, Any]):
    """Create a tournament (registered players only): ``format`` duplicate (``rounds`` and
    ``boards``) or arena (``duration_seconds``, ``hands``, ``grace_seconds``, ``rated``). You
    are its organiser, and start or cancel it. At most a few of yours may be upcoming or
    running at once."""
    player = players().authenticate(token())
    hands = body.pop("hands")
    if body["format"] == Format.ARENA:
        body.update(boards=hands, rounds=0)
    loaded = tournaments().create(player, **body)
    headers = {"Location": f"/api/v1/tournaments/{loaded.state.created.tournament_id}"}  # type: ignore[union-attr]
    return json_response(_summary(loaded), 201, headers=headers)


@blp.route("", methods=["GET"])
@blp.doc(operationId="listTournaments")
@blp.arguments(ListTournamentsSchema, location="query")
@blp.response(200, TournamentListSchema)
@documented(blp, 422)
def list_tournaments(query: dict[str, Any]):
    """Tournaments, newest first: ``status`` upcoming, running, finished or cancelled."""
    found = tournaments().list(query.get("status"), query["limit"])
    return json_response({"tournaments": [_summary(t) for t in found]})


@blp.route("/<tournament_id>", methods=["GET"])
@blp.doc(operationId="getTournament")
@blp.response(200, TournamentSchema)
@documented(blp, 404)
def get(tournament_id: str):
    """The tournament: its settings, players and progress."""
    return json_response(_summary(tournaments().get(tournament_id)))


@blp.route("/<tournament_id>/entries", methods=["POST"])
@blp.doc(operationId="enterTournament", security=BEARER_DOC)
@blp.arguments(EnterSchema)
@blp.response(200, TournamentSchema)
@documented(blp, *BODY, 401, 403, 404, 409)
@spends_storage(blp, storage_costs.ENTRY)
@rate_limited(blp, "account")
def enter(body: dict[str, Any], tournament_id: str):
    """Enter with your key. ``stand_in``: a bot strategy that plays your boards (a bot
    account); without it you play your seats yourself (resume each table's seat with your key:
    ``GET /players/me/games``)."""
    player = players().authenticate(token())
    return json_response(_summary(tournaments().enter(tournament_id, player, body["stand_in"])))


@blp.route("/<tournament_id>/entries/me", methods=["DELETE"])
@blp.doc(operationId="withdrawFromTournament", security=BEARER_DOC)
@blp.response(200, TournamentSchema)
@documented(blp, 401, 403, 404, 409, 422)
@rate_limited(blp, "account")
def withdraw(tournament_id: str):
    """Withdraw: before the start you leave the list; after it, a house bot takes your seat
    from the next round on and you keep the boards you played."""
    player = players().authenticate(token())
    return json_response(_summary(tournaments().withdraw(tournament_id, player)))


@blp.route("/<tournament_id>/start", methods=["POST"])
@blp.doc(operationId="startTournament", security=BEARER_DOC)
@blp.arguments(EmptySchema)
@blp.response(200, TournamentSchema)
@documented(blp, *BODY, 401, 403, 404, 409)
@rate_limited(blp, "account")
def start(body: dict[str, Any], tournament_id: str):
    """The organiser starts it: round 1's seed is committed and its tables are created."""
    player = players().authenticate(token())
    return json_response(_summary(tournaments().start(tournament_id, player)))


@blp.route("/<tournament_id>/cancel", methods=["POST"])
@blp.doc(operationId="cancelTournament", security=BEARER_DOC)
@blp.arguments(EmptySchema)
@blp.response(200, TournamentSchema)
@documented(blp, *BODY, 401, 403, 404, 409)
@rate_limited(blp, "account")
def cancel(body: dict[str, Any], tournament_id: str):
    """The organiser cancels it (games in play are left to finish; no standings follow)."""
    player = players().authenticate(token())
    return json_response(_summary(tournaments().cancel(tournament_id, player, "cancelled")))


@blp.route("/<tournament_id>/pairings", methods=["GET"])
@blp.doc(operationId="getTournamentPairings")
@blp.response(200, PairingsSchema)
@documented(blp, 404)
def pairings(tournament_id: str):
    """A duplicate's rounds started: its seed commitment, and per table the players by seat
    (null: a house bot) and the table's game; a round's seed once it has ended. An arena's
    ``games``: each game paired, its seats, and its result once recorded."""
    state = tournaments().get(tournament_id).state
    if state.arena is not None:
        return json_response({"rounds": [], "games": games_rows(state)})
    rounds = []
    for rnd in state.rounds:
        rounds.append(
            {
                "round": rnd.number,
                "seed_commitment": rnd.seed_commitment,
                "seed": rnd.seed if rnd.ended else None,
                "salt": rnd.salt if rnd.ended else None,
                "ended": rnd.ended,
                "tables": [
                    {"table": t, "seats": list(seats), "game_id": rnd.games[t]}
                    for t, seats in enumerate(rnd.tables)
                ],
            }
        )
    return json_response({"rounds": rounds})


@blp.route("/<tournament_id>/standings", methods=["GET"])
@blp.doc(operationId="getTournamentStandings")
@blp.response(200, StandingsSchema)
@documented(blp, 404)
def get_standings(tournament_id: str):
    """A duplicate's standings by matchpoint percentage over the rounds that have ended
    (docs/tournaments.md says how ties are broken): a round in play counts only once every
    table has finished it. An arena's by points per finishing place over its games counted
    (``frozen`` once it is over)."""
    loaded = tournaments().get(tournament_id)
    state = loaded.state
    projected = tournaments().projected(tournament_id)
    current = projected is not None and projected["version"] == loaded.version
    if state.arena is not None:
        frozen = state.status in (Status.FINISHED, Status.CANCELLED)
        if current:
            counted, rows = projected["games_counted"], projected["standings"]
        else:  # the projector has not folded its last append yet: folded here
            counted = sum(1 for g in state.arena.games if g.counted)
            rows = standings_rows(state)
        body = {"rounds_counted": 0, "games_counted": counted, "frozen": frozen, "standings": rows}
        return json_response(body)
    if current:
        body = {k: projected[k] for k in ("rounds_counted", "standings")}
    else:  # the projector has not folded its last append yet: folded here
        ended = sum(1 for r in state.rounds if r.ended)
        body = {"rounds_counted": ended, "standings": standings_rows(state)}
    return json_response(body)


@blp.route("/<tournament_id>/rounds/<int:round_number>/boards/<int:board>", methods=["GET"])
@blp.doc(operationId="getTournamentBoard")
@blp.response(200, BoardSchema)
@documented(blp, 404, 409)
def traveller(tournament_id: str, round_number: int, board: int):
    """A board's traveller: every table's result on it, seat by seat, with matchpoints; once
    its round has ended (409 ``tournament-step-refused`` before)."""
    state = tournaments().get(tournament_id).state
    created = state.created
    assert created is not None
    if not 1 <= round_number <= len(state.rounds) or not 1 <= board <= created.boards:
        raise Problem("not-found", f"no board {board} of round {round_number}", status=404)
    rnd = state.rounds[round_number - 1]
    if not rnd.ended:
        raise TournamentStepRefused(f"round {round_number} is in play: its boards are hidden")
    results = [r for r in ended_results(state) if (r.round, r.board) == (round_number, board)]
    mp = half_matchpoints(results)
    tables = []
    for t, game_id in enumerate(rnd.games):
        seats = []
        for r in sorted((r for r in results if r.table == t), key=lambda r: r.seat):
            half = mp.get((r.round, r.board, r.seat, r.player)) if r.player else None
            seats.append(
                {
                    "seat": r.seat,
                    "player": r.player,
                    "score": r.score,
                    "matchpoints": half[0] / 2 if half else None,
                    "top": half[1] / 2 if half else None,
                }
            )
        tables.append({"table": t, "game_id": game_id, "seats": seats})
    return json_response({"round": round_number, "board": board, "tables": tables})


@blp.route("/<tournament_id>/export", methods=["GET"])
@blp.doc(operationId="exportTournament")
@blp.response(200, TournamentExportSchema)
@documented(blp, 404, 409)
def export(tournament_id: str):
    """The tournament's log (each round's seed once it has ended) and the export of every
    table game of every round that has ended (docs/tournaments.md, "Checking a tournament")."""
    return json_response(tournaments().export(tournament_id))


class TournamentEventsSchema(Schema):
    id = fields.String()
    version = fields.Integer()
    events = fields.List(fields.Dict(), metadata={"description": "the log as anyone reads it"})


@blp.route("/<tournament_id>/events", methods=["GET"])
@blp.doc(operationId="listTournamentEvents")
@blp.arguments(StreamHeaders, location="headers")
@blp.response(200, TournamentEventsSchema, description="The log (JSON), or a live stream")
@blp.alt_response(200, schema=TEXT, content_type=EVENT_STREAM, description="Server-Sent Events")
@documented(blp, 400, 404, 422, 429)
@rate_limited(blp, "stream", unless=lambda: not wants_stream())
def tournament_events(headers: dict[str, Any], tournament_id: str):
    """The tournament's log as anyone may read it: a round's seed, and each table's result,
    only once the round has ended. ``Accept: text/event-stream``: Server-Sent Events, live
    (``id:`` = seq, resumable with ``Last-Event-ID``), bounded like a game's streams
    (HEARTS_SSE_MAX_STREAMS_PER_CLIENT, HEARTS_SSE_MAX_STREAMS); it ends when the tournament
    is over or after HEARTS_SSE_MAX_SECONDS."""
    svc = tournaments()
    loaded = svc.get(tournament_id)
    if not wants_stream():
        body = {"id": tournament_id, "version": loaded.version, "events": svc.public_log(loaded)}
        return json_response(body, headers={"Vary": "Accept"})
    after = game_seq("Last-Event-ID", headers.get("last_event_id"), 0)
    settings = current_app.extensions["hearts.settings"]
    slots: StreamSlots = current_app.extensions["hearts.stream_slots"]
    slot = slots.take(client())
    try:
        stream = live_log(
            svc, tournament_id, after, settings.sse_keepalive_seconds, settings.sse_max_seconds
        )
    except BaseException:
        slot.release()
        raise
    return event_stream(stream, slot.release)


def live_log(
    svc: TournamentService,
    tournament_id: str,
    after: int,
    keepalive: float,
    lifetime: float,
    poll: float = 0.5,
) -> Iterator[str]:
    """The public log after ``after``, then each entry as it is appended (the stream's length
    polled every ``poll`` seconds; folded again only when it grew), each redacted as of the
    moment it is sent (``public_log``: nothing of a round in play); ends once it is over,
    with an ``end`` event (as a game's stream: a client stops reconnecting)."""
    started = beat = time.monotonic()
    key = svc.store.keys.tournament_key(tournament_id)
    seen = -1
    while True:
        length = int(svc.store.redis.xlen(key))
        if length != seen:
            seen = length
            loaded = svc.load(tournament_id)
            for item in svc.public_log(loaded):
                if item["seq"] > after:
                    after = item["seq"]
                    beat = time.monotonic()
                    yield sse_message(item)
            if loaded.state.status.value in ("finished", "cancelled"):
                end = {"reason": loaded.state.status.value, "version": loaded.version}
                yield f"event: end\ndata: {json.dumps(end)}\n\n"
                return
        now = time.monotonic()
        if now - started >= lifetime:
            return
        if now - beat >= keepalive:
            beat = now
            yield ": keep-alive\n\n"
        time.sleep(poll)


# -- the secrecy of boards in play --------------------------------------------------------------

_GAME_PATH = re.compile(r"^/api/v1/(?:log/)?games/(g[0-9a-f]{20})(?:/|$)")
_RESUME = re.compile(r"^/api/v1/games/g[0-9a-f]{20}/seats/\d+/resume$")


def guard_game_reads() -> None:
    """Before every request: a table game of a tournament round not yet ended answers only its
    own seats (a seat's token), and a player resuming their seat with their key."""
    found = _GAME_PATH.match(request.path)
    if found is None or _RESUME.match(request.path):
        return
    try:
        tok = bearer_token(request.headers.get("Authorization"))
    except Exception:
        tok = None
    if tournaments().hidden(found.group(1), tok):
        raise BoardsHidden(
            "this game is a table of a tournament round still in play: its boards are hidden "
            "from all but its own seats until every table has finished the round"
        )


def install(app: Flask, service: TournamentService) -> None:
    app.extensions["hearts.tournaments"] = service
    app.before_request(guard_game_reads)
