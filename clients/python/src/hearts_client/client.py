"""HeartsClient: the hearts HTTP API on httpx. Seat: one joined seat, acting with its token.
Player: a registered player, acting with its API key."""

from __future__ import annotations

import base64
import binascii
import email.utils
import json
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

import httpx

from .errors import HeartsProblem, RateLimited
from .models import (
    CommandResult,
    Created,
    GameList,
    Joined,
    MoonChoice,
    Phase,
    PublicView,
    SeatView,
)
from .note import Head, Note, NoteError

API = "/api/v1"
# The server's bot levels, weakest first (its docs/bots.md has the ladder that orders them), and
# the one its web offers a person's table: the second strongest.
LEVELS = ("beginner", "casual", "strong", "master")
DEFAULT_LEVEL = "strong"
PROBLEM_JSON = "application/problem+json"
# Answers that say "not now, later" (Retry-After): over a rate limit, or the server busy or cut
# off from its store with nothing written.
WAIT_AND_RETRY = (429, 503)


class HeartsClient:
    """A client of one server: ``HeartsClient("http://localhost:8000")``. Use it as a context
    manager (or call ``close()``); pass ``http`` to bring your own ``httpx.Client``.

    A 429 (over a rate limit) or 503 (busy, or nothing written) is waited out after its
    Retry-After and the request sent again, at most ``retries`` times per call (0: never) and
    never for longer than ``max_wait`` seconds at once; then the problem is raised
    (``RateLimited`` for a 429, with ``retry_after``)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
        retries: int = 5,
        max_wait: float = 60.0,
    ) -> None:
        self.http = http or httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout)
        self.retries = retries
        self.max_wait = max_wait
        # The latest signed head (Hearts-Head) the server gave for each game: keep them (e.g.
        # save them with the game) to prove later that the game was not rewritten
        # (hearts-verify, docs/verify.md).
        self.heads: dict[str, str] = {}

    def __enter__(self) -> HeartsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    # -- games ------------------------------------------------------------------------------

    def create_game(
        self,
        *,
        rules: dict[str, Any] | None = None,
        seats: Sequence[str | None] | None = None,
        seed: str | None = None,
        deals: list[list[list[str]]] | None = None,
        idempotency_key: str | None = None,
        private: bool = False,
    ) -> Created:
        """A new game. ``seats``: one entry per seat, a bot or None (a player joins); a bot is
        a level (``LEVELS``: ``"beginner"`` to ``"master"``; ``DEFAULT_LEVEL`` is what the web
        offers a person's table) or a strategy's name (``"random"``, ``"montecarlo"``);
        ``rules``: ``{"preset": ..., <option>: <value>}`` (the document lists every option);
        ``seed``: deal every hand from it, reproducibly; it must be unguessable
        (``secrets.token_urlsafe(16)``; 422 ``seed-guessable`` otherwise): keep and reuse it.
        ``private``: a private table, in no listing; the answer's ``join_code`` (shown once)
        is what the invited players join with (``join(..., join_code=...)``), and its
        ``invitation`` the web table's link that carries it."""
        body: dict[str, Any] = {"rules": rules, "seed": seed, "deals": deals}
        if private:
            body["private"] = True
        if seats is not None:
            body["seats"] = [None if bot is None else {"bot": bot} for bot in seats]
        return cast(Created, self._call("POST", "/games", body, key=idempotency_key))

    def list_games(
        self,
        *,
        status: Phase | None = None,
        player: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        arranged: bool | None = None,
    ) -> GameList:
        """Games oldest first; ``arranged``: only games whose creator chose the deals (True)
        or only the others (False)."""
        params: dict[str, Any] = {
            "status": status,
            "player": player,
            "limit": limit,
            "cursor": cursor,
            "arranged": None if arranged is None else str(arranged).lower(),
        }
        return cast(GameList, self._call("GET", "/games", params=params))

    def game(self, game_id: str, token: str | None = None) -> PublicView | SeatView:
        """The public view, or your seat's view with its token."""
        return cast(PublicView, self._call("GET", f"/games/{game_id}", token=token))

    def join(
        self,
        game_id: str,
        name: str,
        *,
        seat: int | None = None,
        idempotency_key: str | None = None,
        join_code: str | None = None,
    ) -> Seat:
        """Take a seat (the first open one unless ``seat``); the Seat acts with its token.

        ``idempotency_key``: whoever repeats it (with the same body) gets this seat's token back,
        so the server refuses a guessable one (422 ``idempotency-key-guessable``): make it with
        ``secrets.token_urlsafe(16)`` or ``str(uuid.uuid4())``. ``join_code``: a private
        table's (from its invitation); without it, or with another, 403 ``join-code-invalid``."""
        body: dict[str, Any] = {"name": name, "seat": seat}
        if join_code is not None:
            body["join_code"] = join_code
        joined = cast(
            Joined, self._call("POST", f"/games/{game_id}/seats", body, key=idempotency_key)
        )
        return Seat(self, game_id, joined)

    # -- read models -------------------------------------------------------------------------

    def scoreboard(self, game_id: str) -> dict[str, Any]:
        return self._call("GET", f"/games/{game_id}/scoreboard")

    def leaderboard(
        self,
        *,
        sort: str | None = None,
        order: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        params = {"sort": sort, "order": order, "limit": limit, "cursor": cursor}
        return self._call("GET", "/leaderboard", params=params)

    def player(self, name: str, *, recent: int | None = None) -> dict[str, Any]:
        return self._call("GET", f"/players/{name}", params={"recent": recent})

    def ratings(self, player_id: str) -> dict[str, Any]:
        """A registered player's rating (``mu - 3 sigma``) and its history, one point per
        rated game."""
        return self._call("GET", f"/ratings/{player_id}")

    # -- tournaments (docs/tournaments.md) ---------------------------------------------------

    def tournaments(self, *, status: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """Tournaments, newest first (``status``: upcoming, running, finished, cancelled)."""
        params = {"status": status, "limit": limit}
        return self._call("GET", "/tournaments", params=params)["tournaments"]

    def tournament(self, tournament_id: str) -> dict[str, Any]:
        return self._call("GET", f"/tournaments/{tournament_id}")

    def tournament_pairings(self, tournament_id: str) -> list[dict[str, Any]]:
        """Each round started: its tables (players by seat, the game), its seed commitment,
        and its seed once it has ended."""
        return self._call("GET", f"/tournaments/{tournament_id}/pairings")["rounds"]

    def tournament_standings(self, tournament_id: str) -> dict[str, Any]:
        """A duplicate's by matchpoints over the rounds ended; an arena's by points per
        place over its games counted (``frozen`` once it is over)."""
        return self._call("GET", f"/tournaments/{tournament_id}/standings")

    def arena_games(self, tournament_id: str) -> list[dict[str, Any]]:
        """An arena's games, as they were paired: seats, game id, result once recorded."""
        return self._call("GET", f"/tournaments/{tournament_id}/pairings")["games"]

    def tournament_board(self, tournament_id: str, round_number: int, board: int) -> dict[str, Any]:
        """A board's traveller: every table's result on it (once its round has ended)."""
        path = f"/tournaments/{tournament_id}/rounds/{round_number}/boards/{board}"
        return self._call("GET", path)

    def tournament_export(self, tournament_id: str) -> dict[str, Any]:
        """The log and every table game's export (``hearts-verify`` checks it)."""
        return self._call("GET", f"/tournaments/{tournament_id}/export")

    def tournament_events(self, tournament_id: str) -> dict[str, Any]:
        """The tournament's log as anyone may read it: ``{"version", "events"}`` (a round's
        seed and its tables' results only once the round has ended)."""
        return self._call("GET", f"/tournaments/{tournament_id}/events")

    def follow_tournament(
        self, tournament_id: str, *, after: int = 0, retries: int = 5
    ) -> Iterator[dict[str, Any]]:
        """Every entry of the tournament's log after seq ``after`` as it is appended
        (Server-Sent Events), until the tournament is over; resumed after a drop from the last
        entry received (``Last-Event-ID``), as ``follow`` does for a game."""

        def headers() -> dict[str, str]:
            return {"Accept": "text/event-stream", "Last-Event-ID": str(after)}

        for kind, data in self._sse(f"/tournaments/{tournament_id}/events", headers, retries):
            if kind == "end":
                return
            if kind == "message" and data is not None:
                after = data["seq"]
                yield data

    def standings(self, players: Sequence[str]) -> dict[str, Any]:
        """A group's standings over the games among those players only (2 to 8 names): each
        one's games, wins, average points, and rating (``provisional`` while young)."""
        return self._call("GET", "/standings", params={"players": ",".join(players)})

    # -- the log: events, hands, audit -------------------------------------------------------

    def events(
        self,
        game_id: str,
        *,
        token: str | None = None,
        after: int = 0,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """One page of the game's events after seq ``after``, as the token's seat (or anyone)
        may see them: ``{"events": [...], "next_after": ..., "more": ...}``."""
        params = {"after": after, "limit": limit}
        return self._call("GET", f"/games/{game_id}/events", params=params, token=token)

    def follow(
        self,
        game_id: str,
        *,
        token: str | None = None,
        after: int = 0,
        retries: int = 5,
    ) -> Iterator[dict[str, Any]]:
        """Every event after seq ``after`` as it happens (Server-Sent Events), until the game
        ends. A dropped connection, or the server's bounded stream lifetime, is resumed from the
        last event received (``Last-Event-ID``): nothing lost, nothing twice. ``retries``
        connection failures in a row end it with the error."""

        def headers() -> dict[str, str]:
            sent = {"Accept": "text/event-stream", "Last-Event-ID": str(after)}
            if token is not None:
                sent["Authorization"] = f"Bearer {token}"
            return sent

        for kind, data in self._sse(f"/games/{game_id}/events", headers, retries):
            if kind == "end":
                return
            if kind == "message" and data is not None:
                after = data["seq"]
                yield data

    def _sse(
        self, path: str, headers: Callable[[], dict[str, str]], retries: int
    ) -> Iterator[tuple[str, Any]]:
        """(event name, data) of a Server-Sent Events stream, reconnecting (with ``headers()``
        as they are then: a Last-Event-ID) when the server ends it or the connection drops;
        ``retries`` failures in a row end it with the error. A 204 ends it."""
        failures = waits = 0
        while True:
            try:
                with self.http.stream(
                    "GET", f"{API}{path}", headers=headers(), timeout=None
                ) as response:
                    if response.status_code == 204:
                        return  # nothing more will ever come
                    if response.is_error:
                        response.read()
                        wait = self._wait(response, waits, idempotent=True)
                        if wait is None:
                            raise _problem(response)
                        waits += 1
                        time.sleep(wait)
                        continue
                    waits = 0
                    for kind, data in _messages(response.iter_lines()):
                        failures = 0
                        yield kind, data
            except httpx.TransportError:
                failures += 1
                if failures > retries:
                    raise
                time.sleep(min(2.0, 0.1 * 2**failures))

    def hand(self, game_id: str, number: int, *, token: str | None = None) -> dict[str, Any]:
        """Hand ``number``'s record: in full once it is over; while in play, what you may see."""
        return self._call("GET", f"/games/{game_id}/hands/{number}", token=token)

    def analyse(
        self, game_id: str, number: int, *, wait: float | None = 120.0, poll: float = 0.5
    ) -> dict[str, Any]:
        """What each decision of finished hand ``number`` was worth (the server's analysis job):
        started if need be, then followed until done for up to ``wait`` seconds. The status
        (``state`` queued, running, done or failed; ``result`` once done); ``wait=None`` returns
        the first status at once. HeartsProblem 409 hand-in-progress before the hand is scored.
        """
        path = f"/games/{game_id}/hands/{number}/analysis"
        status = self._call("POST", path, {})
        deadline = time.monotonic() + (wait or 0.0)
        while wait is not None and status["state"] in ("queued", "running"):
            if time.monotonic() >= deadline:
                break
            time.sleep(poll)
            status = self._call("GET", path)
        return status

    def state_at(self, game_id: str, at: int, *, token: str | None = None) -> dict[str, Any]:
        """The game as it stood after event ``at``: the view ``game()`` gave then."""
        return self._call("GET", f"/games/{game_id}/state", params={"at": at}, token=token)

    def audit(self, game_id: str) -> dict[str, Any]:
        """The server's re-verification of the whole log (``ok`` false on any discrepancy)."""
        return self._call("GET", f"/games/{game_id}/audit")

    def export(self, game_id: str) -> dict[str, Any]:
        """A finished game as one self-contained document (``import_game`` takes it back)."""
        return self._call("GET", f"/games/{game_id}/export")

    def verify_head(self, game_id: str, head: str | None = None) -> dict[str, Any]:
        """Ask the server whether the game's log extends ``head`` (default: the latest kept);
        a HeartsProblem ``head-not-extended`` says where it does not. A lying server can say
        yes: ``hearts-verify`` checks offline."""
        head = head if head is not None else self.heads[game_id]
        return self._call("POST", f"/games/{game_id}/verify", {"head": head})

    def log_proof(self, game_id: str) -> dict[str, Any]:
        """A finished game's inclusion proof in the public log, with its signed checkpoint and
        the game's head salt: keep it with the export (``hearts-verify --proof``)."""
        return self._call("GET", f"/log/games/{game_id}")

    def import_game(
        self, document: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Record an exported game here, after the server has audited it."""
        return self._call("POST", "/games/import", document, key=idempotency_key)

    # -- the wire ----------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        params: dict[str, Any] | None = None,
        token: str | None = None,
        key: str | None = None,
        if_match: int | None = None,
    ) -> Any:
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if key is not None:
            headers["Idempotency-Key"] = key
        if if_match is not None:
            headers["If-Match"] = f'"{if_match}"'
        query = {k: v for k, v in (params or {}).items() if v is not None}
        attempt = 0
        while True:
            response = self.http.request(
                method, API + path, json=body, params=query or None, headers=headers
            )
            if not response.is_error:
                break
            wait = self._wait(response, attempt, idempotent=method == "GET" or key is not None)
            if wait is None:
                raise _problem(response)
            attempt += 1
            time.sleep(wait)
        self._keep_head(response.headers.get("Hearts-Head"))
        return response.json()

    def _wait(self, response: httpx.Response, attempt: int, *, idempotent: bool) -> float | None:
        """Seconds to wait before sending ``response``'s request again, or None to give up."""
        if response.status_code not in WAIT_AND_RETRY or attempt >= self.retries:
            return None
        if not idempotent and _code(response) == "not-replicated":
            return None  # the move may stand: only a retry with its Idempotency-Key may tell
        wait = _retry_after(response)
        wait = min(8.0, 0.5 * 2**attempt) if wait is None else wait  # a proxy's bare 503
        return wait if wait <= self.max_wait else None

    def _keep_head(self, value: str | None) -> None:
        """Remember ``value`` if it is the newest head of its game (unverified here: checking
        it needs the log's key, which ``hearts-verify`` takes from a source you trust)."""
        if not value:
            return
        try:
            head = Head.parse(Note.parse(base64.b64decode(value, validate=True).decode()).text)
        except (NoteError, binascii.Error, UnicodeDecodeError, ValueError):
            return
        kept = self.heads.get(head.game_id)
        if kept is not None:
            try:
                older = Head.parse(Note.parse(base64.b64decode(kept).decode()).text).version
            except (NoteError, ValueError):
                older = -1
            if older > head.version:
                return
        self.heads[head.game_id] = value


def _messages(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """(event name, parsed data) per Server-Sent Events message; comments are skipped."""
    kind, data = "message", []
    for line in lines:
        if line == "":
            if data:
                yield kind, json.loads("\n".join(data))
            kind, data = "message", []
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            kind = value
        elif name == "data":
            data.append(value)


def _problem(response: httpx.Response) -> HeartsProblem:
    kind = RateLimited if response.status_code == 429 else HeartsProblem
    retry_after = _retry_after(response)
    if response.headers.get("content-type", "").startswith(PROBLEM_JSON):
        return kind(response.status_code, response.json(), retry_after)
    # Not the API's own answer (a proxy in front of it, say): still a problem, without a code.
    return kind(response.status_code, {"detail": response.text[:500]}, retry_after)


def _code(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    return HeartsProblem(response.status_code, body).code if isinstance(body, dict) else ""


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds: a number of seconds or an HTTP date (RFC 9110); None without a
    readable one."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Seat:
    """A seat you joined: its number, its token (shown once by the server: keep it), and its
    moves. ``view`` is the seat's view as of the last answer."""

    def __init__(self, client: HeartsClient, game_id: str, joined: Joined) -> None:
        self.client = client
        self.game_id = game_id
        self.seat: int = joined["seat"]
        self.token: str = joined["token"]
        self.view: SeatView = joined["view"]

    def refresh(self) -> SeatView:
        """The seat's view now."""
        self.view = cast(SeatView, self.client.game(self.game_id, self.token))
        return self.view

    @property
    def my_turn(self) -> bool:
        return self.seat in self.view["awaiting"]

    def wait_for_turn(self, timeout: float = 60.0, every: float = 0.05) -> SeatView:
        """Refresh until it is this seat's turn or the game is over; the view then.

        A move's answer carries the bots' replies only as far as the server played them before
        answering (a few cheap moves); the rest come soon after, so wait for them here (or
        follow the game's events). TimeoutError after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while not self.my_turn and self.view["phase"] != "finished":
            if time.monotonic() > deadline:
                raise TimeoutError(f"seat {self.seat} still waiting after {timeout} s")
            time.sleep(every)
            self.refresh()
        return self.view

    def pass_cards(self, cards: Sequence[str], **options: Any) -> CommandResult:
        return self._move("pass", {"cards": list(cards)}, **options)

    def play(self, card: str, **options: Any) -> CommandResult:
        return self._move("play", {"card": card}, **options)

    def choose_moon(self, choice: MoonChoice, **options: Any) -> CommandResult:
        """After shooting the moon where the shooter chooses how it scores."""
        return self._move("moon", {"choice": choice}, **options)

    def follow(self, after: int = 0) -> Iterator[dict[str, Any]]:
        """This game's events as this seat may see them, as they happen (``client.follow``)."""
        return self.client.follow(self.game_id, token=self.token, after=after)

    def set_bot(self, bot: str | None, **options: Any) -> CommandResult:
        """Hand the seat to a bot (a level, e.g. ``"strong"``, or a strategy's name), or take it
        back with None."""
        return self._move(f"seats/{self.seat}/bot", {"bot": bot}, **options)

    def contribute(self, seed: str | None = None, **options: Any) -> CommandResult:
        """Add a seed of this seat's (default: 32 random hex digits) to the next hand's shuffle,
        whose server seed is committed already (the view's ``next_deal``): once per hand."""
        seed = seed if seed is not None else secrets.token_hex(16)
        return self._move("contribution", {"seed": seed}, **options)

    def back(self, **options: Any) -> CommandResult:
        """I'm back: take the seat back from the bot that played it while the turn clock had
        it marked away (409 ``not-away`` if no bot plays it)."""
        return self._move(f"seats/{self.seat}/back", {}, **options)

    def _move(
        self,
        path: str,
        body: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        if_match: int | None = None,
    ) -> CommandResult:
        result = cast(
            CommandResult,
            self.client._call(
                "POST",
                f"/games/{self.game_id}/{path}",
                body,
                token=self.token,
                key=idempotency_key,
                if_match=if_match,
            ),
        )
        self.view = result["view"]
        return result


class Player:
    """A registered player: its id and name, and its API key (``hp_...``: shown once by the
    server, at registration or rotation; keep it). Its joins bind the seat to the player, so
    the seat counts under the player on the leaderboard and in its rating, and any device with
    the key can take the seat up again (``resume``)."""

    def __init__(self, client: HeartsClient, key: str, account: dict[str, Any]) -> None:
        self.client = client
        self.key = key
        self.id: str = account["id"]
        self.name: str = account["name"]

    @classmethod
    def register(cls, client: HeartsClient, name: str) -> Player:
        """Hold ``name`` across the server (409 ``player-name-taken`` if it, or a spelling of it
        that compares equal, is held already)."""
        body = client._call("POST", "/players", {"name": name})
        return cls(client, body["key"], body)

    @classmethod
    def from_key(cls, client: HeartsClient, key: str) -> Player:
        """The player a key belongs to (401 if it is unknown or revoked)."""
        return cls(client, key, client._call("GET", "/players/me", token=key))

    def rotate_key(self) -> str:
        """A new key; the old one stops working at once. Returns (and keeps) the new one."""
        self.key = self.client._call("POST", "/players/me/key", {}, token=self.key)["key"]
        return self.key

    def revoke_key(self) -> None:
        """No key authenticates as this player any more (its name stays held)."""
        self.client._call("DELETE", "/players/me/key", token=self.key)

    def games(self, limit: int = 20) -> list[dict[str, Any]]:
        """The player's games, latest joined first, with its seat in each."""
        params = {"limit": limit}
        return self.client._call("GET", "/players/me/games", params=params, token=self.key)["games"]

    def join(
        self,
        game_id: str,
        *,
        seat: int | None = None,
        idempotency_key: str | None = None,
        join_code: str | None = None,
    ) -> Seat:
        """Take a seat as this player (the first open one unless ``seat``); ``join_code``: a
        private table's."""
        body: dict[str, Any] = {"name": self.name, "seat": seat}
        if join_code is not None:
            body["join_code"] = join_code
        path = f"/games/{game_id}/seats"
        joined = self.client._call("POST", path, body, token=self.key, key=idempotency_key)
        return Seat(self.client, game_id, cast(Joined, joined))

    def resume(self, game_id: str, seat: int) -> Seat:
        """A fresh token for a seat this player joined (on this device); the old token stops
        working."""
        path = f"/games/{game_id}/seats/{seat}/resume"
        joined = self.client._call("POST", path, {}, token=self.key)
        return Seat(self.client, game_id, cast(Joined, joined))

    def ratings(self) -> dict[str, Any]:
        """The player's rating and its history."""
        return self.client.ratings(self.id)

    # -- tournaments ---------------------------------------------------------------------------

    def create_tournament(
        self,
        name: str,
        *,
        rounds: int,
        boards: int,
        min_players: int = 8,
        max_players: int = 16,
        rules: dict[str, Any] | None = None,
        house_bot: str = "heuristic",
    ) -> dict[str, Any]:
        """A duplicate tournament this player organises (starts, cancels)."""
        body = {
            "name": name,
            "rounds": rounds,
            "boards": boards,
            "min_players": min_players,
            "max_players": max_players,
            "rules": rules,
            "house_bot": house_bot,
        }
        return self.client._call("POST", "/tournaments", body, token=self.key)

    def create_arena(
        self,
        name: str,
        *,
        duration_seconds: int,
        hands: int = 1,
        grace_seconds: int = 300,
        rated: bool = False,
        min_players: int = 8,
        max_players: int = 64,
        rules: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """An arena this player organises: paired as players wait, for ``duration_seconds``;
        ``rated`` needs a turn clock in ``rules`` (docs/tournaments.md, "Arena")."""
        body = {
            "name": name,
            "format": "arena",
            "duration_seconds": duration_seconds,
            "hands": hands,
            "grace_seconds": grace_seconds,
            "rated": rated,
            "min_players": min_players,
            "max_players": max_players,
            "rules": rules,
        }
        return self.client._call("POST", "/tournaments", body, token=self.key)

    def enter_tournament(
        self, tournament_id: str, *, stand_in: str | None = None
    ) -> dict[str, Any]:
        """Enter; ``stand_in``: a bot strategy that plays every board for this player."""
        path = f"/tournaments/{tournament_id}/entries"
        return self.client._call("POST", path, {"stand_in": stand_in}, token=self.key)

    def withdraw_from_tournament(self, tournament_id: str) -> dict[str, Any]:
        path = f"/tournaments/{tournament_id}/entries/me"
        return self.client._call("DELETE", path, token=self.key)

    def start_tournament(self, tournament_id: str) -> dict[str, Any]:
        return self.client._call("POST", f"/tournaments/{tournament_id}/start", {}, token=self.key)

    def cancel_tournament(self, tournament_id: str) -> dict[str, Any]:
        return self.client._call("POST", f"/tournaments/{tournament_id}/cancel", {}, token=self.key)

    # -- matchmaking and the player's own stream ----------------------------------------------

    def seek(
        self,
        *,
        players: int = 4,
        preset: str = "standard",
        time_control: str = "relaxed",
        fill_with_bots_after: float | None = None,
        rating_range: tuple[float, float] | None = None,
    ) -> dict[str, Any]:
        """Seek a table: paired with other seekers of the same kind whose ratings fit (409
        ``already-seeking`` if this player waits for one of this kind already). A matched game
        is rated, so it has a clock: ``time_control`` ``off`` is refused (422). The seek:
        ``state`` waiting or matched (then ``game_id`` and ``seat``: ``resume`` takes it)."""
        body: dict[str, Any] = {
            "players": players,
            "preset": preset,
            "time_control": time_control,
            "fill_with_bots_after": fill_with_bots_after,
            "rating_range": (
                None if rating_range is None else {"min": rating_range[0], "max": rating_range[1]}
            ),
        }
        return self.client._call("POST", "/seeks", body, token=self.key)

    def seeks(self) -> list[dict[str, Any]]:
        """This player's seeks still waiting, oldest first (a restarted client finds them)."""
        return self.client._call("GET", "/seeks", token=self.key)["seeks"]

    def seek_status(self, seek_id: str) -> dict[str, Any]:
        return self.client._call("GET", f"/seeks/{seek_id}", token=self.key)

    def cancel_seek(self, seek_id: str) -> dict[str, Any]:
        return self.client._call("DELETE", f"/seeks/{seek_id}", token=self.key)

    # -- challenges (docs/challenges.md) ------------------------------------------------------

    def challenge(self, to: str, rules: dict[str, Any] | None = None) -> dict[str, Any]:
        """Challenge the registered player named ``to`` to a private game of ``rules`` (404
        ``player-not-found`` if nobody holds the name; 429 ``too-many-challenges`` with too
        many waiting). The challenge: ``id``, ``state`` open, ``expires``."""
        return self.client._call("POST", "/challenges", {"to": to, "rules": rules}, token=self.key)

    def challenges(self) -> list[dict[str, Any]]:
        """This player's challenges, ``incoming`` and ``outgoing`` (``direction``), newest first."""
        return self.client._call("GET", "/challenges", token=self.key)["challenges"]

    def challenge_status(self, challenge_id: str) -> dict[str, Any]:
        """One challenge as it is now: once ``accepted``, ``game_id`` and ``your_seat``
        (``resume`` takes the seat: how the challenger gets its token)."""
        return self.client._call("GET", f"/challenges/{challenge_id}", token=self.key)

    def accept_challenge(self, challenge_id: str) -> Seat:
        """Accept a challenge to this player: its game is created, and this is your seat."""
        path = f"/challenges/{challenge_id}/accept"
        answer = self.client._call("POST", path, {}, token=self.key)
        return Seat(self.client, answer["challenge"]["game_id"], cast(Joined, answer))

    def decline_challenge(self, challenge_id: str) -> dict[str, Any]:
        return self.client._call("POST", f"/challenges/{challenge_id}/decline", {}, token=self.key)

    def cancel_challenge(self, challenge_id: str) -> dict[str, Any]:
        return self.client._call("POST", f"/challenges/{challenge_id}/cancel", {}, token=self.key)

    def events(self, *, retries: int = 5) -> Iterator[dict[str, Any]]:
        """The player's notices across all its games, for as long as you read: ``gameStart``,
        ``yourTurn`` (with the seat's ``view``) and ``gameFinish``, each with ``game_id``,
        ``seat`` and ``version``; and ``challenge`` (one to this player: ``challenge_id``,
        ``challenger``) and ``challengeAnswered`` (``state``, ``game_id``). First the games in
        play and the turns waiting now, then each notice as it comes; a dropped connection
        resumes after the last notice received."""
        last: str | None = None

        def headers() -> dict[str, str]:
            sent = {"Accept": "text/event-stream", "Authorization": f"Bearer {self.key}"}
            if last is not None:
                sent["Last-Event-ID"] = last
            return sent

        for _, data in self.client._sse("/players/me/events", headers, retries):
            if data and data.get("id"):
                last = data["id"]
            if data and "type" in data:
                yield data
