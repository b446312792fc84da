"""Issue 32, item 8: one stream-id rule.

The attack: ``GET /players/me/events?after=1-18446744073709551616`` (the pattern admitted 20
digits a part) answered 500 from Redis' "Invalid stream ID"; the same ``Last-Event-ID`` on the
live stream ended it in the middle of its body, and the client reconnected every 2 s. Now every
``after`` and ``Last-Event-ID`` (a game's events and a player's notices, as a JSON page and as
SSE) is read by one parser (service/api/event_ids.py) before anything is read: a value that is
not an id of the stream's form, or whose part does not fit (64 bits unsigned for a notice id's
parts, 2^63-1 for a game seq), is 400 ``invalid-event-id``. The largest id is accepted (nothing
comes after it). Each on fakeredis and on a real redis-server."""

from __future__ import annotations

import pytest

from service.api.event_ids import GAME_SEQ, NOTICE_ID, U64_MAX, parse_event_id
from service.api.factory import create_app
from service.app.errors import InvalidEventId
from service.settings import Settings
from tests.api.helpers import Hearts, auth

STREAM = {"Accept": "text/event-stream"}
LARGEST = f"{U64_MAX}-{U64_MAX}"
NOT_NOTICE_IDS = [
    f"1-{2**64}",  # the 500 of the issue
    f"{2**64}-0",
    f"{2**64}-{2**64}",
    "1-" + "9" * 21,
    "12",  # a game seq is not a notice id
    "1-2-3",
    "-1-0",
    "+1-0",
    "1--0",
    "1-",
    "\uff11-0",  # a fullwidth one: int() reads it
    "1-\u0663",  # an Arabic-Indic three
    "0x1-0",
    "abc",
]
NOT_SEQS = [f"1-{2**64}", "1-0", str(2**63), str(2**64), "-1", "\u0663"]


@pytest.fixture(params=["fake", "real"])
def client(request, key_prefix):
    if request.param == "fake":
        import fakeredis

        redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    else:
        import redis as redis_py

        redis = redis_py.Redis.from_url(request.getfixturevalue("redis_server"))
    settings = Settings(key_prefix=key_prefix, sse_max_seconds=0.5, sse_keepalive_seconds=0.2)
    app = create_app(settings, redis=redis)
    yield app.test_client()
    app.extensions["hearts.stop"]()


def player_key(client) -> str:
    response = client.post("/api/v1/players", json={"name": "Ida"})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["key"]


def assert_invalid_event_id(response) -> None:
    assert response.status_code == 400, response.get_data(as_text=True)[:300]
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] == "invalid-event-id"


@pytest.mark.parametrize("raw", NOT_NOTICE_IDS)
def test_a_player_notice_id_out_of_range_or_malformed_is_400_as_page_and_stream(client, raw):
    key = player_key(client)
    url = "/api/v1/players/me/events"
    answers = [
        client.get(url, query_string={"after": raw}, headers=auth(key)),  # the JSON page
        client.get(url, query_string={"after": raw}, headers={**auth(key), **STREAM}),
        client.get(url, headers={**auth(key), **STREAM, "Last-Event-ID": raw}),
    ]
    for answer in answers:
        assert_invalid_event_id(answer)


def test_the_largest_notice_id_is_read_to_its_end(client):
    # Redis refuses an exclusive range from the largest id: the store answers "nothing after".
    key = player_key(client)
    url = "/api/v1/players/me/events"
    page = client.get(url, query_string={"after": LARGEST}, headers=auth(key))
    assert page.status_code == 200, page.get_data(as_text=True)
    assert page.get_json() == {"events": [], "last_id": LARGEST}
    # Closed as a WSGI server closes it: the stream's watch (and the hub's reader) end.
    with client.get(url, headers={**auth(key), **STREAM, "Last-Event-ID": LARGEST}) as live:
        assert live.status_code == 200
        body = live.get_data(as_text=True)  # ends after sse_max_seconds
    assert body.rstrip().endswith("event: reconnect\ndata: {}"), body


def test_a_notice_id_is_read_as_redis_writes_it(client):
    # Leading zeros and the id Redis hands out name the same entry: a resume loses nothing.
    key = player_key(client)
    url = "/api/v1/players/me/events"
    page = client.get(url, query_string={"after": "000-0000"}, headers=auth(key))
    assert page.status_code == 200 and page.get_json()["last_id"] == "0-0"


@pytest.mark.parametrize("raw", NOT_SEQS)
def test_a_game_event_id_out_of_range_or_malformed_is_400_as_page_and_stream(client, raw):
    game_id, _ = Hearts(client).new_game(1)
    url = f"/api/v1/games/{game_id}/events"
    answers = [
        client.get(url, query_string={"after": raw}),
        client.get(url, query_string={"after": raw}, headers=STREAM),
        client.get(url, headers={**STREAM, "Last-Event-ID": raw}),
    ]
    for answer in answers:
        assert_invalid_event_id(answer)


def test_one_parser_reads_both_forms():
    assert parse_event_id("after", "7", GAME_SEQ) == (7,)
    assert parse_event_id("after", f" {2**63 - 1} ", GAME_SEQ) == (2**63 - 1,)
    assert parse_event_id("after", LARGEST, NOTICE_ID) == (U64_MAX, U64_MAX)
    assert parse_event_id("after", "", NOTICE_ID) is None
    assert parse_event_id("after", None, GAME_SEQ) is None
    with pytest.raises(InvalidEventId, match="each part from 0 to 18446744073709551615"):
        parse_event_id("Last-Event-ID", f"1-{2**64}", NOTICE_ID)
    with pytest.raises(InvalidEventId, match="an event seq from 0 to"):
        parse_event_id("after", "1-0", GAME_SEQ)


def test_the_document_names_the_problem_and_the_header_on_both_streams(client):
    document = client.get("/api/v1/openapi.json").get_json()
    for path in ("/api/v1/games/{game_id}/events", "/api/v1/players/me/events"):
        operation = document["paths"][path]["get"]
        assert "400" in operation["responses"]
        names = {p["name"] for p in operation["parameters"]}
        assert {"after", "Last-Event-ID"} <= names
    notices = document["paths"]["/api/v1/players/me/events"]["get"]["parameters"]
    assert all(p["schema"].get("pattern") for p in notices if p["name"] != "Authorization")
    assert client.get("/problems/invalid-event-id").status_code == 200
