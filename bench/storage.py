"""storage: Redis memory and restart time per finished game, before and after the archive.

On a throwaway redis-server with the append-only file on (as ``hearts serve`` runs its own),
``--games`` all-bot games (standard rules to 100, four ``random`` bots) are played by the
service's own application layer in this process: ``GameService.create`` (with a deal seed, so
every hand's seed is committed ahead as the service does) and its bot runner, one append per
move through ``RedisEventStore.append``: the events, seed commitments and command ids a served
game has. The projector (with the public log) applies them; the archiver
(service/app/archiver.py, ``after_seconds=0``) moves them to an archive in a temporary
directory. In two steps: a tenth of the games (``--first``) are played and archived, then the
rest, so the restart is timed with few and with many games archived. Reported:

- Redis ``used_memory`` before the games (the baseline, same run: after one warm-up game went
  through the whole cycle), with the games hot, and after they moved: the difference after
  archiving against the baseline, and per game; and where it is, by kind of key
  (``MEMORY USAGE`` summed over the keys of each kind, baseline's subtracted);
- the archive's bytes per game (the objects' sizes) and the time the archiver took per game;
- loading a game for a replay (``Replay.state_at`` at its last event: the whole log read and
  folded) cold: the archived game (its object read from disk, decompressed and its chain
  recomputed each time) against a hot copy of the same events (appended under another id, in
  Redis), median of ``--loads`` alternating runs, the game chosen with ``--hands`` hands;
- a restart: after ``BGREWRITEAOF``, the append-only directory is copied and a second
  redis-server started on the copy, timed until it answers with ``loading:0`` (median of
  ``--restarts``; also the load time Redis logs itself, the files' bytes, and the median time of
  ``DEBUG LOADAOF``: the same load in place, without a process's start), at the baseline, with
  ``--first`` games archived, with the other games hot, and with all of them archived. Before
  each measure the public log's full tiles are cut to the archive, as signing a checkpoint
  does in the service.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import redis

from bench.common import RedisServer, Report, median, parser
from service.app.archiver import Archiver
from service.app.deal_plan import DealPlan
from service.app.game_service import GameService
from service.app.projector import Projector
from service.app.replay import Replay
from service.app.transparency import Appender
from service.store.archive import GameArchive, attach
from service.store.envelope import NewEvent
from service.store.event_store import RedisEventStore
from service.store.game_tree import GameTree
from service.store.read_models import ProjectionStore
from tests.redis_helpers import free_port

RULES = {"score_limit": 100}
_LOADED = re.compile(rb"DB loaded from append only file: ([0-9.]+) seconds")


def _used(client: redis.Redis) -> int:
    client.execute_command("MEMORY", "PURGE")  # give freed pages back (jemalloc)
    return int(client.info("memory")["used_memory"])


def _play(service: GameService, game_id: str, rng: random.Random) -> int:
    """One all-bot game played to its end by the service's bot runner; its hands."""
    seed = "".join(rng.choice("0123456789abcdef") for _ in range(64))
    service.create(
        game_id, rules=RULES, seats=["random"] * 4, plan=DealPlan(seed=seed), idempotency=None
    )
    _, snap = service.background.runner.run(game_id, "bench")
    state = snap.state.state
    assert state.phase.name == "FINISHED", (game_id, state.phase)
    return state.hand_number


def _project(projector: Projector) -> None:
    while projector.poll(block_ms=0):
        pass


def _archive(archiver: Archiver) -> int:
    moved = 0
    while done := archiver.run_once().archived:
        moved += len(done)
    return moved


_ID_PART = re.compile(r"^(g\d+|warm-up|hot-.*|[0-9a-f]{16,}|\d+)$")


def _kind(key: bytes) -> str:
    """A key's kind: its name with partitions, game ids and numbers starred."""
    parts = key.decode("utf-8", "replace").split(":")
    parts = [re.sub(r"\{p\d+\}", "{p*}", part) for part in parts]
    return ":".join("*" if _ID_PART.match(part) else part for part in parts)


def _usage_by_kind(client: redis.Redis) -> dict[str, tuple[int, int]]:
    """kind -> (keys, MEMORY USAGE summed)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    keys = list(client.scan_iter(count=1000))
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.memory_usage(key, samples=0)
    for key, usage in zip(keys, pipe.execute(), strict=True):
        entry = counts[_kind(key)]
        entry[0] += 1
        entry[1] += int(usage or 0)
    return {kind: (n, size) for kind, (n, size) in counts.items()}


def _checkpoint(tree: GameTree) -> None:
    """What signing a checkpoint does to the public log (service/app/transparency.py): its full
    tiles written to the blob store and removed from Redis."""
    tree.cut_tiles(tree.size())


def _reload(client: redis.Redis, repeats: int) -> float:
    """Median seconds of ``DEBUG LOADAOF``: the server empties itself and loads its rewritten
    append-only file again, the load a restart does without a process's start."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        client.execute_command("DEBUG", "LOADAOF")
        times.append(time.perf_counter() - t)
    return median(times)


