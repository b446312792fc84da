"""memory: resident memory of a ``hearts serve`` worker holding 1,000 active games.

Starts a throwaway redis-server and ``hearts serve`` with one worker (so that every game lands
in that worker's state cache), then opens ``--games`` games over HTTP on 127.0.0.1: each has one
player and three ``random`` bots; the player joins (the hand is dealt, the bots pass) and passes
(the bots play up to the player's turn), so every game is mid-hand, cached, and waiting.

Baseline, in the same run: the same worker's resident memory (VmRSS) after a warm-up game, before
the 1,000: the stack at rest. Reported: both, the growth, and the growth per game.
"""

from __future__ import annotations

import asyncio
import random
import time

from bench.api import Budget, Client, Connection, Stats
from bench.common import HeartsServer, RedisServer, Report, parser, rss_kib

SEATS = [None, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}]


async def open_game(client: Client) -> bool:
    """Create, join and pass: a game waiting on its player mid-hand. False on an error."""
    created = await client.call("create", "POST", "/api/v1/games", {"seats": SEATS})
    if created is None:
        return False
    game = f"/api/v1/games/{created['id']}"
    joined = await client.call("join", "POST", f"{game}/seats", {"name": "player"})
    if joined is None:
        return False
    view = joined["view"]
    if view["phase"] == "passing" and 0 in view["awaiting"]:
        cards = client.rng.sample(view["legal_cards"], view["cards_to_pass"])
        passed = await client.call(
            "pass", "POST", f"{game}/pass", {"cards": cards}, joined["token"]
        )
        return passed is not None
    return True


async def open_games(port: int, games: int, clients: int, stats: Stats, seed: int) -> int:
    budget = Budget(games * 4)
    todo = list(range(games))
    opened = 0

    async def worker(i: int) -> None:
        nonlocal opened
        conn = Connection(port, timeout=60)
        client = Client(conn, stats, random.Random(seed * 1000 + i), budget)
        while todo and budget.left():
            todo.pop()
            if await open_game(client):
                opened += 1
        conn.close()

    await asyncio.gather(*(worker(i) for i in range(clients)))
    return opened


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=1000, help="active games to open")
    p.add_argument("--clients", type=int, default=8, help="concurrent connections")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)

    stats = Stats()
    with RedisServer() as redis_server, HeartsServer(redis_server.url, workers=1) as server:
        (worker,) = server.worker_pids()
        asyncio.run(open_games(server.port, 3, 1, Stats(), 0))  # warm-up: imports, caches
        time.sleep(0.5)
        before = rss_kib(worker)
        started = time.perf_counter()
        opened = asyncio.run(open_games(server.port, args.games, args.clients, stats, args.seed))
        seconds = time.perf_counter() - started
        time.sleep(0.5)
        after = rss_kib(worker)
        assert server.worker_pids() == [worker], "the worker restarted"

    errors = sum(stats.errors.values())
    report = Report("memory")
    report.add("games_opened", opened)
    report.add("open_seconds", seconds, "s")
    report.add("baseline_worker_rss_mib", before / 1024, "MiB")
    report.add("worker_rss_mib", after / 1024, "MiB")
    report.add("ratio_to_baseline", after / before)
    report.add("growth_mib", (after - before) / 1024, "MiB")
    report.add("kib_per_game", (after - before) / max(opened, 1), "KiB")
    report.add("errors", errors)
    for sample in stats.error_samples:
        report.note(f"error: {sample}")
    report.note("one gunicorn worker; each game: 1 player mid-hand, 3 random bots, in its cache")
    report.emit(args.json)


if __name__ == "__main__":
    main()
