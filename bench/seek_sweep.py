"""seek_sweep: what one matchmaking sweep costs with a pool full of seeks nobody can accept.

Project: CPU time of this process (the worker's side: reads, decoding, comparisons) for one
``Matchmaker.sweep`` of a pool holding ``--jammers`` seeks with a rating range nobody has, and
three ordinary seekers a table short, on a throwaway redis-server. Issue 32: with the oldest-200
window, such a pool cost a worker about 30 ms of CPU a second and paired nobody behind it.

Baseline, in the same run: the sweep of a pool holding the three ordinary seekers only, so
``ratio`` says how much the jammers add: a sweep's cost is bounded whatever a pool holds, so
it stays near 1 as ``--jammers`` grows. Rounds alternate; the median round is reported.
"""

from __future__ import annotations

import time

import redis

from bench.common import RedisServer, Report, alternate, median, parser
from service.app.game_service import GameService
from service.app.matchmaking import Matchmaker, SeekRequest
from service.app.players import Player
from service.store.event_store import RedisEventStore
from service.store.seeks import SeekStore

SWEEPS = 20  # per round: one sweep is well under a millisecond of timer resolution


def matchmaker(client: redis.Redis, prefix: str, jammers: int) -> Matchmaker:
    """A matchmaker whose 4-player pool holds ``jammers`` jamming seeks and 3 ordinary ones."""
    store = RedisEventStore(client, prefix=prefix)
    made = Matchmaker(SeekStore(client, prefix), GameService(store), None, lambda _: None)  # type: ignore[arg-type]
    jam = SeekRequest(players=4, rating_range=(900.0, 1000.0))
    for i in range(jammers):
        made.post(Player(f"pl_jam{i}", f"jam{i}", "", ""), jam)
    for i in range(3):
        made.post(Player(f"pl_own{i}", f"own{i}", "", ""), SeekRequest(players=4))
    return made


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--jammers", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        jammed = matchmaker(client, "bench-jammed", args.jammers)
        empty = matchmaker(client, "bench-empty", 0)

        def sweeps(made: Matchmaker) -> float:
            started = time.process_time()
            for _ in range(SWEEPS):
                made.sweep()
            return (time.process_time() - started) / SWEEPS * 1000

        results = alternate(
            {"jammed": lambda: sweeps(jammed), "empty": lambda: sweeps(empty)}, args.rounds
        )
    report = Report("seek_sweep")
    report.add("jammers", args.jammers)
    report.add("sweep_cpu_jammed", median(results["jammed"]), "ms")
    report.add("sweep_cpu_empty", median(results["empty"]), "ms")
    ratio = median(results["jammed"]) / max(median(results["empty"]), 1e-9)
    report.add("ratio", ratio)
    report.target("sweep_cpu_jammed", median(results["jammed"]) < 30, "< 30 ms a sweep (a second)")
    report.emit(args.json)


if __name__ == "__main__":
    main()
