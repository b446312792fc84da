"""Rate limits (Flask-Limiter, counted in the service's own Redis so they hold across workers).

Per client address: creating a game, joining one, importing one, opening a live event stream,
registering a player, a request made with a player's key (each checks a key: no address may try
keys at speed), asking for a hand's analysis, asking for an audit or an export (issue 42: long
work), and (besides the create limit) making a game with every seat a bot (issue 33: a whole game
of moves and log that no person plays; issue 42: by a create or a hand-over).
Per client address and per player key: the preset deals games are created with, each deal a
hit (issue 42: a create's deals are ~26 KB of Redis a hundred, kept until the game is over).
Per player key: challenges sent (issue 44) and tournaments created, keyed by the key's
SHA-256 as a token's are.
Per client address and per player key, on every write path besides its own limits: one storage
budget, counted in KiB, each request costing what it stores (``storage_costs``; issue 42: the
per-path limits let a client mixing paths add more than any one of them).
Per token: commands (pass, play, moon, a seat handed to a bot), keyed by the token's SHA-256 (the
credential the game stores), never by the token itself; a request without a usable token counts
against its address. A request over a limit gets 429 ``rate-limited`` (problem+json) with
Retry-After.

Blueprints mark an operation with ``@rate_limited(blp, "<kind>")`` (which also documents its 429);
``install`` gives each app its own Limiter (its storage lives on the Limiter, and tests build many
apps in one process) and wraps the marked views of that app. The counters live in the Redis the
app was built around, under the app's key prefix: the client's connection pool for a Redis (a
fakeredis one too: an injected client counts in its own fake server), the cluster's nodes for a
Redis Cluster (limits' ``redis+cluster://`` storage; its keys are single-slot).

The client address is the TCP peer's unless ``trusted_proxies`` says how many proxies in front
append to X-Forwarded-For (werkzeug's ProxyFix): nobody can pick their own address by sending
the header to a service that does not sit behind a proxy. An IPv6 address then counts as its
network of ``ipv6_prefix`` bits (:func:`client`): one client usually holds a whole /64.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis.cluster
from flask import Flask, Response, current_app, g, request
from flask_limiter import Limiter
from flask_limiter.errors import RateLimitExceeded
from limits import parse_many
from werkzeug.middleware.proxy_fix import ProxyFix

from service.api import storage_costs
from service.api.common import service
from service.api.problems import PROBLEM_JSON, Problem, problem_response
from service.api.schemas import MAX_DEALS, PROBLEM_DOC
from service.app.auth import Unauthorized, bearer_token, credential_of
from service.app.client_address import client_key
from service.app.players import is_player_key
from service.settings import RATE_OFF, Settings

OFF = RATE_OFF
# Counts of the current and the previous window, weighted: no burst of twice the limit at a
# window's edge (as a fixed window allows), at two keys per counter (a moving window keeps one
# entry per request).
STRATEGY = "sliding-window-counter"


def client() -> str:
    """The client as rate limits and open-stream bounds count it: an IPv4 address, an IPv6
    network of HEARTS_IPV6_PREFIX bits (service/app/client_address.py)."""
    prefix = current_app.extensions["hearts.settings"].ipv6_prefix
    return client_key(request.remote_addr, prefix)


def by_address() -> str:
    return f"addr:{client()}"


def by_token() -> str:
    try:
        tok = bearer_token(request.headers.get("Authorization"))
    except Unauthorized:
        tok = None  # the view answers 401; the attempt still counts, against the address
    return f"token:{credential_of(tok)}" if tok is not None else by_address()


def player_key() -> str | None:
    """The request's bearer if it has the form of a player's key (a bot account's too), else
    None: a seat's token or no token at all."""
    try:
        tok = bearer_token(request.headers.get("Authorization"))
    except Unauthorized:
        return None
    return tok if tok is not None and is_player_key(tok) else None


def by_player_key() -> str:
    tok = player_key()
    return f"token:{credential_of(tok)}" if tok is not None else by_address()


@dataclass(frozen=True, slots=True)
class Kind:
    setting: str  # the Settings field holding the limit
    key: Callable[[], str]
    what: str  # for the OpenAPI description


KINDS = {
    "create": Kind("rate_limit_create", by_address, "games created per client address"),
    "join": Kind("rate_limit_join", by_address, "joins per client address"),
    "import": Kind("rate_limit_import", by_address, "imports per client address"),
    "stream": Kind("rate_limit_stream", by_address, "live streams opened per client address"),
    "command": Kind("rate_limit_command", by_token, "commands per token (all of its commands)"),
    "register": Kind("rate_limit_register", by_address, "players registered per client address"),
    "account": Kind(
        "rate_limit_account", by_address, "requests with a player's key per client address"
    ),
    "analysis": Kind("rate_limit_analysis", by_address, "analyses asked for per client address"),
    "bot_games": Kind(
        "rate_limit_bot_games", by_address, "games of bots only made per client address"
    ),
    "long_reads": Kind(
        "rate_limit_long_reads",
        by_address,
        "audits, exports and group standings per client address",
    ),
    # Counted in deals (each request costs as many hits as it gives: ``preset_deals``), against
    # its address and, with a player's key, against that key too: no route escapes either.
    "preset_deals": Kind(
        "rate_limit_preset_deals", by_address, "preset deals given per client address"
    ),
    "preset_deals_key": Kind(
        "rate_limit_preset_deals", by_player_key, "preset deals given per player key"
    ),
    # A game that seats a bot is dealt as soon as its one open seat is taken: about twice the
    # bytes of one that waits for people (docs/budget.md, "Games with bots").
    "bot_seats": Kind("rate_limit_bot_seats", by_address, "games created with a bot seated"),
    "tournament": Kind("rate_limit_tournament", by_token, "tournaments created per player key"),
    # Keyed by the bearer's credential: a player's key, however many addresses it is used from.
    "challenge": Kind("rate_limit_challenge", by_token, "challenges sent per player key"),
    # One budget of Redis bytes (KiB) that every write path spends from, each request its cost
    # (service/api/storage_costs.py): against the address, and against the player's key the
    # request carries (``spends_storage``).
    "storage": Kind("rate_limit_storage", by_address, "KiB stored per client address"),
    "storage_key": Kind("rate_limit_storage", by_player_key, "KiB stored per player key"),
}
STORAGE_KINDS = ("storage", "storage_key")

Cost = int | Callable[[], int]
# endpoint -> its limits, each (kind, when the request is exempt, what it costs): filled as the
# blueprints are imported. An operation may have several (a game of bots only counts as a
# create too).
_MARKED: dict[str, list[tuple[str, Callable[[], bool] | None, Cost]]] = {}


def rate_limited(
    blp: Any,
    kind: str,
    *,
    unless: Callable[[], bool] | None = None,
    endpoint: str | None = None,
    cost: Cost = 1,
) -> Callable[[Callable], Callable]:
    """Mark a blueprint's operation as limited by ``kind`` (see KINDS) and document its 429.
    ``unless``: a request for which it returns True is not counted (e.g. a page, not a stream).
    ``endpoint``: a method of a class-based view names its class (its other methods then need
    an ``unless``). ``cost``: the hits a request counts for, or a function of the request
    giving them (e.g. the deals it gives)."""
    what = KINDS[kind].what

    def decorate(view: Callable) -> Callable:
        marks = _MARKED.setdefault(f"{blp.name}.{endpoint or view.__name__}", [])
        if (kind, unless, cost) not in marks:
            marks.append((kind, unless, cost))
        if len(marks) > 1:
            return view  # its 429 is documented by the first limit (the view says the rest)
        return blp.alt_response(
            429,
            schema=PROBLEM_DOC,
            content_type=PROBLEM_JSON,
            description=f"Too many requests ({what}): problem rate-limited; retry after "
            "Retry-After seconds",
            headers={
                "Retry-After": {
                    "description": "Seconds until the limit lets a request through again",
                    "schema": {"type": "integer", "minimum": 1},
                }
            },
        )(view)

    return decorate


def spends_storage(
    blp: Any, cost: Cost, *, endpoint: str | None = None, unless: Callable[[], bool] | None = None
) -> Callable[[Callable], Callable]:
    """Mark an operation as spending ``cost`` KiB (or a function of the request giving them) of
    its client's storage budget: its address's and, when it carries a player's key, that key's
    too. Apply it above the operation's own limit, which documents the 429."""

    def without_key() -> bool:
        return player_key() is None or (unless is not None and unless())

    by_addr = rate_limited(blp, "storage", unless=unless, endpoint=endpoint, cost=cost)
    by_key = rate_limited(blp, "storage_key", unless=without_key, endpoint=endpoint, cost=cost)
    return lambda view: by_addr(by_key(view))


def install(app: Flask, settings: Settings, client: Any) -> None:
    """Trust X-Forwarded-For as the settings say, and limit the marked operations of ``app``
    (unless ``settings.rate_limits`` is False) with counters in ``client``'s Redis."""
    if settings.trusted_proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    if not settings.rate_limits:
        return
    uri, options = _storage(client)
    limiter = Limiter(
        by_address,
        app=app,
        storage_uri=uri,
        storage_options={**options, "key_prefix": f"{settings.key_prefix}:limits"},
        strategy=STRATEGY,
        headers_enabled=False,  # Retry-After is on the 429 itself (see _too_many)
    )
    app.extensions["hearts.limiter"] = limiter
    shared = {kind: getattr(settings, k.setting) for kind, k in KINDS.items()}
    for endpoint, marks in _MARKED.items():
        for kind, unless, cost in marks:
            value = shared[kind]
            view = app.view_functions.get(endpoint)
            if view is None or value == OFF:
                continue
            deduct = None
            if kind in STORAGE_KINDS:
                cost = _at_most(cost, min(item.amount for item in parse_many(value)))
                deduct = _stored
            # One counter per kind (scope), whichever of its operations is asked: the four
            # commands of a token share one budget.
            decorate = limiter.shared_limit(
                value,
                scope=kind,
                key_func=KINDS[kind].key,
                exempt_when=unless,
                cost=cost,
                deduct_when=deduct,
            )
            app.view_functions[endpoint] = decorate(view)
    app.register_error_handler(RateLimitExceeded, _too_many)


def _at_most(cost: Cost, most: int) -> Cost:
    """A storage cost no more than the budget: a game of bots only of 500 points (~4 MB) is let
    through with a whole minute's budget spent, rather than refused for ever. Worked out once a
    request: it is tested before the view and deducted after it (``_stored``), when the game
    it was read from may have changed (a hand-over is no longer one)."""
    if not callable(cost):
        return max(1, min(cost, most))

    def once() -> int:
        known = g.setdefault("storage_costs", {})
        if cost not in known:
            known[cost] = max(1, min(cost(), most))
        return known[cost]

    return once


def _stored(response: Response) -> bool:
    """Whether a request spends its storage cost: only what was stored (a 2xx; a request
    refused, by a limit or by the view, stored nothing). Tested before the view, deducted
    after: requests in flight at once may pass a budget by their own costs."""
    return response.status_code < 400


def create_cost() -> int:
    """The KiB a create stores, from its body as ``_before`` parsed it."""
    return storage_costs.create(g.get("json_body"))


def command_cost() -> int:
    """The KiB a seat's command stores: its event and the moves of the bots it sets off, by
    the game's bots as this process has it (the one it decides the command on). A game it
    cannot read (the view answers that) costs as one with three bots."""
    game_id = str((request.view_args or {}).get("game_id"))
    try:
        snap = service().cached(game_id) or service().snapshot(game_id)
    except Exception:
        return storage_costs.command(3)
    seats = snap.state.state.seats
    return storage_costs.command(min(3, sum(1 for seat in seats if seat.bot is not None)))


def import_cost() -> int:
    """The KiB an import keeps hot until it is archived: by its body's length."""
    return storage_costs.imported(request.content_length)


def all_bots() -> bool:
    """Whether the request's body (as ``_before`` parsed it) creates a game with every seat a
    bot: a list of seats, none of them open."""
    body = g.get("json_body")
    seats = body.get("seats") if isinstance(body, dict) else None
    return isinstance(seats, list) and bool(seats) and all(s is not None for s in seats)


def seats_a_bot() -> bool:
    """Whether the request's body (as ``_before`` parsed it) creates a game with a bot in at
    least one seat."""
    body = g.get("json_body")
    seats = body.get("seats") if isinstance(body, dict) else None
    return isinstance(seats, list) and any(isinstance(s, dict) for s in seats)


def preset_deals() -> int:
    """The preset deals the request's body (as ``_before`` parsed it) gives, as many as a game
    takes at most (MAX_DEALS): a longer list is refused whole (422) but counts that much."""
    body = g.get("json_body")
    deals = body.get("deals") if isinstance(body, dict) else None
    return min(len(deals), MAX_DEALS) if isinstance(deals, list) else 0


def _storage(client: Any) -> tuple[str, dict[str, Any]]:
    """limits' storage URI and options for counters in the Redis of ``client``."""
    if isinstance(client, redis.cluster.RedisCluster):
        node = client.get_default_node()
        kwargs = client.nodes_manager.connection_kwargs
        options = {k: kwargs[k] for k in ("username", "password") if kwargs.get(k)}
        if kwargs.get("connection_class") is redis.SSLConnection:
            options["ssl"] = True
        return f"redis+cluster://{node.host}:{node.port}", options
    # The client's own pool: no second set of connections, and a fakeredis pool works the same.
    return "redis://", {"connection_pool": client.connection_pool}


def _too_many(error: RateLimitExceeded) -> Response:
    current = current_app.extensions["hearts.limiter"].current_limit
    retry = max(1, math.ceil(current.reset_at - time.time())) if current is not None else 1
    return problem_response(
        Problem(
            "rate-limited",
            f"the limit is {error.description}; retry in {retry} s",
            headers={"Retry-After": str(retry)},
        )
    )
