"""The Flask application: ``create_app()`` wires settings, Redis, the event store, the game
service and the API together, and starts the app's background threads (sweep, projector)."""

from __future__ import annotations

import http
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import redis.exceptions as redis_errors
from flask import Flask, current_app, g, request
from flask_smorest import Api
from flask_smorest.utils import prepare_response

from service import api as api_package
from service import metrics
from service.api import hygiene, long_work, problems, rate_limits
from service.api import tournaments as tournaments_api
from service.api.departures import Departures
from service.api.examples import ExamplesPlugin
from service.api.problems import PROBLEM_JSON, Problem
from service.api.projections import start_in_process_projector
from service.api.routing import HeartsFlask
from service.api.schemas import PROBLEM_DOC, ProblemSchema
from service.api.security_headers import add_security_headers
from service.app.abandonment import start_abandonment
from service.app.archiver import Archiver, start_archiver
from service.app.bot_runner import start_sweep
from service.app.challenges import Challenges
from service.app.expiry import start_expiry
from service.app.game_service import GameService
from service.app.live import StreamSlots
from service.app.matchmaking import Matchmaker, start_seek_sweeper
from service.app.player_feed import PlayerFeed
from service.app.players import PlayerService
from service.app.ratings import RatingBook
from service.app.timekeeper import Timekeeper
from service.app.tournament_projection import TournamentProjection
from service.app.tournaments import TournamentService, start_tournament_sweep
from service.app.transparency import build_log
from service.settings import Settings
from service.store import redis_server
from service.store.accounts import AccountStore
from service.store.append import writes_refused
from service.store.challenges import ChallengeStore
from service.store.event_store import RedisEventStore
from service.store.layout import LayoutMismatch, check_layout
from service.store.live import READ_BLOCK_MS, LiveHub, PlayerHub
from service.store.outage import unreachable
from service.store.player_events import PlayerEvents
from service.store.read_models import ProjectionStore
from service.store.seeks import SeekStore
from service.store.tournaments import TournamentStore
from service.web import bp as web_table

log = logging.getLogger(__name__)

JSON_METHODS = {"POST", "PUT", "PATCH"}


class HeartsApi(Api):
    """flask-smorest's Api, with every error answered as an RFC 9457 problem and documented as
    one: each operation lists its own problem statuses (``problems.documented``), so there is no
    catch-all 'default' response, and the statuses flask-smorest adds itself (422 on a schema)
    are problem+json too."""

    DEFAULT_ERROR_RESPONSE_NAME = None
    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self) -> None:
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if status >= 400:  # one instance: apispec instantiates a class at each status
                response["schema"] = PROBLEM_DOC
            prepare_response(response, self.spec, PROBLEM_JSON)
            self.spec.components.response(status.name, response, lazy=True)

    def handle_http_exception(self, error):  # type: ignore[override]
        return problems.handle(error)

    # The document is written when first read (GET /api/v1/openapi.json, a test's ``api.spec``),
    # not by every create_app: writing it is nine tenths of building an app (0.15 s of CPU), and
    # most apps (the tests', each gunicorn worker's) never serve it. Blueprints are documented
    # in the order they were registered, so the document is the same as if written at once.
    _spec: Any = None
    _undocumented: list[tuple[Any, str, Any]] = []

    @property
    def spec(self) -> Any:  # type: ignore[override]
        if self._undocumented:
            self._document()
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        self._spec = value

    def register_blueprint(self, blp, *, parameters=None, **options):  # type: ignore[override]
        name = options.get("name", blp.name)
        self._app.extensions["flask-smorest"]["blp_name_to_api"][name] = self
        self._app.register_blueprint(blp, **options)
        if not self._undocumented:
            self._undocumented = []  # this app's own list, not the class's empty one
            self._documenting = threading.Lock()
        self._undocumented.append((blp, name, parameters))

    def _document(self) -> None:
        """What flask-smorest's register_blueprint documents, for each blueprint not yet."""
        with self._documenting:
            while self._undocumented:
                blp, name, parameters = self._undocumented[0]
                blp.register_views_in_doc(
                    self, self._app, self._spec, name=name, parameters=parameters
                )
                self._spec.tag({"name": name, "description": blp.description})
                self._undocumented.pop(0)

    def _init_spec(self, **kwargs: Any) -> None:
        super()._init_spec(**kwargs)
        self.ma_plugin.converter.add_attribute_function(_nested_or_null)
        written = self.spec.to_dict
        self.spec.to_dict = lambda: _markdown(written())  # type: ignore[method-assign]


