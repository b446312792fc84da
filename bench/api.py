"""api: play many concurrent games over HTTP against ``hearts serve``, and its one-XADD ceiling.

Starts a throwaway redis-server and ``hearts serve`` (gunicorn, its default config and worker
class, 2 workers, no projector) serving bench/baseline_app.py, all on 127.0.0.1. A small asyncio
client with keep-alive connections runs ``--clients`` virtual players at once:

- play phases: each client creates a game with four open seats, joins all four, then plays it
  as its players would: for the seat that must act, GET its view (unless the last response was
  already that seat's), then POST a random legal pass or play; a finished game is followed by a
  new one. Commands are the POSTs of /pass, /play and /moon.
- baseline phases: each client POSTs a play-sized JSON body to /api/v1/bench/xadd, which does one
  XADD and nothing else, in the same app behind the same hooks: the ceiling of this stack.

``--cluster``: the same again with a 3-master Redis Cluster (``redis+cluster://``) instead of
the single redis-server, and a last report of both rates side by side: the cost of the cluster
client (every command routed by slot; a game's keys share one slot, so no command is split).

Phases alternate (baseline, play, baseline, play, ...) after a warm-up, each for ``--seconds``;
every loop is bounded by the phase's end and ``--max-requests``. Target (issue 13): play commands/s
at least 60% of the baseline's requests/s, play p99 at most 2x the baseline's p99, and no errors.
``ratio_requests`` also compares every request of the play phase (GETs and POSTs) with the
baseline's requests: like with like, since a command is two requests here and the baseline one.

``--before REV`` (a git revision, e.g. ``main``): each round also plays a phase against the code
of REV (bench/common.py ``checkout``: its own ``hearts serve`` and redis-server), reported as
``before_*`` beside the others, so a change's before and after come from the same run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import defaultdict
from dataclasses import dataclass, field

from bench.common import (
    HeartsServer,
    RedisClusterServers,
    RedisServer,
    Report,
    checkout,
    parser,
    percentile,
)

COMMANDS = ("pass", "play", "moon")


class HttpError(Exception):
    pass


class Connection:
    """One keep-alive HTTP/1.1 connection to the server (a minimal client: JSON only)."""

    def __init__(self, port: int, timeout: float) -> None:
        self.port = port
        self.timeout = timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: object = None, token: str | None = None
    ) -> tuple[int, bytes]:
        payload = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        if token is not None:
            head += f"Authorization: Bearer {token}\r\n"
        message = (head + "\r\n").encode() + payload
        for attempt in range(2):
            fresh = self.writer is None
            if fresh:
                self.reader, self.writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", self.port), self.timeout
                )
            assert self.reader is not None and self.writer is not None
            try:
                self.writer.write(message)
                await self.writer.drain()
                return await asyncio.wait_for(self._response(), self.timeout)
            except (ConnectionError, asyncio.IncompleteReadError, EOFError):
                self.close()
                # A kept-alive connection the server closed before reading: send it again once.
                if fresh or attempt:
                    raise
            except BaseException:
                self.close()  # a timeout leaves a response half read: never reuse the connection
                raise
        raise AssertionError("unreachable")

    async def _response(self) -> tuple[int, bytes]:
        assert self.reader is not None
        status_line = await self.reader.readline()
        if not status_line:
            raise EOFError("connection closed")
        status = int(status_line.split()[1])
        length, close = 0, False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value.strip().lower() == "close":
                close = True
        data = await self.reader.readexactly(length) if length else b""
        if close:
            self.close()
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


@dataclass
class Stats:
    """Latencies (ms) and errors per request kind, for one kind of phase."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    error_samples: list[str] = field(default_factory=list)
    seconds: float = 0.0
    games_finished: int = 0
    requests: int = 0

    def count(self, kinds: tuple[str, ...]) -> int:
        return sum(len(self.latencies[k]) for k in kinds)


