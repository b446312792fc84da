"""The arena's seat at a server table: one game over HTTP, and our bot deciding from a seat view.

Every agent plays as any client does: join an open seat, read the seat's view
(``GET /api/v1/games/{id}`` with the seat's token), POST its pass or play, until the game is over.
The other seats are the server's own bots.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from typing import Any

from bench.arena_openspiel import ArenaMismatch, Timing
from bots.base import Bot
from bots.specs import make_bot
from domain.rules import RuleOptions
from domain.views import SeatView
from domain.wire import from_json

API = "/api/v1/games"
# (command, body) for a seat's turn, from its view
Decide = Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]


class HttpError(RuntimeError):
    pass


class Api:
    """A keep-alive JSON client of one ``hearts serve`` (stdlib only: bench needs no httpx)."""

    def __init__(self, port: int, timeout: float = 60.0) -> None:
        self.port = port
        self.timeout = timeout
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        payload = None if body is None else json.dumps(body)
        for attempt in range(2):  # a keep-alive connection the server closed is opened again
            try:
                self.conn.request(method, path, body=payload, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (ConnectionError, http.client.HTTPException):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
                if attempt:
                    raise
        if response.status >= 300:
            raise HttpError(f"{method} {path}: {response.status} {data[:500]!r}")
        return json.loads(data) if data else None

    def close(self) -> None:
        self.conn.close()


def play_game(
    api: Api,
    rules: dict[str, Any],
    deal: list[list[str]],
    seat: int,
    opponents: list[str],
    decide: Decide,
    poll: float = 0.005,
    table: dict[int, Decide] | None = None,
) -> dict[str, Any]:
    """Create a one-hand game with ``deal``, the server's bots in the other seats, play ``seat``
    with ``decide``; the finished hand's record (``GET .../hands/1``, everything shown).

    ``table``: the other seats played by this process instead (seat -> its decide), as clients
    of their own seats, like the test seat."""
    if table is not None:
        return _play_at_table(api, rules, deal, {**table, seat: decide})
    bots = iter(opponents)
    seats = [None if s == seat else {"bot": next(bots)} for s in range(4)]
    created = api.call("POST", API, {"rules": rules, "seats": seats, "deals": [deal]})
    game = f"{API}/{created['id']}"
    joined = api.call("POST", f"{game}/seats", {"name": "arena", "seat": seat})
    token, view = joined["token"], joined["view"]
    _check_rules(view["rules"], rules)
    while view["phase"] != "finished":
        if seat not in view["awaiting"]:
            time.sleep(poll)  # the server's bots are still moving
            view = api.call("GET", game, token=token)
            continue
        command, body = decide(view)
        view = api.call("POST", f"{game}/{command}", body, token)["view"]
    return api.call("GET", f"{game}/hands/1")


def _play_at_table(
    api: Api, rules: dict[str, Any], deal: list[list[str]], players: dict[int, Decide]
) -> dict[str, Any]:
    """Every seat a client of this process: whoever the view awaits decides, in seat order."""
    created = api.call("POST", API, {"rules": rules, "seats": [None] * 4, "deals": [deal]})
    game = f"{API}/{created['id']}"
    tokens = {}
    for s in range(4):
        joined = api.call("POST", f"{game}/seats", {"name": f"arena{s}", "seat": s})
        tokens[s] = joined["token"]
        view = joined["view"]
    _check_rules(view["rules"], rules)
    while view["phase"] != "finished":
        s = min(view["awaiting"])
        mine = api.call("GET", game, token=tokens[s])
        command, body = players[s](mine)
        view = api.call("POST", f"{game}/{command}", body, tokens[s])["view"]
    return api.call("GET", f"{game}/hands/1")


def _check_rules(served: dict[str, Any], asked: dict[str, Any]) -> None:
    for name, value in asked.items():
        if served.get(name) != value:
            raise ArenaMismatch(f"the server plays {name}={served.get(name)!r}, not {value!r}")


# -- our bot, in the arena's process, from the seat's view -----------------------------------------


def seat_view_of(view: dict[str, Any]) -> SeatView:
    """The domain's SeatView from its JSON form (``SeatView.to_dict``), for our bots."""
    return from_json(SeatView, view)


class OurAgent:
    """One of our bots (a spec: ``montecarlo``, ``montecarlo:ms=20``), deciding in this process
    from the seat's view exactly as the service's bot runner would from its state; only its
    ``choose_*`` call is timed (time.process_time), as ISMCTS's ``step`` is."""

    def __init__(self, spec: str, bot: Bot | None = None, role: str = "ours") -> None:
        self.name = spec
        self.bot = bot if bot is not None else make_bot(spec, clock=time.process_time)
        self.role = role  # "ours", or "base": a baseline in the same seat of the same deals
        self.timing = Timing()
        self.seed = "arena"
        self.moves = 0

    def new_hand(self, seed: int) -> None:
        self.seed = f"arena-{seed}"
        self.moves = 0

    def decide(self, view: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        sv = seat_view_of(view)
        rules = RuleOptions.from_dict(view["rules"])
        self.moves += 1
        seed = f"{self.seed}-{self.moves}"
        start = time.process_time()
        if view["phase"] == "passing":
            cards = self.bot.choose_pass(sv, rules, seed)
            self.timing.add("pass", time.process_time() - start)
            return "pass", {"cards": [str(c) for c in cards]}
        if view["phase"] == "playing":
            card = self.bot.choose_play(sv, rules, seed)
            self.timing.add("play", time.process_time() - start)
            return "play", {"card": str(card)}
        if view["phase"] == "moon_choice":  # not with add_to_others; kept for other rules
            return "moon", {"choice": self.bot.choose_moon_scoring(sv, rules, seed).value}
        raise ArenaMismatch(f"no move for phase {view['phase']}")