def _restart(client: redis.Redis, repeats: int) -> tuple[float, float, int, float]:
    """Rewrite the append-only file, then start a redis-server on a copy of it ``repeats``
    times: (median seconds until it answers with loading:0, median load seconds as Redis logs
    them, bytes of the append-only files, median seconds of reloading it in place)."""
    client.bgrewriteaof()
    while True:
        info = client.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            break
        time.sleep(0.05)
    assert info["aof_last_bgrewrite_status"] == "ok", info
    source = (
        Path(client.config_get("dir")["dir"]) / client.config_get("appenddirname")["appenddirname"]
    )
    binary = os.environ.get("HEARTS_REDIS_SERVER") or shutil.which("redis-server") or ""
    answered, logged = [], []
    size = sum(f.stat().st_size for f in source.iterdir())
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="hearts-bench-restart-") as where:
            shutil.copytree(source, Path(where) / "appendonlydir")
            port = free_port()
            logfile = Path(where) / "redis.log"
            started = time.perf_counter()
            process = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", where]
                + ["--appendonly", "yes", "--save", "", "--logfile", str(logfile)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                probe = redis.Redis(port=port, socket_timeout=5)
                while True:
                    try:
                        if not int(probe.info("persistence")["loading"]):
                            break
                    except redis.ConnectionError:
                        if process.poll() is not None:
                            raise RuntimeError("redis-server exited while loading") from None
                    time.sleep(0.002)
                answered.append(time.perf_counter() - started)
                probe.close()
            finally:
                process.terminate()
                process.wait(timeout=30)
            found = _LOADED.findall(logfile.read_bytes())
            logged.append(float(found[-1]) if found else float("nan"))
    return median(answered), median(logged), size, _reload(client, repeats)


def _hot_copy(store: RedisEventStore, game_id: str) -> str:
    """The game's events appended again under another id, command by command."""
    copy = f"hot-{game_id}"
    events = store.read(game_id)
    version = 0
    batch: list[NewEvent] = []
    for i, event in enumerate(events):
        batch.append(NewEvent(event.type, event.schema_version, event.payload))
        if i + 1 == len(events) or events[i + 1].command_id != event.command_id:
            version = store.append(copy, version, batch, f"copy:{event.command_id}").version
            batch = []
    return copy


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=40, help="finished games recorded")
    p.add_argument("--first", type=int, default=None, help="of them archived first (a tenth)")
    p.add_argument("--hands", type=int, default=10, help="hands of the game loaded for a replay")
    p.add_argument("--loads", type=int, default=15, help="timed loads of each copy")
    p.add_argument("--restarts", type=int, default=3, help="timed restarts at each size")
    p.add_argument("--seed", type=int, default=33)
    args = p.parse_args(argv)
    first = args.first if args.first is not None else max(1, args.games // 10)
    report = Report("storage")
    rng = random.Random(args.seed)
    with (
        RedisServer(("--appendonly", "yes", "--enable-debug-command", "yes")) as server,
        tempfile.TemporaryDirectory() as archive_dir,
    ):
        client = redis.Redis.from_url(server.url)
        store = RedisEventStore(client, prefix="bench")
        archive: GameArchive = attach(store, archive_dir)
        service = GameService(store, bot_moves_per_request=0, max_bot_games=0)
        projections = ProjectionStore(store)
        projector = Projector(projections, consumer="bench", public_log=Appender(store, "b/log"))
        projector.ensure_groups()
        projections.ensure_generation()
        archiver = Archiver(store, archive, after_seconds=0, projections=projections)
        tree = GameTree(client, store.prefix, archive.blobs)
        # Warm-up: one game through the whole cycle first, so the baseline holds what Redis
        # keeps whatever the number of games (scripts, buffers, the first keys' structures).
        _play(service, "warm-up", rng)
        _project(projector)
        _archive(archiver)
        _checkpoint(tree)
        before = _used(client)
        kinds_before = _usage_by_kind(client)
        restart_base = _restart(client, args.restarts)

        ids = [f"g{i:05d}" for i in range(args.games)]
        hands: dict[str, int] = {}
        timing = {"play": 0.0, "project": 0.0, "archive": 0.0}

        def cycle(batch: list[str], archive_them: bool) -> int:
            t = time.perf_counter()
            for game_id in batch:
                hands[game_id] = _play(service, game_id, rng)
            timing["play"] += time.perf_counter() - t
            t = time.perf_counter()
            _project(projector)
            timing["project"] += time.perf_counter() - t
            if not archive_them:
                return 0
            t = time.perf_counter()
            moved = _archive(archiver)
            timing["archive"] += time.perf_counter() - t
            return moved

        moved = cycle(ids[:first], archive_them=True)
        _checkpoint(tree)
        some_archived = _used(client)
        restart_some = _restart(client, args.restarts)
        cycle(ids[first:], archive_them=False)
        hot = _used(client)
        restart_hot = _restart(client, args.restarts)
        t = time.perf_counter()
        moved += _archive(archiver)
        timing["archive"] += time.perf_counter() - t
        _checkpoint(tree)
        after = _used(client)
        kinds_after = _usage_by_kind(client)
        restart_all = _restart(client, args.restarts)
        sizes = [archive.record_of(game_id).bytes for game_id in ids]
        tile_bytes = sum(archive.blobs.size(name) or 0 for name in archive.blobs.names("tile/"))
        events = [archive.record_of(game_id).version for game_id in ids]

        # One game of about --hands hands, archived; a hot copy of its events beside it.
        chosen = min(ids, key=lambda game_id: abs(hands[game_id] - args.hands))
        copy = _hot_copy(store, chosen)
        replay = Replay(store)
        version = store.version(chosen)
        cold_hot, cold_archived = [], []
        for _ in range(args.loads):
            t = time.perf_counter()
            hot_state = replay.state_at(copy, version)
            cold_hot.append(time.perf_counter() - t)
            archive._cache.clear()  # cold: the object read, decompressed, its chain recomputed
            t = time.perf_counter()
            archived_state = replay.state_at(chosen, version)
            cold_archived.append(time.perf_counter() - t)
        assert hot_state.state.scores == archived_state.state.scores

    n = len(ids)
    rest = n - first
    report.add("games", n)
    report.add("games archived", moved)
    report.add("events per game (mean)", sum(events) / n)
    report.add("hands per game (mean)", sum(hands.values()) / n)
    report.add("used_memory before (baseline)", before / 2**20, "MiB")
    report.add(f"used_memory, {first} archived", some_archived / 2**20, "MiB")
    report.add(f"used_memory, {first} archived + {rest} hot", hot / 2**20, "MiB")
    report.add(f"used_memory, {n} archived", after / 2**20, "MiB")
    report.add("hot, per game", (hot - some_archived) / max(1, rest) / 1024, "KiB")
    report.add(f"after {n} games archived - baseline", (after - before) / 2**20, "MiB")
    report.add("left in Redis after archiving, per game", (after - before) / n, "bytes")
    grown = {
        kind: (keys - kinds_before.get(kind, (0, 0))[0], size - kinds_before.get(kind, (0, 0))[1])
        for kind, (keys, size) in kinds_after.items()
    }
    for kind, (keys, size) in sorted(grown.items(), key=lambda item: -item[1][1]):
        if abs(size) >= n * 8:  # the kinds that hold at least 8 bytes a game
            report.add(f"  left per game in {kind} (+{keys} keys)", size / n, "bytes")
    report.add("archive, per game (mean)", sum(sizes) / n / 1024, "KiB")
    report.add("archive, per game (max)", max(sizes) / 1024, "KiB")
    report.add("public log tiles in the archive, per game", tile_bytes / (n + 1), "bytes")
    report.add("play (service, in process), per game", timing["play"] / n * 1000, "ms")
    report.add("project, per game", timing["project"] / n * 1000, "ms")
    report.add("archiving, per game", timing["archive"] / n * 1000, "ms")
    report.add("replay load hands", hands[chosen])
    report.add("replay load, hot (cold cache)", median(cold_hot) * 1000, "ms")
    report.add("replay load, archived (cold)", median(cold_archived) * 1000, "ms")
    ratio = median(cold_archived) / median(cold_hot)
    report.add("archived / hot", ratio, "x")
    restarts = {
        "baseline (warm-up only)": restart_base,
        f"{first} archived": restart_some,
        f"{first} archived + {rest} hot": restart_hot,
        f"{n} archived": restart_all,
    }
    for label, (answered, logged, size, reload) in restarts.items():
        report.add(f"restart, {label}: answers after", answered * 1000, "ms")
        report.add(f"restart, {label}: AOF load (Redis's log)", logged * 1000, "ms")
        report.add(f"restart, {label}: AOF reload in place", reload * 1000, "ms")
        report.add(f"restart, {label}: AOF bytes", size)
    report.add(
        "AOF bytes per archived game (all archived - baseline)",
        (restart_all[2] - restart_base[2]) / n,
        "bytes",
    )
    report.add(
        "AOF bytes per hot game",
        (restart_hot[2] - restart_some[2]) / max(1, rest),
        "bytes",
    )
    report.target("archive per game", sum(sizes) / n <= 12 * 1024, "<= 12 KiB")
    report.target("archived load", ratio <= 3, "<= 3x the hot cold load")
    scaled = "" if n >= 1000 else f" (scaled from {n} games)"
    report.target(
        "Redis after 1,000 games",
        (after - before) / n * 1000 <= 5 * 10**6,
        f"within 5 MB of the baseline{scaled}",
    )
    # The restart's growth with the games archived: the load of the rewritten file with all of
    # them archived against a tenth (1 ms: the resolution of Redis's own figure), and how fast
    # it grows per game archived against per game hot.
    load_growth = restart_all[3] - restart_some[3]
    per_archived = load_growth / max(1, n - first)
    per_hot = (restart_hot[3] - restart_some[3]) / max(1, rest)
    report.add("AOF reload, per archived game", per_archived * 1e6, "us")
    report.add("AOF reload, per hot game", per_hot * 1e6, "us")
    report.target(
        "restart with games archived",
        load_growth <= 0.001,
        f"the load with all {n} archived within 1 ms of the load with {first} archived",
    )
    report.emit(args.json)


if __name__ == "__main__":
    main()
