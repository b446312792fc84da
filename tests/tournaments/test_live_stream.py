"""A tournament's live stream (SSE, as a game's): its log as it grows, with nothing of a round
in play: no seed, and no table's result until every table has finished the round."""

from __future__ import annotations

import json

import pytest

from service.app.tournaments import TournamentService
from tests.background import settle
from tests.tournaments.helpers import API, auth, create, register


def _sse(client, tid: str, headers: dict | None = None, until: int = 0) -> list[dict]:
    """The stream's messages until the one with seq ``until`` (then it is closed)."""
    answer = client.get(
        f"{API}/tournaments/{tid}/events",
        headers={"Accept": "text/event-stream", **(headers or {})},
        buffered=False,
    )
    assert answer.status_code == 200 and answer.mimetype == "text/event-stream"
    items, text = [], ""
    try:
        for chunk in answer.response:
            text += chunk.decode() if isinstance(chunk, bytes) else chunk
            while "\n\n" in text:
                message, text = text.split("\n\n", 1)
                data = [line[6:] for line in message.splitlines() if line.startswith("data: ")]
                if data:
                    items.append(json.loads(data[0]))
            if items and items[-1]["seq"] >= until:
                break
    finally:
        answer.close()
    return items


@pytest.mark.unlimited("registers 8 players")
@pytest.mark.parametrize("redis_client", ["fake"], indirect=True)
def test_the_stream_shows_the_log_live_and_nothing_of_a_round_in_play(app, client) -> None:
    service: TournamentService = app.extensions["hearts.tournaments"]
    keys = [register(client, f"Live{i}") for i in range(8)]
    tid = create(client, keys[0], name="Live", rounds=1, boards=1, min_players=8)["id"]
    for k in keys:  # people: each table waits for its players
        client.post(f"{API}/tournaments/{tid}/entries", json={}, headers=auth(k))
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=auth(keys[0]))
    first, second = service.load(tid).state.rounds[0].games
    for seat in range(4):  # one table plays out; the other still waits
        service._stand_in(first, seat, "random")
    settle(app)
    loaded = service.get(tid)
    assert loaded.state.rounds[0].results[0] is not None and not loaded.state.rounds[0].ended

    streamed = _sse(client, tid, until=loaded.version)
    assert [i["seq"] for i in streamed] == list(range(1, loaded.version + 1))
    as_json = client.get(f"{API}/tournaments/{tid}/events").get_json()["events"]
    for events in (streamed, as_json):
        started = [e for e in events if e["type"] == "RoundStarted"]
        recorded = [e for e in events if e["type"] == "TableResultRecorded"]
        assert started and "seed" not in started[0]["data"] and "salt" not in started[0]["data"]
        assert recorded and "scores" not in recorded[0]["data"]  # a result of the round in play
    export = client.get(f"{API}/tournaments/{tid}/export").get_json()
    assert all(
        "scores" not in e["data"] for e in export["log"] if e["type"] == "TableResultRecorded"
    )

    # Resumed after what it had: only what came since, and the round's end reveals it all.
    for seat in range(4):
        service._stand_in(second, seat, "random")
    settle(app)
    ended = service.get(tid)
    assert ended.state.status.value == "finished"
    later = _sse(client, tid, {"Last-Event-ID": str(loaded.version)}, until=ended.version)
    assert [i["seq"] for i in later] == list(range(loaded.version + 1, ended.version + 1))
    assert any(e["type"] == "RoundEnded" and "seed" in e["data"] for e in later)
    assert all("scores" in e["data"] for e in later if e["type"] == "TableResultRecorded")
