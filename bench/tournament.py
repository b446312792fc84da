"""A duplicate tournament at bot pace (issue 40): time per round against a baseline of the same
games created and played by themselves, the standings' latency, and Redis memory.

    python -m bench.tournament [--players 64] [--rounds 3] [--boards 2] [--no-baseline] [--json]
    python -m bench.tournament --format arena [--players 200] [--seconds 60] [--hands 1]

An arena (``arena_main``): its games per second against a baseline of as many games of four
bots at a time alone, how long a game's end takes to be recorded and its players to be paired
again, the standings' read time, its log and Redis memory.

In one process (the app in memory, its background bot runner playing every seat: each player
is a bot account, ``stand_in: random``) on a private redis-server. The baseline, in the same
run: each round's number of tables as games of four ``random`` bots created at once with the
same rules (``hand_limit`` = boards), played to the end by the same runner. The ratio is the
tournament's cost over playing its games: creating and linking each table's game, recording
its result, ending the round and committing the next, the secrecy checks.

Redis memory: before, at its highest while the tournament plays (sampled as it is polled), and
after archiving (the projector applies every log, then one archiver pass with
``after_seconds=0`` moves every table game and the tournament's log to a directory archive).
"""

from __future__ import annotations

import tempfile
import time
from datetime import datetime
from typing import Any

import redis

from bench.common import RedisServer, Report, parser
from service.api.factory import create_app
from service.app.archiver import Archiver
from service.app.projector import Projector
from service.app.transparency import Appender
from service.settings import Settings
from service.store.archive import attach
from service.store.read_models import ProjectionStore

API = "/api/v1"


def _enter_and_start(client, bearer: dict, keys: list[str], body: dict) -> tuple[str, float]:
    """Create the tournament, enter every key with a random stand-in, start it: its id and the
    start's milliseconds."""
    created = client.post(f"{API}/tournaments", json=body, headers=bearer)
    if created.status_code != 201:  # e.g. --seconds below an arena's least: say what was refused
        raise SystemExit(f"the tournament was refused: {created.get_json().get('detail')}")
    tid = created.get_json()["id"]
    for key in keys:
        headers = {"Authorization": f"Bearer {key}"}
        client.post(
            f"{API}/tournaments/{tid}/entries", json={"stand_in": "random"}, headers=headers
        )
    started = time.monotonic()
    client.post(f"{API}/tournaments/{tid}/start", json={}, headers=bearer)
    return tid, (time.monotonic() - started) * 1000


