"""bench/capacity.py keeps working: one table, one spectator, bot pace, a second.

Not a timing: the figures are present and sane (moves made, every follower saw every move it
should, no error, the streams open that the table needs), not fast. It starts its own
redis-server and ``hearts serve``, as the benchmark does.
"""

from __future__ import annotations

import math
import threading

import pytest

from bench import capacity


def _run(argv: list[str]) -> dict:
    """capacity.main in a thread of its own: it runs its own asyncio loop, and a test before
    this one in the same worker (Playwright's sync API) may have left one running here."""
    done: dict = {}

    def run() -> None:
        try:
            done["out"] = capacity.main(argv)
        except BaseException as error:  # raised again in the test's thread
            done["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in done:
        raise done["error"]
    return done["out"]


@pytest.mark.parametrize("mode", ["game", "player"])
def test_a_tiny_run_has_sane_figures(mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--tables", "1", "--spectators", "1", "--pace", "bot", "--mode", mode]
    argv += ["--seconds", "1", "--warmup", "0", "--settle", "0.2", "--grace", "0.5"]
    argv += ["--workers", "1", "--json"]
    out = _run(argv)
    assert '"benchmark": "capacity' in capsys.readouterr().out
    for target in ("hearts", "fanout"):
        (figures,) = out[target]
        assert figures["tables"] == 1
        assert figures["moves"] > 0
        assert figures["moves_per_second"] > 0
        assert figures["errors"] == 0, figures["error_samples"]
        assert figures["deliveries_missed"] == 0
        # Four seats' streams (game streams, players' own, or the fan-out's) and a spectator's.
        assert figures["streams_open"] == 5
        assert figures["deliveries"] > 0
        assert 0 <= figures["delivery_p50_ms"] <= figures["delivery_p99_ms"]
        assert figures["delivery_p99_ms"] <= figures["delivery_max_ms"]
        assert all(math.isfinite(figures[f"cpu_{name}"]) for name in ("workers", "redis", "client"))
        assert figures["cpu_workers"] > 0
    # Every other follower of the table saw every move: three seats and the spectator in game
    # mode; in player mode the spectator and the seats whose turn a move began (a pass while
    # the others still choose theirs begins nobody's).
    hearts = out["hearts"][0]
    if mode == "game":
        assert hearts["deliveries"] == 4 * hearts["moves"]
    else:
        assert hearts["moves"] <= hearts["deliveries"] <= 5 * hearts["moves"]
    assert out["fanout"][0]["deliveries"] == 4 * out["fanout"][0]["moves"]
