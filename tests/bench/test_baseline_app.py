"""bench/baseline_app.py's minimal fan-out refuses a bad move number with a 400, never a 500."""

from __future__ import annotations

import pytest

from bench.baseline_app import create_app
from service.settings import Settings


@pytest.fixture
def client(redis_server: str, key_prefix: str):
    settings = Settings(  # type: ignore[call-arg]
        redis_url=redis_server, key_prefix=key_prefix, bot_runner=False, sweep_on_start=False
    )
    return create_app(settings).test_client()


@pytest.mark.parametrize(
    "body", [{"seq": 0}, {"seq": -1}, {"seq": "1"}, {"seq": True}, {"seq": 2**64}, {}]
)
def test_a_move_number_that_is_not_positive_is_refused(client, body: object) -> None:
    answer = client.post("/api/v1/bench/fanout/t1", json=body)
    assert answer.status_code == 400
    assert answer.json["type"].endswith("/bad-request")


def test_moves_in_order_are_taken_and_one_out_of_order_is_refused(client) -> None:
    for seq in (1, 2):
        answer = client.post("/api/v1/bench/fanout/t2", json={"seq": seq})
        assert answer.status_code == 200
        assert answer.json == {"version": seq}
    again = client.post("/api/v1/bench/fanout/t2", json={"seq": 2})
    assert again.status_code == 400
    assert "not after" in again.json["detail"]