class Client:
    """One virtual player at a time: games back to back, or baseline POSTs."""

    def __init__(self, conn: Connection, stats: Stats, rng: random.Random, budget: Budget) -> None:
        self.conn = conn
        self.stats = stats
        self.rng = rng
        self.budget = budget

    async def call(
        self, kind: str, method: str, path: str, body: object = None, token: str | None = None
    ) -> dict | None:
        """The JSON answer of a request, or None after counting an error."""
        self.budget.take()
        start = time.perf_counter()
        try:
            status, data = await self.conn.request(method, path, body, token)
        except (TimeoutError, OSError, EOFError, asyncio.IncompleteReadError) as error:
            self._error(kind, f"{kind}: {type(error).__name__} {error}")
            return None
        elapsed = (time.perf_counter() - start) * 1000
        self.stats.requests += 1
        if not 200 <= status < 300:
            self._error(kind, f"{kind}: HTTP {status} {data[:300]!r}")
            return None
        self.stats.latencies[kind].append(elapsed)
        return json.loads(data) if data else {}

    def _error(self, kind: str, text: str) -> None:
        self.stats.errors[kind] += 1
        if len(self.stats.error_samples) < 5:
            self.stats.error_samples.append(text)

    async def baseline(self, until: float) -> None:
        body = {"card": "QS", "seat": 0}  # a play-sized body
        while time.monotonic() < until and self.budget.left():
            await self.call("xadd", "POST", "/api/v1/bench/xadd", body)

    async def games(self, until: float) -> None:
        while time.monotonic() < until and self.budget.left():
            if not await self.game(until):
                return

    async def game(self, until: float) -> bool:
        """Play one game until it ends or time is up; False if an error stopped it."""
        created = await self.call("create", "POST", "/api/v1/games", {"seats": [None] * 4})
        if created is None:
            return False
        game = f"/api/v1/games/{created['id']}"
        tokens: dict[int, str] = {}
        view: dict | None = None
        for n in range(4):
            joined = await self.call("join", "POST", f"{game}/seats", {"name": f"player {n}"})
            if joined is None:
                return False
            tokens[joined["seat"]] = joined["token"]
            view = joined["view"]
        assert view is not None
        while time.monotonic() < until and self.budget.left():
            phase = view["phase"]
            if phase == "finished":
                self.stats.games_finished += 1
                return True
            if not view["awaiting"]:
                self._error("state", f"state: nobody to act in phase {phase}")
                return False
            seat = view["awaiting"][0]
            if view.get("seat") != seat or not (view["legal_cards"] or phase == "moon_choice"):
                view = await self.call("view", "GET", game, token=tokens[seat])
                if view is None:
                    return False
            token = tokens[seat]
            if phase == "passing":
                cards = self.rng.sample(view["legal_cards"], view["cards_to_pass"])
                answer = await self.call("pass", "POST", f"{game}/pass", {"cards": cards}, token)
            elif phase == "playing":
                card = self.rng.choice(view["legal_cards"])
                answer = await self.call("play", "POST", f"{game}/play", {"card": card}, token)
            elif phase == "moon_choice":
                choice = {"choice": "add_to_others"}
                answer = await self.call("moon", "POST", f"{game}/moon", choice, token)
            else:
                self._error("state", f"state: unexpected phase {phase}")
                return False
            if answer is None:
                return False
            view = answer["view"]
        return True


class Budget:
    """A cap on the requests of the whole run: every loop stops by itself."""

    def __init__(self, total: int) -> None:
        self.remaining = total

    def take(self) -> None:
        self.remaining -= 1

    def left(self) -> bool:
        return self.remaining > 0


async def run_phase(
    kind: str, port: int, clients: int, seconds: float, stats: Stats, budget: Budget, seed: int
) -> None:
    conns = [Connection(port, timeout=30) for _ in range(clients)]
    until = time.monotonic() + seconds
    start = time.perf_counter()
    workers = []
    for i, conn in enumerate(conns):
        client = Client(conn, stats, random.Random(seed * 1000 + i), budget)
        workers.append(client.games(until) if kind == "play" else client.baseline(until))
    await asyncio.gather(*workers)
    stats.seconds += time.perf_counter() - start
    for conn in conns:
        conn.close()


def summarize(report: Report, name: str, stats: Stats, kinds: tuple[str, ...]) -> dict:
    values = sorted(v for k in kinds for v in stats.latencies[k])
    out = {
        "per_second": len(values) / stats.seconds if stats.seconds else 0.0,
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
    }
    report.add(f"{name}_per_second", out["per_second"], "/s")
    for q in ("p50", "p95", "p99"):
        report.add(f"{name}_{q}_ms", out[q], "ms")
    return out


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--clients", type=int, default=16, help="concurrent games (and connections)")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each measured phase")
    p.add_argument("--rounds", type=int, default=2, help="baseline+play phase pairs")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds of each kind, not counted")
    p.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    p.add_argument("--max-requests", type=int, default=500_000, help="cap on all requests")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--cluster",
        action="store_true",
        help="also run on a 3-master Redis Cluster and compare (same run)",
    )
    p.add_argument("--before", metavar="REV", help="also play against this git revision's code")
    args = p.parse_args(argv)

    backends = [("single", RedisServer)]
    if args.cluster:
        backends.append(("cluster", RedisClusterServers))
    measured = {name: measure(args, servers) for name, servers in backends}
    for name, (play, base, budget) in measured.items():
        single_run = len(measured) == 1
        _report(args, play, base, budget, "api" if single_run else f"api {name}")
    if args.cluster:
        report = Report("api cluster vs single")
        for kind, pick in (("play_commands", COMMANDS), ("baseline_xadd", ("xadd",))):
            rates = {}
            for name, (play, base, _) in measured.items():
                stats = play if kind == "play_commands" else base
                rates[name] = sum(len(stats.latencies[k]) for k in pick) / stats.seconds
                report.add(f"{name}_{kind}_per_second", rates[name], "/s")
            report.add(f"ratio_{kind}_cluster_to_single", rates["cluster"] / rates["single"])
        report.note("same run, same machine: 1 redis-server vs a 3-master cluster on loopback")
        report.emit(args.json)


