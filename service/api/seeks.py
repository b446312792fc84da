"""``/seeks``: matchmaking for registered players; ``/players/me/events``: a player's own stream.

The use cases are ``service/app/matchmaking.py``'s and ``service/app/player_feed.py``'s; a
player authenticates with its key (``Authorization: Bearer hp_...``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Response, current_app, request
from flask_smorest import Blueprint

from domain.clock import iso
from service.api import storage_costs
from service.api.common import BEARER_DOC, NO_STORE, json_response, snapshot_view, token
from service.api.departures import Departures
from service.api.event_ids import notice_id
from service.api.players import players
from service.api.problems import BODY, documented
from service.api.rate_limits import by_address, client, rate_limited, spends_storage
from service.api.replay import EVENT_STREAM, TEXT, event_stream, wants_stream
from service.api.schemas import (
    PlayerEventsQuery,
    PlayerEventsSchema,
    PlayerStreamHeaders,
    SeekAnswerSchema,
    SeekSchema,
    SeeksSchema,
)
from service.app.matchmaking import Matchmaker, SeekRequest
from service.app.player_feed import YOUR_TURN, PlayerFeed
from service.app.players import Player
from service.store.live import PlayerHub, PlayerWatch
from service.store.seeks import Seek

blp = Blueprint("seeks", __name__, url_prefix="/api/v1", description="Matchmaking")

# The most notices one read of a player's stream returns (PlayerEvents.after's count).
NOTICES_PAGE = 100


def matchmaker() -> Matchmaker:
    return current_app.extensions["hearts.matchmaker"]


def feed() -> PlayerFeed:
    return current_app.extensions["hearts.feed"]


def seek_body(seek: Seek) -> dict[str, Any]:
    players_, preset, time_control = seek.pool.split("-")
    both = seek.low is not None and seek.high is not None
    return {
        "id": seek.id,
        "state": seek.state,
        "players": int(players_),
        "preset": preset,
        "time_control": time_control,
        "rating": seek.rating,
        "rating_range": {"min": seek.low, "max": seek.high} if both else None,
        "fill_with_bots_after": seek.fill_after,
        "posted": iso(seek.posted),
        "expires": iso(seek.expires),
        "game_id": seek.game_id,
        "seat": seek.seat,
    }


@blp.route("/seeks", methods=["POST"])
@blp.doc(operationId="postSeek", security=BEARER_DOC)
@blp.arguments(SeekSchema)
@blp.response(201, SeekAnswerSchema, description="The seek: waiting, or matched at once")
@documented(blp, *BODY, 401, 409, 429)
@spends_storage(blp, storage_costs.SEEK)
@rate_limited(blp, "account")
def post_seek(body: dict[str, Any]):
    """Seek a table: you are paired with other seekers of the same kind of table whose ratings
    you accept (and who accept yours), seated in a random order. Poll ``GET /seeks/{id}`` or
    follow ``GET /players/me/events`` for the game; a seek not paired expires
    (HEARTS_SEEK_TTL). So many seeks from one address wait at once
    (HEARTS_SEEKS_PER_ADDRESS; beyond: 429 ``too-many-seeks``)."""
    player = players().authenticate(token())
    span = body["rating_range"]
    wanted = SeekRequest(
        players=body["players"],
        preset=body["preset"],
        time_control=body["time_control"],
        fill_after=body["fill_with_bots_after"],
        rating_range=(span["min"], span["max"]) if span else None,
    )
    seek = matchmaker().post(player, wanted, by_address())
    headers = {"Location": f"/api/v1/seeks/{seek.id}", **NO_STORE}
    return json_response(seek_body(seek), 201, headers=headers)


@blp.route("/seeks", methods=["GET"])
@blp.doc(operationId="listSeeks", security=BEARER_DOC)
@blp.response(200, SeeksSchema)
@documented(blp, 401)
@rate_limited(blp, "account")
def list_seeks():
    """Your seeks still waiting, oldest first: what a client that lost a seek's id (a page
    reloaded) follows or cancels. One seek a kind of table at a time (a second is 409)."""
    player = players().authenticate(token())
    body = {"seeks": [seek_body(seek) for seek in matchmaker().waiting(player)]}
    return json_response(body, headers=NO_STORE)


@blp.route("/seeks/<seek_id>", methods=["GET"])
@blp.doc(operationId="getSeek", security=BEARER_DOC)
@blp.response(200, SeekAnswerSchema)
@documented(blp, 401, 404)
@rate_limited(blp, "account")
def get_seek(seek_id: str):
    """Your seek as it is now: once ``matched``, its game and your seat."""
    player = players().authenticate(token())
    return json_response(seek_body(matchmaker().status(player, seek_id)), headers=NO_STORE)


@blp.route("/seeks/<seek_id>", methods=["DELETE"])
@blp.doc(operationId="cancelSeek", security=BEARER_DOC)
@blp.response(200, SeekAnswerSchema)
@documented(blp, 401, 404)
@rate_limited(blp, "account")
def cancel_seek(seek_id: str):
    """Stop waiting; a seek already paired stays paired (its state says which)."""
    player = players().authenticate(token())
    return json_response(seek_body(matchmaker().cancel(player, seek_id)), headers=NO_STORE)


@blp.route("/players/me/events", methods=["GET"])
@blp.doc(operationId="playerEvents", security=BEARER_DOC)
@blp.arguments(PlayerEventsQuery, location="query")
@blp.arguments(PlayerStreamHeaders, location="headers")
@blp.response(200, PlayerEventsSchema, description="Your notices (JSON), or a live stream")
@blp.alt_response(200, schema=TEXT, content_type=EVENT_STREAM, description="Server-Sent Events")
@documented(blp, 400, 401, 422, 429)
@rate_limited(blp, "stream", unless=lambda: not wants_stream())
def player_events(query: dict[str, Any], headers: dict[str, Any]):
    """One stream for all your games: ``gameStart`` (your seat), ``yourTurn`` (with your seat's
    view) and ``gameFinish`` (winners, totals), each naming the game and its version; and your
    challenges' ``challenge`` (one to you) and ``challengeAnswered`` (docs/challenges.md).

    With ``Accept: text/event-stream``: first the games in play and the turns waiting on you
    now (no ``id``), then each notice as it comes (``id``: resume with ``Last-Event-ID``, which
    resends what you missed). As JSON: the notices after ``after`` (without it: the snapshot
    and the latest ``last_id``). An ``after`` or ``Last-Event-ID`` that is not a notice id
    (``<n>-<m>``, each part 64 bits unsigned) is 400 invalid-event-id."""
    player = players().authenticate(token())
    after = notice_id("after", query["after"])
    if wants_stream():
        last = notice_id("Last-Event-ID", headers.get("last_event_id")) or after
        return _stream(player, last)
    events: list[dict[str, Any]] = []
    if after is None:
        after = feed().events.last_id(player.player_id)
        events = [_item(None, kind, data) for kind, data in feed().snapshot(player)]
    notices = feed().events.after(player.player_id, after)
    events += [_item(entry_id, kind, data) for entry_id, kind, data in notices]
    last_id = notices[-1][0] if notices else after
    return json_response({"events": events, "last_id": last_id}, headers=NO_STORE)


def _item(entry_id: str | None, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """A notice as sent: a turn carries the seat's view as it is now."""
    item = {"id": entry_id, "type": kind, **data}
    if kind == YOUR_TURN:
        snap = current_app.extensions["hearts"].cache.get(data["game_id"])
        item["view"] = snapshot_view(snap, data["seat"])
    return item


