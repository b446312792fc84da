"""Bounded work per request: what a big game and a game of bots cost the other requests.

Against one ``hearts serve`` (gevent workers, a throwaway redis-server):

- **Ordinary requests under long reads.** One client GETs a small game's view back to back;
  phases alternate between an idle server (the baseline) and one where other clients audit and
  import a game of ``--events`` events in a loop (two of each at once). Reported: p50/p99 of the
  GETs in each, and the ratio of the p99s (target: within 2x).
- **Reads of the big game** (issue 33): ``GET /events`` far into it (``limit=1000``),
  ``GET /state?at=`` near its end, ``POST /verify`` of a head, each alone; with ``--load
  reads`` the loaded phases loop on the first of them instead (``--log-page`` sets the server's
  HEARTS_LOG_PAGE: a huge page reads everything in the worker, as before issue 33).
- **``POST /games`` with four montecarlo bots**: the answer time (target: well under a second),
  against ``POST /games`` with four open seats in the same run. Measured last: the bots then
  play those games in the background of the same server.

The big game is played at random in the pure domain, appended straight into the server's Redis
(one append), and exported by the server; its import is the export as a client would send it.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time

from bench.common import HeartsServer, RedisServer, median, parser, percentile
from bench.common import Report as _Report
from bench.randomplay import random_game
from domain.rules import RuleOptions
from service.app.game import new_event
from service.store.event_store import RedisEventStore
from service.store.redis_server import client_for


class Http:
    """One keep-alive connection; ``call`` returns (status, seconds, body)."""

    def __init__(self, port: int, timeout: float = 120.0) -> None:
        self.port = port
        self.timeout = timeout
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.headers: dict[str, str] = {}  # the last answer's

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, float, bytes]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        for attempt in range(2):
            started = time.perf_counter()
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException):
                # The server closed a kept-alive connection: once more on a fresh one.
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
                if attempt:
                    raise
                continue
            self.headers = dict(response.getheaders())
            return response.status, time.perf_counter() - started, data
        raise AssertionError("unreachable")


def big_game(redis_url: str, events: int, seed: int) -> str:
    """A finished game of at least ``events`` events, appended in one go; its id."""
    game_id = f"gbig{seed:016x}"
    # Scores grow about 6.5 points a hand and a hand is about 70 events.
    limit = min(10_000, max(100, int(events / 70 * 6.5 * 1.1)))
    # An uncapped game as before issue 33 (read back with the bounds of a recorded log).
    rules = RuleOptions.from_dict({"score_limit": limit, "hand_limit": None}, recorded=True)
    log = random_game(game_id, rules, random.Random(seed))
    store = RedisEventStore(client_for(redis_url), prefix="bench")
    store.append(game_id, 0, [new_event(e) for e in log], "bench-big-game")
    return game_id


def loop(
    stop: threading.Event,
    port: int,
    method: str,
    path: str,
    body: bytes | None,
    done: dict[str, int],
    kind: str,
) -> None:
    """``method path`` in a loop until ``stop``; ``done`` counts answers by ``kind``, so a run
    shows the load really ran (a loop whose requests failed would leave the server idle)."""
    http_ = Http(port)
    while not stop.is_set():
        try:
            status, _, _ = http_.call(method, path, body)
        except (OSError, http.client.HTTPException):
            done["errors"] += 1
            time.sleep(0.1)
            continue
        done[kind if status < 400 else "errors"] += 1


def gets(port: int, path: str, seconds: float) -> list[float]:
    """Latencies (ms) of GETs back to back for ``seconds``."""
    http_ = Http(port)
    out: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        status, took, _ = http_.call("GET", path)
        assert status == 200, status
        out.append(took * 1000)
    return out


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=15_000, help="events of the big game")
    p.add_argument("--seconds", type=float, default=8.0, help="length of each measured phase")
    p.add_argument("--rounds", type=int, default=2, help="idle+loaded phase pairs")
    p.add_argument("--loaders", type=int, default=2, help="clients auditing (and importing)")
    p.add_argument("--creates", type=int, default=5, help="POST /games of each kind")
    p.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--load", choices=("both", "audit", "import", "reads"), default="both")
    p.add_argument("--log-page", type=int, default=None, help="the server's HEARTS_LOG_PAGE")
    args = p.parse_args(argv)

    report = _Report("bounded_work")
    env = {"HEARTS_LOG_PAGE": str(args.log_page)} if args.log_page else None
    with (
        RedisServer() as redis,
        HeartsServer(redis.url, workers=args.workers, env=env) as server,
    ):
        port = server.port
        big = big_game(redis.url, args.events, args.seed)
        client = Http(port)
        status, took, export = client.call("GET", f"/api/v1/games/{big}/export")
        assert status == 200, export[:300]
        document = json.loads(export)
        report.add("big_game_events", len(document["events"]))
        report.add("export_bytes", len(export), "B")
        report.add("export_seconds_alone", took, "s")
        status, took, body = client.call("GET", f"/api/v1/games/{big}/audit")
        assert status == 200, body[:300]
        report.add("audit_seconds_alone", took, "s")
        status, took, body = client.call("POST", "/api/v1/games/import", export)
        assert status == 201, body[:300]
        report.add("import_seconds_alone", took, "s")
        version = len(document["events"])
        deep = f"/api/v1/games/{big}/events?after={version // 2}&limit=1000"
        client.call("GET", f"/api/v1/games/{big}")
        head = json.dumps({"head": client.headers["Hearts-Head"]}).encode()
        reads = {
            "events_deep": ("GET", deep, None),
            "state_late": ("GET", f"/api/v1/games/{big}/state?at={version - 5}", None),
            "verify": ("POST", f"/api/v1/games/{big}/verify", head),
        }
        for name, (method, path, body_) in reads.items():
            status, took, body = client.call(method, path, body_)
            assert status == 200, body[:300]
            report.add(f"{name}_seconds_alone", took, "s")

        _, _, small = client.call("POST", "/api/v1/games", b"{}")
        view = f"/api/v1/games/{json.loads(small)['id']}"
        gets(port, view, 1.0)  # warm-up

        idle: list[float] = []
        loaded: list[float] = []
        p99s: dict[str, list[float]] = {"idle": [], "loaded": []}
        done = {"audit": 0, "import": 0, "events": 0, "errors": 0}
        for _ in range(args.rounds):
            sample = sorted(gets(port, view, args.seconds))
            p99s["idle"].append(percentile(sample, 99))
            idle += sample
            stop = threading.Event()
            audits = args.loaders if args.load in ("both", "audit") else 0
            imports = args.loaders if args.load in ("both", "import") else 0
            pages = 2 * args.loaders if args.load == "reads" else 0
            audit = (stop, port, "GET", f"/api/v1/games/{big}/audit", None, done, "audit")
            import_ = (stop, port, "POST", "/api/v1/games/import", export, done, "import")
            page = (stop, port, "GET", deep, None, done, "events")
            loaders = [
                threading.Thread(target=loop, args=work)
                for work, count in ((audit, audits), (import_, imports), (page, pages))
                for _ in range(count)
            ]
            for t in loaders:
                t.start()
            time.sleep(0.5)  # the loads under way
            sample = sorted(gets(port, view, args.seconds))
            p99s["loaded"].append(percentile(sample, 99))
            loaded += sample
            stop.set()
            for t in loaders:
                t.join()
        idle.sort()
        loaded.sort()
        for name, values in (("idle", idle), ("loaded", loaded)):
            report.add(f"get_{name}_requests", len(values))
            report.add(f"get_{name}_p50_ms", percentile(values, 50), "ms")
            report.add(f"get_{name}_p99_ms", percentile(values, 99), "ms")
            report.add(f"get_{name}_max_ms", values[-1], "ms")
        for kind, count in done.items():
            report.add(f"load_{kind}_answered" if kind != "errors" else "load_errors", count)
        ratio = percentile(loaded, 99) / percentile(idle, 99)
        report.add("p99_ratio_loaded_to_idle", ratio)
        report.add(
            "p99_ratio_per_round", [round(b / a, 2) for a, b in zip(*p99s.values(), strict=True)]
        )
        report.target("p99_ratio_loaded_to_idle", ratio <= 2.0, "<= 2.0")

        timings: dict[str, list[float]] = {"bots": [], "open": []}
        bots = json.dumps({"seats": [{"bot": "montecarlo"}] * 4}).encode()
        for _ in range(args.creates):
            for kind, body_ in (("open", b"{}"), ("bots", bots)):
                status, took, body = client.call("POST", "/api/v1/games", body_)
                assert status == 201, body[:300]
                timings[kind].append(took * 1000)
        for kind, values in timings.items():
            report.add(f"create_{kind}_median_ms", median(values), "ms")
            report.add(f"create_{kind}_max_ms", max(values), "ms")
        report.target(
            "create_bots_max_ms", max(timings["bots"]) < 250, "< 250 ms (well under a second)"
        )
        loads = (
            f"{2 * args.loaders} clients GETting an events page far into the big game"
            if args.load == "reads"
            else f"{args.loaders} clients auditing and {args.loaders} importing the big game"
        )
        report.note(
            f"{args.workers} gevent workers; {loads} in a loop during each loaded phase; 1 "
            f"client GETting a view back to back; {args.rounds} x {args.seconds} s per phase; "
            f"HEARTS_LOG_PAGE {args.log_page or 'default'}"
        )
    report.emit(args.json)


if __name__ == "__main__":
    main()