def measure(args, servers: type) -> tuple[Stats, Stats, Budget]:
    """The warm-up and the alternating phases against ``hearts serve`` on ``servers()``
    (with ``--before``, also against REV's code: its play figures in ``args.before_play``)."""
    budget = Budget(args.max_requests)
    play, base, warm, before = Stats(), Stats(), Stats(), Stats()
    app = "bench.baseline_app:create_app"
    with contextlib.ExitStack() as stack:
        redis_servers = stack.enter_context(servers())
        server = stack.enter_context(HeartsServer(redis_servers.url, workers=args.workers, app=app))
        phases = [("baseline", server.port, base), ("play", server.port, play)]
        root = stack.enter_context(checkout(getattr(args, "before", None)))
        if root is not None:
            old_redis = stack.enter_context(RedisServer())
            old = HeartsServer(old_redis.url, workers=args.workers, app=app, root=root)
            phases.append(("play", stack.enter_context(old).port, before))
            args.before_play = before

        async def run() -> None:
            for kind, port, _ in phases[1:] + phases[:1]:
                await run_phase(kind, port, args.clients, args.warmup, warm, budget, 0)
            for r in range(args.rounds):
                for kind, port, stats in phases:
                    await run_phase(
                        kind, port, args.clients, args.seconds, stats, budget, args.seed + r
                    )

        asyncio.run(run())
    return play, base, budget


def _report(args, play: Stats, base: Stats, budget: Budget, title: str) -> None:
    report = Report(title)
    report.add("clients", args.clients)
    report.add("workers", args.workers)
    report.add("seconds_per_kind", round(play.seconds, 1), "s")
    played = summarize(report, "play_commands", play, COMMANDS)
    summarize(report, "play_card", play, ("play",))
    summarize(report, "view_get", play, ("view",))
    report.add("play_phase_requests_per_second", play.requests / play.seconds, "/s")
    ceiling = summarize(report, "baseline_xadd", base, ("xadd",))
    throughput = played["per_second"] / ceiling["per_second"]
    tail = played["p99"] / ceiling["p99"]
    report.add("ratio_throughput", throughput)
    # Like with like: every request of the play phase (GETs and POSTs) against the baseline's.
    report.add("ratio_requests", play.requests / play.seconds / ceiling["per_second"])
    report.add("ratio_p99", tail)
    report.add("games_finished", play.games_finished)
    before: Stats | None = getattr(args, "before_play", None)
    if before is not None:
        report.add("before", args.before)
        old = summarize(report, "before_play_commands", before, COMMANDS)
        report.add("ratio_throughput_before", old["per_second"] / ceiling["per_second"])
        report.add("ratio_p99_before", old["p99"] / ceiling["p99"])
        report.add("ratio_commands_to_before", played["per_second"] / old["per_second"])
    errors = sum(play.errors.values()) + sum(base.errors.values())
    report.add("errors", errors)
    for kind, n in sorted({**base.errors, **play.errors}.items()):
        report.add(f"errors_{kind}", n)
    report.target("throughput", throughput >= 0.6, "play commands/s >= 60% of baseline XADDs/s")
    report.target("p99", tail <= 2, "play commands p99 <= 2x baseline p99")
    report.target("errors", errors == 0, "no errors")
    for sample in play.error_samples + base.error_samples:
        report.note(f"error: {sample}")
    if budget.remaining <= 0:
        report.note("stopped by --max-requests")
    report.note(
        "client and server share the machine; play commands = POST pass/play/moon; the play "
        "phase also GETs the acting seat's view before most commands (view_get)"
    )
    report.emit(args.json)


if __name__ == "__main__":
    main()