# Docstrings quote code reStructuredText's way (``x``), which Swagger UI showed as written:
# descriptions are CommonMark (`x`, shown as code), summaries plain text (x).
_RST_CODE = re.compile(r"``(.+?)``", re.S)
_AS_WRITTEN = {"description": r"`\1`", "summary": r"\1"}


def _markdown(value: Any, key: str = "") -> Any:
    """The document with ``code`` written as each description and summary shows it."""
    if isinstance(value, dict):
        return {k: _markdown(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_markdown(v, key) for v in value]
    if isinstance(value, str) and key in _AS_WRITTEN:
        return _RST_CODE.sub(_AS_WRITTEN[key], value)
    return value


# apispec writes a nested schema that may be null (OpenAPI 3.0) as anyOf [that schema, an object
# that may be null]: the second branch lets any object through, so the document allowed bodies
# the schema refuses (schemathesis: a seek's rating_range of two strings). Narrowed to null.
_ANY_OBJECT_OR_NULL = {"type": "object", "nullable": True}


def _nested_or_null(converter: Any, field: Any, ret: dict[str, Any], **kwargs: Any) -> dict:
    branches = ret.get("anyOf")
    if not branches or _ANY_OBJECT_OR_NULL not in branches:
        return {}
    null = {**_ANY_OBJECT_OR_NULL, "enum": [None]}
    return {"anyOf": [null if b == _ANY_OBJECT_OR_NULL else b for b in branches]}


def create_app(
    settings: Settings | None = None, *, redis: Any = None, service: GameService | None = None
) -> Flask:
    """The app. ``redis`` (a client, e.g. fakeredis in tests) overrides ``settings.redis_url``."""
    settings = settings or Settings.from_env()
    injected = redis is not None or service is not None
    app = HeartsFlask("hearts")  # url builders compiled once a process (service/api/routing.py)
    app.config.update(
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        API_TITLE="Hearts",
        API_VERSION="v1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/api/v1",
        OPENAPI_JSON_PATH="openapi.json",
        API_SPEC_OPTIONS={
            "info": {
                "description": "An event-sourced Hearts server. Errors are RFC 9457 problems "
                "(application/problem+json); each 'type' is described at `/problems/{code}`."
            },
            "components": {"securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}}},
        },
    )
    follows: RedisEventStore | None = None
    url: str | None = None
    if service is None:
        if redis is None:
            url = settings.redis_url or redis_server.start(settings.data_dir).url
            redis = redis_server.client_for(url)
            follows = _follows_store(url, settings)
        store = long_work.store_for(redis, settings)
        service = GameService(
            store,
            conflict_retries=settings.conflict_retries,
            idempotency_ttl=settings.idempotency_ttl,
            bot_moves_per_request=settings.bot_moves_per_request,
            bot_request_ms=settings.bot_request_ms,
            bot_lease_seconds=settings.bot_lease_seconds,
            bot_poll_seconds=settings.bot_poll_seconds,
            bot_away_pace=settings.bot_away_pace,
            bot_think=settings.bot_think,
            cache_games=settings.cache_games,
            max_bot_games=settings.max_bot_games,
            bot_game_seconds=settings.bot_game_seconds,
        )
    app.extensions["hearts"] = service
    _guard_layout(app, service.store)  # its partition count must be its data's
    # Registered players (issue 20): their accounts live beside the games, same Redis and prefix.
    players = PlayerService(AccountStore(service.store.redis, prefix=service.store.prefix), service)
    app.extensions["hearts.players"] = players
    app.extensions["hearts.settings"] = settings
    # Each player's own stream of notices, fed by every append (service/app/player_feed.py),
    # and matchmaking (service/app/matchmaking.py), which reads ratings from the projections.
    feed = PlayerFeed(PlayerEvents(service.store.redis, service.store.prefix), players)
    service.on_appended.append(feed.appended)
    app.extensions["hearts.feed"] = feed
    ratings = RatingBook(ProjectionStore(service.store, settings.count_arranged_games))
    app.extensions["hearts.ratings"] = ratings  # the one the rating endpoints read too
    app.extensions["hearts.matchmaker"] = Matchmaker(
        SeekStore(service.store.redis, service.store.prefix),
        service,
        players,
        ratings.rating,
        ttl_seconds=settings.seek_ttl,
        per_address=settings.seeks_per_address,
    )
    # Challenges to a named player (issue 44, service/app/challenges.py).
    app.extensions["hearts.challenges"] = Challenges(
        ChallengeStore(service.store.redis, service.store.prefix),
        service,
        players,
        ttl_seconds=settings.challenge_ttl,
        open_per_player=settings.challenges_open,
        notify=feed.events.add,  # told on the players' own streams
    )
    # Audits, exports and imports: in a low-priority child process when we have the URL.
    long_work.install(app, settings, service.store, url)
    # Live event streams wait in the hub (its readers start with the first stream) and are
    # counted by the slots: see service/store/live.py and docs/replay.md.
    app.extensions["hearts.live"] = LiveHub(service.store, follows, page=settings.log_page)
    # Players' own streams wait in theirs, woken by pub/sub (on the followers' client if any).
    wakes = follows.redis if follows is not None else service.store.redis
    app.extensions["hearts.player_hub"] = PlayerHub(wakes, feed.events.wake_channel)
    players.on_rekeyed.append(feed.events.wake)  # a stream opened with the old key ends
    app.extensions["hearts.departures"] = Departures()
    app.extensions["hearts.stream_slots"] = StreamSlots(
        settings.sse_max_streams, settings.sse_max_streams_per_client
    )
    # Signed game heads and the public log (docs/verify.md); its key is in the OpenAPI info.
    transparency = build_log(service.store, settings, injected=injected)
    app.extensions["hearts.log"] = transparency
    app.config["API_SPEC_OPTIONS"]["info"]["x-hearts-log-key"] = transparency.vkey

    api = HeartsApi(app, spec_kwargs={"extra_plugins": [ExamplesPlugin()]})  # examples.json
    problems.register(app)
    api_package.register(app, api)
    # Tournaments (docs/tournaments.md): their logs beside the games', moved on by game ends.
    tournament_store = TournamentStore(
        service.store.redis,
        service.store.keys,
        lambda: service.store.archive.blobs if service.store.archive is not None else None,
    )
    tournament_service = TournamentService(
        tournament_store,
        service,
        miss_after=settings.tournament_miss_after,
        # An arena pairs by score, then rating (service/app/arena.py).
        ratings=lambda: {p: r.rating for p, r in ratings.ratings().items() if r.games},
    )
    tournament_service.projection = TournamentProjection(
        ProjectionStore(service.store, settings.count_arranged_games), tournament_store
    )
    # A tournament's tables are budgeted by the tournament's own limits: its bot accounts play
    # at a bot's speed, uncounted among the games of bots only a client makes (issue 42).
    service.budgeted_elsewhere = service.background.unpaced = tournament_store.is_table
    service.on_appended.append(tournament_service.game_appended)
    app.register_blueprint(web_table)  # the browser client at / (service/web)
    add_security_headers(app)  # CSP, nosniff, no-referrer on every answer (issue 22)
    rate_limits.install(app, settings, service.store.redis)  # after the views it wraps
    app.before_request(_before)
    tournaments_api.install(app, tournament_service)  # its guard after the request's checks
    app.after_request(_after)

    # Background threads start here and nowhere else; "hearts.stop" stops them all.
    stops: list[Callable[[], None]] = []
    app.extensions["hearts.stop"] = lambda: [stop() for stop in stops]
    if settings.bot_runner:
        service.background.start()
        app.extensions["hearts.bots_stop"] = service.background.stop  # call it to stop
        stops.append(service.background.stop)
    if settings.sweep_on_start:
        start_sweep(
            service.store, service.bots, service.hand_over, f"{settings.key_prefix}:sweep-lock"
        )
        if settings.waiting_game_ttl:  # games that never start: see service/app/expiry.py
            stops.append(start_expiry(service, settings.waiting_game_ttl).set)
        if settings.abandon_after:  # silent players: see service/app/abandonment.py
            stops.append(start_abandonment(service, settings.abandon_after).set)
        # Running tournaments moved on even if no one reads them: service/app/tournaments.py.
        stops.append(start_tournament_sweep(tournament_service).set)
        # Seeks paired, filled with bots and expired: see service/app/matchmaking.py.
        stops.append(start_seek_sweeper(app.extensions["hearts.matchmaker"]).set)
        if settings.timekeeper == "in-process":  # turn clocks: see service/app/timekeeper.py
            timekeeper = Timekeeper(service, interval=settings.timekeeper_interval)
            stops.append(timekeeper.start().set)
    if settings.archiver and service.store.archive is not None:
        # Ended games move to the archive (service/app/archiver.py); off unless asked for in
        # an app built by hand or in a test, on for hearts serve.
        archiver = Archiver(
            service.store,
            service.store.archive,
            after_seconds=settings.archive_after,
            public_log=transparency,
        )
        app.extensions["hearts.archiver"] = archiver
        stops.append(start_archiver(archiver).set)
    if settings.projector_in_process:
        start_in_process_projector(app)
        stops.append(app.extensions["hearts.projector_stop"].set)
    return app


def _guard_layout(app: Flask, store: RedisEventStore) -> None:
    """Refuse to start on data written with another partition count (LayoutMismatch, from
    service/store/layout.py). If Redis cannot be reached or written now, the app starts (its
    health answers say so) and the first request that reaches Redis checks: a mismatch then is
    a 503 for every request until the process is restarted with the data's count."""
    try:
        check_layout(store)
        return
    except Exception as exc:
        if not _not_now(exc):
            raise
        log.warning("partition layout not checked yet: %s", exc)
    checked: list[bool] = []

    def check() -> None:
        if checked:
            return
        try:
            check_layout(store)
        except LayoutMismatch as exc:
            log.error("%s", exc)
            raise Problem("unavailable", str(exc), status=503) from None
        except Exception as exc:
            if _not_now(exc):
                return
            raise
        checked.append(True)

    app.before_request(check)


def _not_now(error: Exception) -> bool:
    """Redis unreachable, or refusing writes for now (the layout check may record the count)."""
    refused = isinstance(error, redis_errors.ResponseError) and writes_refused(error) is not None
    return unreachable(error) or refused


def _follows_store(url: str, settings: Settings) -> RedisEventStore | None:
    """The event store on the live followers' own Redis client (None: share the app's)."""
    client = redis_server.follower_client_for(url, READ_BLOCK_MS / 1000 + 5)
    if client is None:
        return None
    return RedisEventStore(client, prefix=settings.key_prefix, partitions=settings.partitions)


def _before() -> None:
    g.started = time.perf_counter()
    hygiene.check_head()  # 414/431, as gunicorn in front would (service/api/hygiene.py)
    if request.method not in JSON_METHODS or not request.path.startswith("/api/"):
        return
    if request.routing_exception is not None:
        return  # no such route, or not for this method: its 404 or 405 (with Allow), not a 415
    limit = request.max_content_length
    if limit is not None and request.content_length is not None and request.content_length > limit:
        raise _body_too_large(limit)
    mimetype = request.mimetype
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise Problem(
            "unsupported-media-type",
            f"send a JSON body with Content-Type: application/json (got {mimetype or 'none'})",
            status=415,
        )
    data = request.get_data(cache=True)  # werkzeug enforces the size limit here (413)
    if request.content_length is None and limit is not None and len(data) >= limit:
        _refuse_a_longer_stream(limit)
    if request.path == long_work.IMPORT_PATH and long_work.in_child():
        return  # the child process parses and checks it (an export is megabytes)
    body = hygiene.load_json(data)  # depth (400) before parsing, then Unicode (422)
    g.json_body = body  # parsed once: an import's 6 MB take a worker ~0.1 s to parse
    if not isinstance(body, dict):
        raise Problem(
            "validation-error",
            "the body must be a JSON object",
            status=422,
            errors={"_schema": ["a JSON object is required"]},
        )


def _body_too_large(limit: int) -> Problem:
    return Problem("body-too-large", f"request bodies are limited to {limit} bytes", status=413)


def _refuse_a_longer_stream(limit: int) -> None:
    """A body without a Content-Length (chunked) is read up to the limit and no further:
    werkzeug stops there without a word, and the cut-off body would be refused as malformed
    JSON, or worse, read as a shorter one. One byte more from the server's stream says whether
    it went on."""
    if request.environ["wsgi.input"].read(1):
        raise _body_too_large(limit)


def _after(response):
    started = g.get("started")
    if started is not None:
        rule = request.url_rule.rule if request.url_rule is not None else "unmatched"
        metrics.observe_request(request.method, rule, response.status_code, started)
    if problems.REDIS_DOWN.down or problems.WRITES_REFUSED.down:  # say once that it is back
        store = current_app.extensions["hearts"].store
        problems.back_if_answering(request.method, response.status_code, store.redis.ping)
    return response
