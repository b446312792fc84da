"""bench/request_costs.py keeps working, and what it takes out is really out.

Not a timing: a tiny run has every variant with a positive median, and each removal's patch
does remove its step from the answers (a patch that missed would measure a cost of zero).
"""

from __future__ import annotations

import math

import pytest

from bench import request_costs
from bench.common import RedisServer


def test_a_tiny_run_has_every_variant(capsys: pytest.CaptureFixture[str]) -> None:
    medians = request_costs.main(["--commands", "3", "--warmup", "1", "--json"])
    assert '"benchmark": "request_costs' in capsys.readouterr().out
    wanted = {"reference"} | {f"without {step}" for step in request_costs.removals()}
    wanted |= {f"with {step}" for step in request_costs.ADDITIONS}
    assert set(medians) == wanted
    for cpu, wall in medians.values():
        assert math.isfinite(cpu) and cpu > 0
        assert wall >= cpu * 0.5  # a wall time is not far below its CPU in one thread


def test_each_removal_takes_its_step_out() -> None:
    with RedisServer() as redis_server:
        app = request_costs.make_app(redis_server.url, "rct", limited=False)
        client = app.test_client()
        created = client.post("/api/v1/games", json={"seats": [None] * 4})
        game = f"/api/v1/games/{created.json['id']}"
        tokens = []
        for n in range(4):
            joined = client.post(f"{game}/seats", json={"name": f"p{n}"}).json
            tokens.append((joined["seat"], joined["token"]))
        removals = request_costs.removals()

        def pass_cards(seat: int, token: str) -> dict[str, str]:
            bearer = {"Authorization": f"Bearer {token}"}
            view = client.get(game, headers=bearer).json
            cards = view["legal_cards"][: view["cards_to_pass"]]
            answer = client.post(f"{game}/pass", json={"cards": cards}, headers=bearer)
            assert answer.status_code == 200, answer.get_data()
            return dict(answer.headers)

        with removals["security headers"](app):
            assert "Content-Security-Policy" not in dict(client.get(game).headers)
        assert "Content-Security-Policy" in dict(client.get(game).headers)
        with removals["signed head (Hearts-Head)"](app):
            assert "Hearts-Head" not in pass_cards(*tokens[0])
        assert "Hearts-Head" in pass_cards(*tokens[1])
        feed = app.extensions["hearts.feed"].appended
        with removals["player feed (notices per append)"](app):
            assert feed not in app.extensions["hearts"].on_appended
        assert feed in app.extensions["hearts"].on_appended