def _stream(player: Player, last: str | None) -> Response:
    settings = current_app.extensions["hearts.settings"]
    slots = current_app.extensions["hearts.stream_slots"]
    hub: PlayerHub = current_app.extensions["hearts.player_hub"]
    slot = slots.take(client())
    account = players()
    try:
        watch = hub.watch(player.player_id)
    except BaseException:
        slot.release()
        raise
    # A client gone is seen without waking the stream (service/api/departures.py).
    departures: Departures = current_app.extensions["hearts.departures"]
    forget = departures.watch(request.environ.get("gunicorn.socket"), watch.cancel)

    def done() -> None:
        forget()
        watch.close()
        slot.release()

    try:
        stream = _notices(
            player,
            last,
            watch,
            settings.sse_keepalive_seconds,
            settings.sse_max_seconds,
            lambda: account.still_valid(player),
        )
    except BaseException:
        done()
        raise
    return event_stream(stream, done)


def _notices(
    player: Player,
    last: str | None,
    watch: PlayerWatch,
    keepalive: float,
    lifetime: float,
    key_valid: Callable[[], bool] = lambda: True,
) -> Iterator[str]:
    """The snapshot (on a fresh connection), then each new notice as the player's wake-up
    comes (service/store/live.py ``PlayerHub``: a stream holds no Redis connection and does
    no Redis work while it waits), with keep-alive comments. It asks ``key_valid`` on every
    wake-up (a rotation or revocation wakes the player's streams too) and at every keep-alive,
    and ends with ``event: revoked`` once the key it was opened with was rotated or revoked."""
    events = feed().events
    yield f"retry: 2000\n: notices of player {player.player_id}\n\n"
    rung = watch.rings()  # before the first read: a wake-up from here on is not missed
    if last is None:
        last = events.last_id(player.player_id)
        for kind, data in feed().snapshot(player):
            yield _message(None, _item(None, kind, data))
    deadline = time.monotonic() + lifetime
    woken = True  # the first look: what came after ``last`` before the stream opened
    while True:
        if woken:
            notices = events.after(player.player_id, last)
            if notices:  # one write for all of them
                yield "".join(_message(i, _item(i, kind, data)) for i, kind, data in notices)
                last = notices[-1][0]
            if len(notices) == NOTICES_PAGE:
                continue  # more than a page behind: the next at once
        now = time.monotonic()
        if now >= deadline:
            break
        seen = rung
        rung = watch.wait(rung, min(keepalive, deadline - now))
        woken = rung != seen
        if watch.cancelled:
            return
        if not key_valid():
            yield "event: revoked\ndata: {}\n\n"
            return
        if not woken and time.monotonic() < deadline:
            # A keep-alive, and a look in case a wake-up was lost (bounded: one per keepalive).
            yield ": keep-alive\n\n"
            woken = True
    yield "event: reconnect\ndata: {}\n\n"


def _message(entry_id: str | None, item: dict[str, Any]) -> str:
    head = f"id: {entry_id}\n" if entry_id else ""
    return f"{head}event: {item['type']}\ndata: {json.dumps(item, separators=(',', ':'))}\n\n"
