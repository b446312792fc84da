"""Live event streams against real gunicorn (``hearts serve``, gevent), on one redis-server and
on a Redis Cluster: resume with Last-Event-ID loses and repeats nothing; a seat never sees
another seat's hidden cards before the hand is over; keep-alives; the end; idle streams do not
hold the worker."""

from __future__ import annotations

import time

import pytest

from tests.api.helpers import cards_in, chosen_seed, first_legal_move
from tests.replay.live import SSEStream, request, start_server, stop_server

# The server is the module's: the marker is too.
pytestmark = pytest.mark.unlimited(
    "one address holds 40 idle streams at once, as 40 clients would (the default opens 10 a second)"
)

RULES = {"score_limit": 27}  # at least two hands


@pytest.fixture(scope="module", params=["redis", "cluster"])
def server(request, tmp_path_factory):
    """``hearts serve`` on one redis-server, and on a Redis Cluster (redis+cluster://)."""
    if request.param == "cluster":
        url = request.getfixturevalue("redis_cluster").url
    else:
        url = request.getfixturevalue("redis_server")
    prefix = f"sse-{int(time.time() * 1000)}"
    process, port = start_server(
        url,
        prefix,
        tmp_path_factory.mktemp("gunicorn"),
        HEARTS_SSE_KEEPALIVE="0.3",
        HEARTS_SSE_MAX_STREAMS_PER_CLIENT="100",  # one test client holds 40
    )
    yield port
    stop_server(process)


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class Table:
    """Four players driving a game over HTTP."""

    def __init__(self, port: int) -> None:
        self.port = port
        status, _, game = request(
            port, "POST", "/api/v1/games", {"rules": RULES, "seed": chosen_seed("sse")}
        )
        assert status == 201, game
        self.id = game["id"]
        self.tokens: dict[int, str] = {}

    def join(self, name: str) -> None:
        status, _, body = request(
            self.port, "POST", f"/api/v1/games/{self.id}/seats", {"name": name}
        )
        assert status == 201, body
        self.tokens[body["seat"]] = body["token"]

    def view(self, seat: int | None = None) -> dict:
        token = self.tokens[seat] if seat is not None else None
        status, _, body = request(
            self.port, "GET", f"/api/v1/games/{self.id}", headers=bearer(token)
        )
        assert status == 200, body
        return body

    def move(self) -> dict:
        """The first seat due makes a legal move; the command's result."""
        seat = self.view()["awaiting"][0]
        view = self.view(seat)
        path, body = first_legal_move(view)
        status, _, result = request(
            self.port, "POST", f"/api/v1/games/{self.id}/{path}", body, bearer(self.tokens[seat])
        )
        assert status == 200, result
        return result


class Watcher:
    """Seat 0's stream, checked as it arrives: what it may see, and nothing twice."""

    def __init__(self, table: Table, seat: int) -> None:
        self.table = table
        self.seat = seat
        self.items: list[dict] = []
        self.keepalives = 0
        self.hands_over: set[int] = set()
        self.hand = 0
        self.known: set[str] = set()
        self.stream: SSEStream | None = None

    def connect(self, last_event_id: int | None = None) -> None:
        headers = bearer(self.table.tokens[self.seat])
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.stream = SSEStream(self.table.port, f"/api/v1/games/{self.table.id}/events", headers)
        assert self.stream.status == 200
        assert self.stream.response.getheader("Content-Type").startswith("text/event-stream")

    @property
    def last_id(self) -> int:
        return self.items[-1]["seq"] if self.items else 0

    def read_until(self, seq: int) -> None:
        assert self.stream is not None
        while self.last_id < seq:
            message = self.stream.next()
            assert message is not None, "the stream ended early"
            self.take(message)

    def take(self, message) -> None:
        if message.comments and message.data is None:
            self.keepalives += sum(1 for c in message.comments if c == "keep-alive")
            return
        if message.event != "message":
            return
        item = message.data
        assert message.id == item["seq"] == self.last_id + 1, "lost or repeated"
        self.check_hidden(item)
        self.items.append(item)

    def check_hidden(self, item: dict) -> None:
        payload, kind = item["payload"], item["type"]
        if kind == "HandDealt":
            self.hand = payload["hand_number"]
            self.known = set(payload["hands"][self.seat] or ())
        if kind == "HandScored":
            self.hands_over.add(payload["hand_number"])
        if self.hand in self.hands_over:
            return
        # Before the hand is over, every card named anywhere in the item is one this seat may
        # know: its own cards, what it received, and what has been played.
        if kind == "PassesExchanged":
            self.known |= set(payload["received"][self.seat])
        if kind == "CardPlayed":
            self.known.add(payload["card"])
        assert {str(c) for c in cards_in(item)} <= self.known, item
        others = [s for s in range(4) if s != self.seat]
        if kind == "HandDealt":
            assert payload["seed"] is None
            assert all(payload["hands"][s] is None for s in others)
            assert payload["hands"][self.seat] is not None
        elif kind == "CardsPassed" and payload["seat"] != self.seat:
            assert payload["cards"] is None
        elif kind == "PassesExchanged":
            assert all(payload["received"][s] is None for s in others)
        assert "credential" not in payload


