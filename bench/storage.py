"""storage: Redis memory per finished game, before and after the games move to the archive.

On a throwaway redis-server, ``--games`` standard games to 100 (seeded ``random`` bots, played
with the pure domain: tests/projections/games.py, one append per command, as the service
appends) are recorded through ``RedisEventStore.append``; the projector (with the public log)
applies them; then the archiver (service/app/archiver.py, ``after_seconds=0``) moves every one
to an archive in a temporary directory. Reported:

- Redis ``used_memory`` before the games (the baseline, same run), with them hot, and after they
  moved; the difference after archiving against the baseline, and per game;
- the archive's bytes per game (the objects' sizes) and the time the archiver took per game;
- loading a game for a replay (``Replay.state_at`` at its last event: the whole log read and
  folded) cold, the archived game (its object read from disk, decompressed and its chain
  recomputed each time) against a hot copy of the same game (the same events under another id,
  in Redis), median of ``--loads`` alternating runs, the game chosen with ``--hands`` hands.

These games lack the service's seed commitments (two 64-hex strings per hand), so a service's
game archives a few hundred bytes larger (tests/store/test_archive_format.py measures one).
"""

from __future__ import annotations

import random
import tempfile
import time

import redis

from bench.common import RedisServer, Report, median, parser
from domain import RuleOptions
from service.app.archiver import Archiver
from service.app.projector import Projector
from service.app.replay import Replay
from service.app.transparency import Appender
from service.store.archive import attach
from service.store.event_store import RedisEventStore
from service.store.read_models import ProjectionStore
from tests.projections.games import GamePlan, append_batch, play_game


def _record(store: RedisEventStore, plan: GamePlan) -> None:
    versions = {plan.game_id: 0}
    for i in range(len(plan.batches)):
        append_batch(store, plan, i, versions)


def _hands(plan: GamePlan) -> int:
    return sum(1 for batch in plan.batches for e in batch if e.type == "HandDealt")


def _used(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=40, help="finished games recorded")
    p.add_argument("--hands", type=int, default=10, help="hands of the game loaded for a replay")
    p.add_argument("--loads", type=int, default=15, help="timed loads of each copy")
    p.add_argument("--seed", type=int, default=33)
    args = p.parse_args()
    report = Report("storage")
    rng = random.Random(args.seed)
    rules = RuleOptions(score_limit=100)
    with RedisServer() as server, tempfile.TemporaryDirectory() as archive_dir:
        client = redis.Redis.from_url(server.url)
        store = RedisEventStore(client, prefix="bench")
        archive = attach(store, archive_dir)
        projections = ProjectionStore(store)
        projector = Projector(projections, consumer="bench", public_log=Appender(store, "b/log"))
        projector.ensure_groups()
        projections.ensure_generation()
        # Warm-up: one game through the whole cycle first, so the baseline holds what Redis
        # keeps whatever the number of games (scripts, buffers, the first keys' structures).
        warm = play_game("warm-up", rules, rng)
        _record(store, warm)
        while projector.poll(block_ms=0):
            pass
        Archiver(store, archive, after_seconds=0, projections=projections).run_once()
        client.execute_command("MEMORY", "PURGE")
        before = _used(client)

        plans = [play_game(f"g{i:05d}", rules, rng) for i in range(args.games)]
        started = time.perf_counter()
        for plan in plans:
            _record(store, plan)
        while projector.poll(block_ms=0):
            pass
        recorded = time.perf_counter() - started
        hot = _used(client)

        started = time.perf_counter()
        archiver = Archiver(store, archive, after_seconds=0, projections=projections)
        moved = 0
        while done := archiver.run_once().archived:
            moved += len(done)
        moving = time.perf_counter() - started
        client.execute_command("MEMORY", "PURGE")  # give freed pages back (jemalloc)
        after = _used(client)
        sizes = [archive.record_of(plan.game_id).bytes for plan in plans]
        total_bytes = sum(sizes)

        # One game of about --hands hands, archived; a hot copy of its events beside it.
        chosen = min(plans, key=lambda plan: abs(_hands(plan) - args.hands))
        copy = GamePlan(f"hot-{chosen.game_id}", chosen.batches)
        _record(store, copy)
        replay = Replay(store)
        version = store.version(chosen.game_id)
        assert store.read(copy.game_id)[-1].hash != store.read(chosen.game_id)[-1].hash  # ids
        cold_hot, cold_archived = [], []
        for _ in range(args.loads):
            t = time.perf_counter()
            hot_state = replay.state_at(copy.game_id, version)
            cold_hot.append(time.perf_counter() - t)
            archive._cache.clear()  # cold: the object read, decompressed, its chain recomputed
            t = time.perf_counter()
            archived_state = replay.state_at(chosen.game_id, version)
            cold_archived.append(time.perf_counter() - t)
        assert hot_state.state.scores == archived_state.state.scores

    n = len(plans)
    report.add("games", n)
    report.add("games archived", moved)
    report.add("events per game (mean)", sum(sum(map(len, p.batches)) for p in plans) / n)
    report.add("used_memory before (baseline)", before / 2**20, "MiB")
    report.add("used_memory with the games hot", hot / 2**20, "MiB")
    report.add("used_memory after archiving", after / 2**20, "MiB")
    report.add("hot, per game", (hot - before) / n / 1024, "KiB")
    report.add("left in Redis after archiving, per game", (after - before) / n, "bytes")
    report.add("archive, per game (mean)", total_bytes / n / 1024, "KiB")
    report.add("archive, per game (max)", max(sizes) / 1024, "KiB")
    report.add("record + project, per game", recorded / n * 1000, "ms")
    report.add("archiving, per game", moving / n * 1000, "ms")
    report.add("replay load hands", _hands(chosen))
    report.add("replay load, hot (cold cache)", median(cold_hot) * 1000, "ms")
    report.add("replay load, archived (cold)", median(cold_archived) * 1000, "ms")
    ratio = median(cold_archived) / median(cold_hot)
    report.add("archived / hot", ratio, "x")
    report.target("archive per game", total_bytes / n <= 12 * 1024, "<= 12 KiB")
    report.target("archived load", ratio <= 3, "<= 3x the hot cold load")
    report.target(
        "Redis after 1,000 games",
        (after - before) / n * 1000 <= 5 * 2**20,
        "within 5 MB of the baseline (scaled from --games)",
    )
    report.emit(args.json)


if __name__ == "__main__":
    main()
