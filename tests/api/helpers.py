"""A small client for the API in tests: create, join, act, and play whole games."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from domain.cards import Card
from tests.background import settle

PROBLEM = "application/problem+json"


def chosen_seed(label: str) -> str:
    """A game seed the server accepts (unguessable to look at: 32 hex digits, issue 32), the
    same for the same label, so a test's seeded games stay reproducible."""
    return hashlib.sha256(label.encode()).hexdigest()[:32]


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def first_legal_move(view: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The first legal move of the seat whose view this is (it must act): (endpoint, body)."""
    if view["phase"] == "passing":
        return "pass", {"cards": view["legal_cards"][: view["cards_to_pass"]]}
    if view["phase"] == "moon_choice":
        return "moon", {"choice": "add_to_others"}
    return "play", {"card": view["legal_cards"][0]}


class Hearts:
    """Wraps a Flask test client (or anything with .get/.post returning a response)."""

    def __init__(self, http: Any) -> None:
        self.http = http
        self.responses: list[tuple[int | None, Any]] = []  # (seat, JSON) of every response

    def create(self, seats: list | None = None, **body: Any) -> dict[str, Any]:
        if seats is not None:
            body["seats"] = seats
        response = self.http.post("/api/v1/games", json=body)
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    def join(self, game_id: str, name: str, seat: int | None = None) -> tuple[int, str]:
        body: dict[str, Any] = {"name": name}
        if seat is not None:
            body["seat"] = seat
        response = self.http.post(f"/api/v1/games/{game_id}/seats", json=body)
        assert response.status_code == 201, response.get_json()
        data = response.get_json()
        self.responses.append((data["seat"], data))
        return data["seat"], data["token"]

    def new_game(self, humans: int = 4, **body: Any) -> tuple[str, dict[int, str]]:
        seats = [None] * humans + [{"bot": "random"}] * (4 - humans)
        game = self.create(seats, **body)
        tokens = {}
        for i in range(humans):
            seat, token = self.join(game["id"], f"player{i}")
            tokens[seat] = token
        return game["id"], tokens

    def view(self, game_id: str, token: str | None = None, seat: int | None = None) -> Any:
        response = self.http.get(f"/api/v1/games/{game_id}", headers=auth(token))
        assert response.status_code == 200, response.get_json()
        data = response.get_json()
        self.responses.append((seat, data))
        return data

    def wait_for(
        self,
        game_id: str,
        done: Callable[[dict[str, Any]], bool],
        token: str | None = None,
        timeout: float = 60.0,
    ) -> dict[str, Any]:
        """Poll the game's view until ``done(view)``: bots play in the background, after the
        request that woke them was answered, so a test waits for them explicitly."""
        return poll(lambda: self.view(game_id, token), done, timeout)

    def wait_for_humans(self, game_id: str, tokens: dict[int, str], timeout: float = 60.0) -> Any:
        """The public view once one of ``tokens``' seats must act or the game is over: the
        app's bots settled (tests/background.py) when the client is an app's, else polled."""
        app = getattr(self.http, "application", None)
        if app is not None and "hearts" in app.extensions:
            settle(app, [game_id], timeout=timeout)
        return self.wait_for(
            game_id,
            lambda v: v["phase"] == "finished" or any(s in tokens for s in v["awaiting"]),
            timeout=timeout,
        )

    def post(self, path: str, body: Any, token: str | None = None, **headers: str) -> Any:
        return self.http.post(path, json=body, headers={**auth(token), **headers})

    def move(self, view: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A legal move for the seat whose view this is: (endpoint, body)."""
        return first_legal_move(view)

    def act(self, game_id: str, seat: int, token: str, **headers: str) -> Any:
        """The seat's first legal move, once it is the seat's turn (bots move in the background:
        wait for them)."""
        view = poll(
            lambda: self.view(game_id, token, seat),
            lambda v: seat in v["awaiting"] or v["phase"] == "finished",
        )
        return self.play(game_id, seat, token, view, **headers)

    def play(self, game_id: str, seat: int, token: str, view: Any, **headers: str) -> Any:
        """The first legal move of the seat whose view this is, posted; its answer."""
        endpoint, body = self.move(view)
        response = self.post(f"/api/v1/games/{game_id}/{endpoint}", body, token, **headers)
        assert response.status_code == 200, response.get_json()
        data = response.get_json()
        self.responses.append((seat, data))
        return data

    def play_out(self, game_id: str, tokens: dict[int, str], max_moves: int = 3000) -> Any:
        """Every human plays legal moves until the game is finished; the final public view."""
        seat = min(tokens)
        for _ in range(max_moves):
            view = self.turn_view(game_id, tokens, seat)
            if view is None:
                return self.view(game_id)
            seat = view["seat"]
            data = self.play(game_id, seat, tokens[seat], view)
            # The answer's view says who is awaited now: read that seat's view next.
            seat = next((s for s in data["view"]["awaiting"] if s in tokens), seat)
        raise AssertionError("the game did not finish")

    def turn_view(self, game_id: str, tokens: dict[int, str], seat: int) -> Any:
        """The view of a seat of ``tokens`` that must act now (``seat``'s if it is its turn),
        or None once the game is over. In an app's client, one read once its bots settled;
        else (or when another seat is awaited) the public view first, as ``act`` reads."""
        app = getattr(self.http, "application", None)
        if app is not None and "hearts" in app.extensions:
            settle(app, [game_id])
            view = self.view(game_id, tokens[seat], seat)
            if seat in view["awaiting"]:
                return view
            if view["phase"] == "finished":
                return None
        public = self.wait_for_humans(game_id, tokens)
        if public["phase"] == "finished":
            return None
        waiting = [s for s in public["awaiting"] if s in tokens]
        assert waiting, f"nobody of {sorted(tokens)} can act: {public['awaiting']}"
        return self.view(game_id, tokens[waiting[0]], waiting[0])


def poll(
    read: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 60.0, every: float = 0.02
) -> Any:
    """``read()`` again until ``done`` says yes, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still not done after {timeout} s: {value!r}"[:2000])
        time.sleep(every)


def is_bot_move(command_id: str) -> bool:
    """A bot's move: made by a request (``<command>+bot<n>``) or by the background runner."""
    return "+bot" in command_id or command_id.startswith("bots-")


def strings(value: Any):
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def cards_in(value: Any) -> set[Card]:
    """Every JSON string that is exactly a card's name."""
    found = set()
    for text in strings(value):
        if len(text) == 2 and text[0] in "23456789TJQKA" and text[1] in "CDSH":
            found.add(Card(text))
    return found