def test_a_seat_follows_a_whole_game_live_with_a_drop_in_the_middle(server):
    table = Table(server)
    table.join("ann")
    watcher = Watcher(table, 0)
    watcher.connect()
    watcher.read_until(2)
    for name in ("bob", "cat", "dan"):
        table.join(name)
    watcher.read_until(table.view()["version"])
    time.sleep(0.7)  # idle: keep-alive comments arrive
    dropped = False
    while True:
        public = table.view()
        if public["phase"] == "finished":
            break
        if not dropped and public["hand_number"] == 2 and len(public["tricks"]) == 3:
            # The client drops; the game goes on without it; it comes back.
            watcher.stream.close()
            for _ in range(6):
                table.move()
            assert table.view()["hand_number"] == 2
            watcher.connect(last_event_id=watcher.last_id)
            dropped = True
            continue
        result = table.move()
        watcher.read_until(result["version"])
    assert dropped
    assert watcher.keepalives >= 1
    version = table.view()["version"]
    watcher.read_until(version)
    end = watcher.stream.next()
    while end.event != "end":
        end = watcher.stream.next()
    assert end.data["reason"] == "finished" and end.data["version"] == version
    assert watcher.stream.next() is None  # the stream ends when the game ends
    watcher.stream.close()

    # Nothing lost, nothing repeated; what arrived live is what the log holds.
    assert [item["seq"] for item in watcher.items] == list(range(1, version + 1))
    status, _, log = request(
        server, "GET", f"/api/v1/games/{table.id}/events", headers=bearer(table.tokens[0])
    )
    assert status == 200
    for live, stored in zip(watcher.items, log["events"], strict=True):
        assert (live["seq"], live["type"], live["time"]) == (
            stored["seq"],
            stored["type"],
            stored["time"],
        )
        if not live["redacted"]:
            assert live["payload"] == stored["payload"]
        if live["type"] == "HandScored":
            assert live["revealed_hand"]["finished"] is True
    assert len(watcher.hands_over) >= 2
    # A reconnect after the end: 204, so an EventSource stops reconnecting.
    again = SSEStream(server, f"/api/v1/games/{table.id}/events", {"Last-Event-ID": str(version)})
    assert again.status == 204
    again.close()


def test_idle_streams_do_not_hold_the_worker(server):
    """One gevent worker: 40 idle streams open, and the API still answers at once."""
    table = Table(server)
    streams = [
        SSEStream(server, f"/api/v1/games/{table.id}/events", {}, timeout=5) for _ in range(40)
    ]
    try:
        assert all(s.status == 200 for s in streams)
        started = time.monotonic()
        for _ in range(10):
            status, _, _ = request(server, "GET", f"/api/v1/games/{table.id}", timeout=3)
            assert status == 200
        assert time.monotonic() - started < 3
        table.join("ann")  # every stream sees it
        for stream in streams[:5]:
            message = stream.next()
            while message.data is None or message.data["type"] != "PlayerJoined":
                assert message is not None
                message = stream.next()
            assert message.data["payload"]["name"] == "ann"
    finally:
        for stream in streams:
            stream.close()
