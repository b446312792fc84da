"""``hearts analyse GAME HAND`` and its use case, against a real redis-server."""

from __future__ import annotations

import json

import pytest
import redis

from bots.analysis import ANALYSIS_VERSION, AnalysisBudget
from service.app.analysis import HandAnalyst
from service.app.errors import GameNotFound, HandInProgress, HandNotFound
from service.cli import main
from service.store.analyses import KEPT_SECONDS
from service.store.event_store import RedisEventStore
from tests.replay.helpers import play_game


@pytest.fixture
def store(redis_server, key_prefix, monkeypatch) -> RedisEventStore:
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)
    client = redis.Redis.from_url(redis_server)
    yield RedisEventStore(client, prefix=key_prefix)
    client.close()


@pytest.fixture
def game(store) -> str:
    # Hand 1 scored (about 77 events with the creation and joins), hand 2 in play.
    play_game(store, "analysed", seed="analyse", stop_after=100)
    return "analysed"


def test_the_use_case_analyses_only_finished_hands(store, game) -> None:
    analyst = HandAnalyst(store)
    small = AnalysisBudget(samples=4)
    one = analyst.analyse(game, 1, budget=small)
    assert one.hand_number == 1 and one.seed == f"{game}/1"
    assert sum(1 for d in one.decisions if d.kind == "play") == 52
    assert analyst.analyse(game, 1, budget=small) == one  # the same seed, the same figures
    with pytest.raises(HandInProgress):
        analyst.analyse(game, 2, budget=small)
    with pytest.raises(HandInProgress):
        analyst.document(game, 2, budget=small)
    with pytest.raises(HandNotFound):
        analyst.analyse(game, 7, budget=small)
    with pytest.raises(GameNotFound):
        analyst.analyse("no-such-game", 1, budget=small)


def test_asking_twice_returns_the_kept_analysis(store, game) -> None:
    analyst = HandAnalyst(store)
    small = AnalysisBudget(samples=4)
    calls: list[int] = []
    first, kept = analyst.document(game, 1, small, progress=lambda d, t: calls.append(d))
    assert not kept and calls
    assert first == analyst.analyse(game, 1, budget=small).to_dict()
    calls.clear()
    second, kept = analyst.document(game, 1, small, progress=lambda d, t: calls.append(d))
    assert kept and second == first and calls == []  # no play-out ran
    # Another budget is another analysis; the key names the version and the budget.
    other, kept = analyst.document(game, 1, AnalysisBudget(samples=5))
    assert not kept and other["budget"]["samples"] == 5
    assert store.redis.exists(analyst.kept.key(game, 1, first["version"], 4))
    with pytest.raises(GameNotFound):
        analyst.document("no-such-game", 1, small)


def test_a_kept_analysis_expires_and_is_worked_out_again(store, game) -> None:
    """Kept for KEPT_SECONDS after it was worked out (every stored byte has an end), one kept
    before there was a time to live is given one when read, and one gone is worked out again."""
    analyst = HandAnalyst(store)
    small = AnalysisBudget(samples=4)
    first, _ = analyst.document(game, 1, small)
    key = analyst.kept.key(game, 1, ANALYSIS_VERSION, small.samples)
    assert KEPT_SECONDS - 60 < store.redis.ttl(key) <= KEPT_SECONDS
    store.redis.persist(key)  # as kept before analyses expired
    assert analyst.document(game, 1, small) == (first, True)
    assert KEPT_SECONDS - 60 < store.redis.ttl(key) <= KEPT_SECONDS
    store.redis.delete(key)  # its time is up
    assert analyst.document(game, 1, small) == (first, False)


def test_the_command_prints_text_or_json_and_refuses_a_hand_in_play(store, game, capsys) -> None:
    assert main(["analyse", game, "1", "--samples", "4", "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["hand_number"] == 1 and document["budget"]["samples"] == 4
    assert len(document["seats"]) == 4
    assert {d["kind"] for d in document["decisions"]} >= {"pass", "play"}
    assert "decisions" in captured.err  # the progress bar
    assert main(["analyse", game, "1", "--samples", "4", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "seat 0: accuracy" in captured.out and "trick 13" in captured.out
    assert captured.err == ""
    # Each seat's line counts its marks as the JSON does, one mark in the singular.
    for seat, line in zip(document["seats"], _seat_lines(captured.out), strict=True):
        for key, one in (("inaccuracies", "inaccuracy"), ("mistakes", "mistake")):
            n = seat[key]
            assert f"{n} {one if n == 1 else key}," in line
        n = seat["blunders"]
        assert line.endswith(f"{n} blunder" + ("" if n == 1 else "s"))

    assert main(["analyse", game, "1", "--samples", "4"]) == 0  # kept from the first run
    captured = capsys.readouterr()
    assert "kept from an earlier analysis" in captured.err
    assert main(["analyse", game, "1", "--samples", "4", "--seed", "x", "--quiet"]) == 0
    assert "seed 'x'" in capsys.readouterr().out
    assert main(["analyse", game, "2", "--quiet"]) == 2
    assert "not finished" in capsys.readouterr().err
    assert main(["analyse", game, "9", "--quiet"]) == 2
    assert "no hand 9" in capsys.readouterr().err
    assert main(["analyse", "no-such-game", "1", "--quiet"]) == 2
    assert "no game" in capsys.readouterr().err


def _seat_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("seat ")]
