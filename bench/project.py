"""project: events per second through the projector, and rebuilding every read model.

On a throwaway redis-server, random games (bench/randomplay.py; ``--score-limit`` makes them
short, one hand by default, so that thousands fit in the time) are recorded through
``RedisEventStore.append``, one append per game. Then:

- projector: after the first ``--projector-games`` games are recorded, a ``Projector`` (a
  consumer group of its own, the same code as ``hearts project``) takes their log from the
  start, applying and acknowledging batch by batch until it has caught up: its events/s.
- rebuild: once all ``--games`` are recorded, ``service.app.projector.rebuild`` folds every
  partition log into a fresh generation of the read models (scoreboards, statistics, listings)
  and swaps it in: the time it takes, its events/s, and that time scaled to 10,000 games (the
  issue's size: ``--games 10000`` measures it directly, in about three times as long).

``--cluster``: the same again on a 3-master Redis Cluster (``redis+cluster://``), then both
runs' rates side by side.

Baseline, in the same run: the same partition logs read with raw ``XRANGE`` in batches of the
same size, undecoded: what any projector pays to read the log, so ``ratio`` is how much of the
projector's time that floor is.
"""

from __future__ import annotations

import random
import time

from bench.common import RedisClusterServers, RedisServer, Report, parser
from bench.randomplay import random_game
from domain.events import event_to_dict, event_type
from domain.rules import PRESETS, RuleOptions


def record(store: object, games: range, rules: RuleOptions, seed: int) -> tuple[int, float]:
    """Play and append the games numbered ``games``; (events appended, seconds appending)."""
    from service.store.envelope import NewEvent

    rng = random.Random(seed)
    events = 0
    appending = 0.0
    for n in games:
        game_id = f"bench-{n}"
        log = random_game(game_id, rules, rng)
        new = [NewEvent(event_type(e), e.schema_version, event_to_dict(e)) for e in log]
        start = time.perf_counter()
        store.append(game_id, 0, new, f"record-{n}")  # type: ignore[attr-defined]
        appending += time.perf_counter() - start
        events += len(new)
    return events, appending


def raw_read(store: object, batch: int) -> tuple[int, float]:
    """Every partition log read with XRANGE in batches, undecoded: (entries, seconds)."""
    redis = store.redis  # type: ignore[attr-defined]
    keys = store.partition_log_keys()  # type: ignore[attr-defined]
    start = time.perf_counter()
    entries = 0
    for key in keys:
        after = "-"
        while True:
            chunk = redis.xrange(key, after, "+", count=batch)
            if not chunk:
                break
            entries += len(chunk)
            last = chunk[-1][0]
            after = "(" + (last.decode() if isinstance(last, bytes) else last)
    return entries, time.perf_counter() - start


def project_all(projections: object, batch: int, generation: str) -> tuple[int, float]:
    """A fresh consumer group's projector, pinned to ``generation``, run until caught up."""
    from service.app.projector import Projector

    projector = Projector(
        projections,  # type: ignore[arg-type]
        group="bench-projector",
        consumer="bench",
        batch_size=batch,
        generation=generation,
    )
    projector.ensure_groups()
    start = time.perf_counter()
    while projector.poll(block_ms=0) > 0:
        pass
    return projector.applied, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=3000, help="games recorded, then rebuilt")
    p.add_argument("--projector-games", type=int, default=1000, help="of those, projected")
    p.add_argument("--score-limit", type=int, default=1, help="1: games of one hand")
    p.add_argument("--preset", default="standard", choices=sorted(PRESETS))
    p.add_argument("--batch", type=int, default=1000, help="log entries per step")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--cluster",
        action="store_true",
        help="also run on a 3-master Redis Cluster and compare (same run)",
    )
    args = p.parse_args(argv)

    backends = [("single", RedisServer)]
    if args.cluster:
        backends.append(("cluster", RedisClusterServers))
    runs = {name: measure(args, servers) for name, servers in backends}
    for name, figures in runs.items():
        _report(args, figures, "project" if len(runs) == 1 else f"project {name}")
    if args.cluster:
        report = Report("project cluster vs single")
        for figure in ("append", "projector", "rebuild", "raw"):
            for name, figures in runs.items():
                report.add(f"{name}_{figure}_events_per_second", figures[figure], "events/s")
            report.add(
                f"ratio_{figure}_cluster_to_single",
                runs["cluster"][figure] / runs["single"][figure],
            )
        report.note("same run, same machine: 1 redis-server vs a 3-master cluster on loopback")
        report.emit(args.json)


def measure(args, servers: type) -> dict:
    """Record, project, read raw and rebuild on ``servers()``; the figures by name."""
    from service.app.projector import rebuild
    from service.store.event_store import RedisEventStore
    from service.store.read_models import ProjectionStore, new_generation_id
    from service.store.redis_server import client_for

    options = {**PRESETS[args.preset].to_dict(), "score_limit": args.score_limit}
    rules = RuleOptions.from_dict(options)
    first = min(args.projector_games, args.games)
    with servers() as server:
        client = client_for(server.url)
        store = RedisEventStore(client, prefix="bench")
        projections = ProjectionStore(store)
        started = time.perf_counter()
        events, appending = record(store, range(first), rules, args.seed)
        projected, projecting = project_all(projections, args.batch, new_generation_id())
        more, appending_more = record(store, range(first, args.games), rules, args.seed + 1)
        events += more
        appending += appending_more
        recording = time.perf_counter() - started - projecting

        raw_entries, raw_seconds = raw_read(store, args.batch)
        rebuilt = rebuild(projections, batch_size=args.batch, grace_seconds=1)
        raw_entries2, raw_seconds2 = raw_read(store, args.batch)
        players = projections.players(projections.as_of())
        client.close()

    assert raw_entries == raw_entries2 == events, (raw_entries, raw_entries2, events)
    assert rebuilt.entries == events, (rebuilt.entries, events)
    return {
        "first": first,
        "events": events,
        "recording": recording,
        "append": events / appending,
        "projector": projected / projecting,
        "rebuild": events / rebuilt.seconds,
        "rebuild_seconds": rebuilt.seconds,
        "raw": 2 * events / (raw_seconds + raw_seconds2),
        "players": len(players),
    }


def _report(args, f: dict, title: str) -> None:
    events, raw_rate, rebuild_rate, projector_rate = (
        f["events"],
        f["raw"],
        f["rebuild"],
        f["projector"],
    )
    report = Report(title)
    report.add("games", args.games)
    report.add("score_limit", args.score_limit)
    report.add("events", events)
    report.add("events_per_game", events / args.games)
    report.add("record_seconds", f["recording"], "s")
    report.add("append_events_per_second", f["append"], "events/s")
    report.add("projector_games", f["first"])
    report.add("projector_events_per_second", projector_rate, "events/s")
    report.add("rebuild_seconds", f["rebuild_seconds"], "s")
    report.add("rebuild_events_per_second", rebuild_rate, "events/s")
    report.add("rebuild_seconds_per_10000_games", f["rebuild_seconds"] * 10_000 / args.games, "s")
    report.add("baseline_raw_xrange_events_per_second", raw_rate, "events/s")
    report.add("ratio_rebuild_to_baseline", rebuild_rate / raw_rate)
    report.add("ratio_projector_to_baseline", projector_rate / raw_rate)
    report.add("players_in_leaderboard", f["players"])
    report.note("baseline: the partition logs read with XRANGE, same batch size, undecoded")
    if args.games != 10_000:
        report.note("rebuild_seconds_per_10000_games is scaled from this run's rate")
    report.emit(args.json)


if __name__ == "__main__":
    main()
