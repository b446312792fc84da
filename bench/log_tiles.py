"""log_tiles: the public log's proofs from tiles (c2sp.org/tlog-tiles) against the log before
tiles, and the Redis memory the tree keeps.

A throwaway redis-server is loaded with a log of ``--leaves`` finished games' heads in the
layout before tiles (every leaf hash in Redis), then, in alternating rounds (wall time):

- **tiles**: ``GameTree.inclusion`` of a random leaf in the whole tree, tiles cut into a blob
  store in a temporary directory (a cold tile cache each round: every tile read from disk);
- **baseline**: the proof as it was made before tiles, on a copy of the log left uncut: every
  leaf hash read (one LRANGE) and ``merkle.inclusion_proof`` over them.

Also: the time the first cut takes (the migration of a log written before tiles), the
tree's keys' ``MEMORY USAGE`` in Redis before and after it, and the static mirror
(``GameTree.mirror``: the checkpoint and its partial tiles put in the store) at that size and
after ``--grow`` more leaves: what it adds to Redis and to the store, and the time an
append of one of them takes (one script call: the figure that hashes passed as hex in JSON
would cost, if anything), wall and Redis CPU (``INFO commandstats``: the server's own time in
the script, far steadier than the wall time on a loaded machine).

    python -m bench.log_tiles                    # 100,000 games
    python -m bench.log_tiles --leaves 300000 --rounds 9
"""

from __future__ import annotations

import json
import random
import tempfile
import time

import redis
from hearts_client import merkle
from hearts_client.note import Head

from bench.common import RedisServer, Report, alternate, median, parser
from service.store.blobs import DiskBlobStore
from service.store.game_tree import GameTree

PREFIX = "bench"
OLD = "bench-old"  # the same log, never cut: the baseline reads it as the code before tiles did


def head(i: int) -> str:
    return Head("hearts.example/log", f"g{i:020x}", 700 + i % 90, f"{i:064x}").text()


def load_old_log(client: redis.Redis, leaves: int, prefix: str) -> None:
    """The layout before tiles: every leaf hash in :leaves, every head in :games."""
    for lo in range(0, leaves, 10_000):
        hi = min(lo + 10_000, leaves)
        pipe = client.pipeline(transaction=False)
        pipe.rpush(
            f"{prefix}:{{tlog}}:leaves",
            *[merkle.leaf_hash(head(i).encode()) for i in range(lo, hi)],
        )
        records = {f"g{i:020x}": json.dumps({"index": i, "head": head(i)}) for i in range(lo, hi)}
        pipe.hset(f"{prefix}:{{tlog}}:games", mapping=records)
        pipe.execute()


def tree_bytes(client: redis.Redis, *, games: bool) -> int:
    """MEMORY USAGE of the tree's keys (with or without the game index, :games)."""
    total = 0
    for key in client.scan_iter(match=f"{PREFIX}:{{tlog}}:*", count=1000):
        if not games and key.endswith(b":games"):
            continue
        total += client.memory_usage(key, samples=0) or 0
    return total


def _mirrored(tree: GameTree, size: int) -> int:
    """Put the tree of ``size`` in the store as a static mirror; the tree's Redis bytes then."""
    if not tree.mirror(size, f"bench checkpoint of {size}\n"):
        raise SystemExit(f"the mirror of {size} was not put")
    return tree_bytes(tree.redis, games=False)


def _partial_bytes(blobs: DiskBlobStore) -> int:
    return sum(blobs.size(name) or 0 for name in blobs.names("tile/") if ".p/" in name)


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--leaves", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--grow", type=int, default=1000, help="leaves appended after the first cut")
    args = p.parse_args()
    report = Report("log_tiles")
    with RedisServer() as server, tempfile.TemporaryDirectory() as directory:
        client = redis.Redis.from_url(server.url)
        load_old_log(client, args.leaves, PREFIX)
        load_old_log(client, args.leaves, OLD)
        before = tree_bytes(client, games=False)
        blobs = DiskBlobStore(directory)
        tree = GameTree(client, PREFIX, blobs)
        started = time.perf_counter()
        cut = tree.cut_tiles(args.leaves)
        report.add("first cut (migration)", time.perf_counter() - started, "s")
        report.add("tiles cut", cut)
        after = tree_bytes(client, games=False)
        report.add("redis bytes of the tree before tiles", before, "B")
        report.add("redis bytes of the tree after the cut", after, "B")
        index = tree_bytes(client, games=True) - after
        report.add("redis bytes of the tree after the mirror", _mirrored(tree, args.leaves), "B")
        report.add("store bytes of the mirror's partial tiles", _partial_bytes(blobs), "B")
        grown = args.leaves + args.grow
        client.config_resetstat()  # the appends' script calls only, in the figure below
        started = time.perf_counter()
        for i in range(args.leaves, grown):
            tree.append(f"g{i:020x}", head(i))
        appended = time.perf_counter() - started
        report.add("append of a game (its leaf hash and head)", appended / args.grow * 1e6, "us")
        script = client.info("commandstats")["cmdstat_evalsha"]["usec_per_call"]
        report.add("redis CPU per append script call (INFO commandstats)", script, "us")
        started = time.perf_counter()
        tree.cut_tiles(grown)
        report.add(f"cut of the tiles {args.grow} more filled", time.perf_counter() - started, "s")
        mirrored = _mirrored(tree, grown)
        report.add(f"redis bytes of the tree after {args.grow} more and a mirror", mirrored, "B")
        report.add(
            f"store bytes of partial tiles after {args.grow} more", _partial_bytes(blobs), "B"
        )
        report.add("redis bytes of the game index after the cut", index, "B")
        old_index = client.memory_usage(f"{OLD}:{{tlog}}:games", samples=0)
        report.add("redis bytes of the game index before tiles", old_index, "B")
        rng = random.Random(7)
        size = args.leaves

        def tiles_round() -> float:
            fresh = GameTree(client, PREFIX, blobs)  # no tile cached: every read from disk
            index = rng.randrange(size)
            t = time.perf_counter()
            fresh.inclusion(index, size)
            return time.perf_counter() - t

        def baseline_round() -> float:
            index = rng.randrange(size)
            t = time.perf_counter()
            hashes = [bytes(h) for h in client.lrange(f"{OLD}:{{tlog}}:leaves", 0, size - 1)]
            merkle.inclusion_proof(hashes, index)
            return time.perf_counter() - t

        results = alternate({"tiles": tiles_round, "baseline": baseline_round}, args.rounds, 90)
        tiles_ms, baseline_ms = median(results["tiles"]) * 1e3, median(results["baseline"]) * 1e3
        report.add("inclusion proof from tiles, cold cache", tiles_ms, "ms")
        report.add("inclusion proof over every leaf (baseline)", baseline_ms, "ms")
        report.add("ratio tiles / baseline", tiles_ms / baseline_ms)
        report.note(f"{size} leaves, median of {len(results['tiles'])} rounds each")
    report.emit(args.json)


if __name__ == "__main__":
    main()
