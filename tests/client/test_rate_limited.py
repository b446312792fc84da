"""The client under limits (issue 34): a 429 or a 503 is waited out after its Retry-After and
sent again, a bounded number of times; when it gives up (or may not wait), a 429 is raised as
``RateLimited`` carrying ``retry_after``. Against the real app (in process, over httpx's WSGI
transport) with tight limits, and a scripted transport for the 503s no app gives on demand."""

from __future__ import annotations

import time

import httpx
import pytest
from hearts_client import HeartsClient, HeartsProblem, RateLimited

from tests.security.test_rate_limits import limited_app

PROBLEM = "application/problem+json"


def client_of(app, **options) -> HeartsClient:
    transport = httpx.WSGITransport(app=app)
    http = httpx.Client(transport=transport, base_url="http://testserver")
    return HeartsClient("http://testserver", http=http, **options)


def test_a_429_is_waited_out_after_its_retry_after(key_prefix):
    hearts = client_of(limited_app(key_prefix, rate_limit_create="2/second"))
    started = time.monotonic()
    games = [hearts.create_game() for _ in range(3)]
    assert len({game["id"] for game in games}) == 3
    # The third was refused at first (Retry-After: 1 at least) and sent again after waiting.
    assert time.monotonic() - started >= 1.0


def test_with_retries_off_a_429_is_raised_as_rate_limited_with_retry_after(key_prefix):
    hearts = client_of(limited_app(key_prefix, rate_limit_create="1/minute"), retries=0)
    hearts.create_game()
    with pytest.raises(RateLimited) as raised:
        hearts.create_game()
    assert isinstance(raised.value, HeartsProblem)
    assert raised.value.status == 429 and raised.value.code == "rate-limited"
    assert raised.value.retry_after is not None and raised.value.retry_after >= 1


def test_a_wait_longer_than_max_wait_is_not_waited(key_prefix):
    hearts = client_of(limited_app(key_prefix, rate_limit_create="1/minute"), max_wait=5)
    hearts.create_game()
    started = time.monotonic()
    with pytest.raises(RateLimited) as raised:
        hearts.create_game()
    assert time.monotonic() - started < 2
    assert raised.value.retry_after is not None and raised.value.retry_after > 5


def _problem(status: int, code: str, retry_after: str | None) -> httpx.Response:
    headers = {"Content-Type": PROBLEM}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    body = {"type": f"/problems/{code}", "code": code, "status": status, "title": code}
    return httpx.Response(status, headers=headers, json=body)


def scripted(*answers: httpx.Response) -> tuple[HeartsClient, list[httpx.Request]]:
    sent: list[httpx.Request] = []
    queue = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return queue.pop(0)

    http = httpx.Client(transport=httpx.MockTransport(handler), base_url="http://x")
    return HeartsClient("http://x", http=http), sent


def test_retries_are_bounded():
    hearts, sent = scripted(*[_problem(429, "rate-limited", "0")] * 3)
    hearts.retries = 2
    with pytest.raises(RateLimited):
        hearts.create_game()
    assert len(sent) == 3  # the first and two retries


def test_a_503_with_nothing_written_is_sent_again():
    ok = httpx.Response(200, json={"games": [], "next_cursor": None})
    hearts, sent = scripted(_problem(503, "unavailable", "0"), ok)
    assert hearts.list_games() == {"games": [], "next_cursor": None}
    assert len(sent) == 2


def test_a_move_that_may_stand_is_not_sent_again_without_its_key():
    # not-replicated: the move was recorded on the primary; sent again without an
    # Idempotency-Key it could act twice, so only a keyed request is retried.
    hearts, sent = scripted(_problem(503, "not-replicated", "0"))
    with pytest.raises(HeartsProblem) as raised:
        hearts.create_game()
    assert raised.value.code == "not-replicated" and len(sent) == 1
    receipt = httpx.Response(201, json={"id": "g"})
    hearts, sent = scripted(_problem(503, "not-replicated", "0"), receipt)
    assert hearts.create_game(idempotency_key="k" * 22)["id"] == "g"
    assert [r.headers["Idempotency-Key"] for r in sent] == ["k" * 22] * 2


def test_an_http_date_retry_after_is_read():
    soon = httpx.Response(
        429,
        headers={"Content-Type": PROBLEM, "Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"},
        json={"code": "rate-limited", "status": 429},
    )
    hearts, sent = scripted(soon, httpx.Response(200, json={"games": []}))
    assert hearts.list_games() == {"games": []}  # a date passed: no wait
    assert len(sent) == 2