def _moment(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _wait(check, timeout: float = 1800.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.05)


def _tournament(
    client: Any, players: int, rounds: int, boards: int, sample: Any = lambda: None
) -> dict[str, Any]:
    keys = []
    for i in range(players):
        answer = client.post(f"{API}/players", json={"name": f"Bench{i:03d}"})
        keys.append(answer.get_json()["key"])
    bearer = {"Authorization": f"Bearer {keys[0]}"}
    body = {
        "name": "bench",
        "rounds": rounds,
        "boards": boards,
        "min_players": players,
        "max_players": players,
        "house_bot": "random",
    }
    tid, start_ms = _enter_and_start(client, bearer, keys, body)
    latencies = []
    seen_ended = 0

    def done() -> bool:
        nonlocal seen_ended
        sample()
        status = client.get(f"{API}/tournaments/{tid}").get_json()["status"]
        pairings = client.get(f"{API}/tournaments/{tid}/pairings").get_json()["rounds"]
        ended = sum(1 for r in pairings if r["ended"])
        if ended > seen_ended:
            seen_ended = ended
            t0 = time.perf_counter()
            client.get(f"{API}/tournaments/{tid}/standings")
            latencies.append((time.perf_counter() - t0) * 1000)
        return status == "finished"

    _wait(done)
    export = client.get(f"{API}/tournaments/{tid}/export").get_json()
    log = export["log"]
    starts = [_moment(e["at"]) for e in log if e["type"] == "RoundStarted"]
    ends = [_moment(e["at"]) for e in log if e["type"] == "RoundEnded"]
    return {
        "id": tid,
        "start_ms": start_ms,
        "round_seconds": [end - begin for begin, end in zip(starts, ends, strict=True)],
        "standings_ms": latencies,
        "log_entries": len(log),
        "games": len(export["games"]),
    }


def _baseline(client: Any, tables: int, boards: int) -> float:
    rules = {"hand_limit": boards, "score_limit": 500}
    started = time.monotonic()
    ids = [
        client.post(
            f"{API}/games", json={"rules": rules, "seats": [{"bot": "random"}] * 4}
        ).get_json()["id"]
        for _ in range(tables)
    ]
    _wait(
        lambda: all(client.get(f"{API}/games/{g}").get_json()["phase"] == "finished" for g in ids)
    )
    return time.monotonic() - started


def _archive(app: Any) -> tuple[int, int]:
    """Project every log, then one archiver pass: (games archived, tournaments archived)."""
    store = app.extensions["hearts"].store
    projections = ProjectionStore(store)
    log = app.extensions["hearts.log"]
    projector = Projector(projections, public_log=Appender(log.store, log.origin), blocking=False)
    projector.ensure_groups()
    while projector.poll(block_ms=0):
        pass
    done = Archiver(store, store.archive, after_seconds=0, projections=projections).run_once()
    return len(done.archived), len(done.tournaments)


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--players", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--boards", type=int, default=2)
    add_arena_arguments(p)
    p.add_argument("--no-baseline", action="store_true", help="skip the same games alone")
    args = p.parse_args(argv)
    if args.format == "arena":
        return arena_main(args)
    tables = -(-args.players // 4)
    report = Report("tournament")
    with RedisServer() as server:
        r = redis.Redis.from_url(server.url)
        settings = Settings(
            key_prefix="bench", rate_limits=False, bot_poll_seconds=0.02, max_bot_games=0
        )
        app = create_app(settings, redis=r)
        client = app.test_client()
        archive_dir = tempfile.mkdtemp(prefix="bench-tournament-")
        attach(app.extensions["hearts"].store, f"file://{archive_dir}")
        baseline = [] if args.no_baseline else [_baseline(client, tables, args.boards)]
        before = int(r.info("memory")["used_memory"])
        peak = [before]

        def sample() -> None:
            peak[0] = max(peak[0], int(r.info("memory")["used_memory"]))

        result = _tournament(client, args.players, args.rounds, args.boards, sample)
        after = int(r.info("memory")["used_memory"])
        log_key = app.extensions["hearts.tournaments"].store.keys.tournament_key(result["id"])
        log_bytes = int(r.memory_usage(log_key) or 0)
        app.extensions["hearts.stop"]()
        archived = _archive(app)
        archived_mem = int(r.info("memory")["used_memory"])
        r.close()
    per_round = sorted(result["round_seconds"])
    report.add("players", args.players)
    report.add("tables per round", tables)
    report.add("boards per round", args.boards)
    report.add("start (movement, round 1's tables)", round(result["start_ms"], 1), "ms")
    report.add("round, median", round(per_round[len(per_round) // 2], 2), "s")
    report.add("round, slowest", round(per_round[-1], 2), "s")
    if baseline:
        median = per_round[len(per_round) // 2]
        report.add("baseline: one round's games alone", round(min(baseline), 2), "s")
        report.add("ratio round / baseline", round(median / min(baseline), 2))
    report.add("standings after a round ends", round(max(result["standings_ms"]), 1), "ms")
    report.add("tournament log", log_bytes, "bytes")
    report.add("tournament log entries", result["log_entries"])
    report.add("Redis used_memory before the tournament", before, "bytes")
    report.add("Redis used_memory, highest while it plays", peak[0], "bytes")
    report.add("Redis used_memory when it has finished", after, "bytes")
    report.add("games archived, tournaments archived", f"{archived[0]}, {archived[1]}")
    report.add("Redis used_memory after archiving", archived_mem, "bytes")
    report.emit(args.json)


# -- the arena (issue 40): python -m bench.tournament --format arena --players 200 ------------


def add_arena_arguments(p: Any) -> None:
    p.add_argument("--format", choices=["duplicate", "arena"], default="duplicate")
    p.add_argument("--seconds", type=int, default=60, help="an arena's duration")
    p.add_argument("--hands", type=int, default=1, help="an arena's hands per game")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _arena(client: Any, players: int, seconds: int, hands: int) -> dict[str, Any]:
    """An arena of ``players`` bot accounts for ``seconds``; its figures from its export."""
    keys = []
    for i in range(players):
        answer = client.post(f"{API}/players", json={"name": f"Arena{i:03d}"})
        keys.append(answer.get_json()["key"])
    bearer = {"Authorization": f"Bearer {keys[0]}"}
    body = {
        "name": "bench arena",
        "format": "arena",
        "duration_seconds": seconds,
        "grace_seconds": 60,
        "hands": hands,
        "min_players": players,
        "max_players": players,
    }
    tid, start_ms = _enter_and_start(client, bearer, keys, body)
    standings_ms: list[float] = []

    def done() -> bool:
        t = time.perf_counter()
        client.get(f"{API}/tournaments/{tid}/standings")
        standings_ms.append((time.perf_counter() - t) * 1000)
        time.sleep(0.5)
        return client.get(f"{API}/tournaments/{tid}").get_json()["status"] == "finished"

    _wait(done, timeout=seconds + 600)
    export = client.get(f"{API}/tournaments/{tid}/export").get_json()
    log = export["log"]
    (clock,) = [e["data"] for e in log if e["type"] == "ArenaStarted"]
    recorded = [e for e in log if e["type"] == "ArenaGameRecorded"]
    paired = [e for e in log if e["type"] == "ArenaPaired"]
    record_lag = [_moment(e["at"]) - _moment(e["data"]["finished_at"]) for e in recorded]
    # A player's wait: from their game's record to their next pairing.
    seats = {e["data"]["game"]: e["data"]["seats"] for e in paired}
    freed: dict[str, float] = {}
    waits = []
    for e in log:
        if e["type"] == "ArenaGameRecorded":
            for p in seats[e["data"]["game"]]:
                freed[p] = _moment(e["at"])
        elif e["type"] == "ArenaPaired":
            for p in e["data"]["seats"]:
                if p in freed:
                    waits.append(_moment(e["at"]) - freed.pop(p))
    played = _moment(clock["ends_at"]) - _moment(clock["starts_at"])
    return {
        "id": tid,
        "start_ms": start_ms,
        "games": len(paired),
        "counted": sum(1 for e in recorded if e["data"]["counted"]),
        "games_per_second": len(paired) / played,
        "record_lag": record_lag,
        "waits": waits,
        "standings_ms": standings_ms,
        "log_entries": len(log),
    }


def _arena_baseline(client: Any, tables: int, hands: int, seconds: float) -> float:
    """Games of four ``random`` bots, ``tables`` at a time (a new one as each ends), for
    ``seconds``: games per second with no tournament around them."""
    rules = {"hand_limit": hands, "score_limit": 500}

    def new() -> str:
        answer = client.post(
            f"{API}/games", json={"rules": rules, "seats": [{"bot": "random"}] * 4}
        )
        return answer.get_json()["id"]

    live = [new() for _ in range(tables)]
    finished = 0
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        time.sleep(0.2)
        for i, game in enumerate(live):
            if client.get(f"{API}/games/{game}").get_json()["phase"] == "finished":
                finished += 1
                live[i] = new()
    return finished / (time.monotonic() - started)


def arena_main(args: Any) -> None:
    tables = args.players // 4
    report = Report("tournament-arena")
    with RedisServer() as server:
        r = redis.Redis.from_url(server.url)
        settings = Settings(
            key_prefix="bench", rate_limits=False, bot_poll_seconds=0.02, max_bot_games=0
        )
        app = create_app(settings, redis=r)
        client = app.test_client()
        baseline = _arena_baseline(client, tables, args.hands, min(args.seconds, 60))
        before = int(r.info("memory")["used_memory"])
        result = _arena(client, args.players, args.seconds, args.hands)
        after = int(r.info("memory")["used_memory"])
        log_key = app.extensions["hearts.tournaments"].store.keys.tournament_key(result["id"])
        log_bytes = int(r.memory_usage(log_key) or 0)
        app.extensions["hearts.stop"]()
        r.close()
    report.add("players", args.players)
    report.add("arena", args.seconds, "s")
    report.add("hands per game", args.hands)
    report.add("start (the first pairing, its games)", round(result["start_ms"], 1), "ms")
    report.add("games paired", result["games"])
    report.add("games counted", result["counted"])
    report.add("games per second, arena", round(result["games_per_second"], 2))
    report.add(f"games per second, baseline ({tables} at a time alone)", round(baseline, 2))
    report.add("ratio arena / baseline", round(result["games_per_second"] / baseline, 2))
    report.add("game end -> recorded, median", round(_quantile(result["record_lag"], 0.5), 3), "s")
    report.add("game end -> recorded, p95", round(_quantile(result["record_lag"], 0.95), 3), "s")
    report.add("recorded -> paired again, median", round(_quantile(result["waits"], 0.5), 3), "s")
    report.add("recorded -> paired again, p95", round(_quantile(result["waits"], 0.95), 3), "s")
    report.add("standings read, median", round(_quantile(result["standings_ms"], 0.5), 1), "ms")
    report.add("standings read, slowest", round(max(result["standings_ms"]), 1), "ms")
    report.add("arena log", log_bytes, "bytes")
    report.add("arena log entries", result["log_entries"])
    report.add("Redis used_memory growth (the arena)", after - before, "bytes")
    report.note("games not archived here (no archiver): memory is before archiving")
    report.emit(args.json)


if __name__ == "__main__":
    main()
