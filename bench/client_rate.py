"""The request rate of a legitimate client playing at full speed against bots: the Python
client's README loop (clients/python/README.md), game after game against a running server, with
every request it sends recorded. Prints, per rate-limited kind (service/api/rate_limits.py), the
most requests of that kind seen in any 1-second and any 60-second window (per token for
commands, per address for the others): the default limits (service/settings.py rate_limit_*)
must sit above these figures.

    python -m bench.client_rate                      # full games (score limit 100)
    python -m bench.client_rate --score-limit 1 --games 25  # the README's one-hand games

Against its own ``hearts serve`` without rate limits (bench/common.py), or ``--url``'s server
(whose limits in force then shape what is measured: the client waits out a 429, and the count
of 429s is printed too). No baseline: a count of requests, not a timing."""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import defaultdict
from collections.abc import Sequence

import httpx
from hearts_client import HeartsClient

from bench.common import HeartsServer, RedisServer

COMMAND = re.compile(r"/games/[^/]+/(pass|play|moon|contribution|seats/\d+/(bot|back))$")


def kind_of(request: httpx.Request) -> str | None:
    """The rate-limited kind of a request (None: unlimited, as the game view is)."""
    path = request.url.path.removeprefix("/api/v1")
    if request.method != "POST":
        return None
    if path == "/games":
        return "create"
    if re.fullmatch(r"/games/[^/]+/seats", path):
        return "join"
    if COMMAND.search(path):
        return "command:" + request.headers.get("Authorization", "")[-12:]
    return None


def peak(times: Sequence[float], window: float) -> int:
    """The most of ``times`` (sorted) within any ``window`` seconds."""
    best, start = 0, 0
    for end, now in enumerate(times):
        while now - times[start] > window:
            start += 1
        best = max(best, end - start + 1)
    return best


def play(url: str, games: int, score_limit: int) -> dict[str, object]:
    sent: dict[str, list[float]] = defaultdict(list)
    limited = 0

    def record(response: httpx.Response) -> None:
        nonlocal limited
        limited += response.status_code == 429
        kind = kind_of(response.request)
        if kind is not None:
            sent[kind].append(time.monotonic())

    http = httpx.Client(base_url=url, timeout=30, event_hooks={"response": [record]})
    started = time.monotonic()
    with HeartsClient(url, http=http) as hearts:
        for _ in range(games):  # the README's loop, one game after another
            rules = {"score_limit": score_limit}
            game = hearts.create_game(seats=[None, "random", "random", "random"], rules=rules)
            me = hearts.join(game["id"], "ann")
            while me.wait_for_turn()["phase"] != "finished":
                view = me.view
                if view["phase"] == "passing":
                    me.pass_cards(view["legal_cards"][: view["cards_to_pass"]])
                elif view["phase"] == "moon_choice":
                    me.choose_moon("add_to_others")
                else:
                    me.play(view["legal_cards"][0])
    elapsed = time.monotonic() - started
    commands = [times for kind, times in sent.items() if kind.startswith("command:")]
    figures: dict[str, object] = {"games": games, "seconds": round(elapsed, 1), "429s": limited}
    kinds = (("create", [sent["create"]]), ("join", [sent["join"]]), ("command", commands))
    for kind, series in kinds:
        figures[f"{kind}_per_second"] = max((peak(s, 1.0) for s in series), default=0)
        figures[f"{kind}_per_minute"] = max((peak(s, 60.0) for s in series), default=0)
    figures["commands_per_game"] = round(sum(len(s) for s in commands) / games, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running server (default: start one without limits)")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--score-limit", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.url:
        figures = play(args.url, args.games, args.score_limit)
    else:
        with RedisServer() as redis, HeartsServer(redis.url) as server:
            figures = play(f"http://127.0.0.1:{server.port}", args.games, args.score_limit)
    if args.json:
        print(json.dumps(figures))
        return
    for name, value in figures.items():
        print(f"{name:>22}: {value}")


if __name__ == "__main__":
    main()
