"""The Python client's ``analyse`` against the real service (gunicorn with gevent workers): the
job runs in the worker, which goes on answering while it does."""

from __future__ import annotations

import time

import pytest
from hearts_client import HeartsClient, HeartsProblem

from tests.api.helpers import chosen_seed
from tests.client.test_client import BOTS, play_to_the_end
from tests.client.test_client import base_url as base_url  # noqa: F401  (the fixture)


def test_a_finished_hand_is_analysed_through_the_client(base_url) -> None:  # noqa: F811
    with HeartsClient(base_url) as hearts:
        game = hearts.create_game(
            rules={"score_limit": 1}, seats=[None, *BOTS], seed=chosen_seed("analyse")
        )
        me = hearts.join(game["id"], "ana")
        with pytest.raises(HeartsProblem) as refused:
            hearts.analyse(game["id"], 1)
        assert refused.value.status == 409 and refused.value.code == "hand-in-progress"
        play_to_the_end(me)
        first = hearts.analyse(game["id"], 1, wait=None)
        assert first["state"] in ("queued", "running", "done")
        # The worker serves other requests while its analysis runs.
        started = time.monotonic()
        assert hearts.game(game["id"])["phase"] == "finished"
        assert time.monotonic() - started < 5
        status = hearts.analyse(game["id"], 1, wait=240, poll=0.2)
        assert status["state"] == "done", status
        result = status["result"]
        assert result["hand_number"] == 1 and len(result["seats"]) == 4
        assert sum(1 for d in result["decisions"] if d["kind"] == "play") == 52
        assert hearts.analyse(game["id"], 1, wait=None) == status  # kept: asked twice, done
