"""capacity: how many live tables one host holds, each seat and spectator following its stream.

Starts a throwaway redis-server and ``hearts serve`` (gunicorn/gevent, ``--workers``, no
projector, bench/baseline_app.py's app, stream bounds raised for the run) on free loopback ports,
and stops both. One asyncio client process plays ``--tables`` tables at once, as their players
would:

- ``--mode game``: each table is a game with four seat clients, each following the game's event
  stream (SSE) with its seat token, plus ``--spectators`` streams without a token. The seat that
  must act waits until the last move's event has reached its own stream, GETs its view (unless
  the last answer was already its view), thinks (``--pace human``: 1-3 s; ``bot``: 0) and POSTs
  its pass, play or moon choice. A finished game is followed by a new one at the same table.
- ``--mode player``: the same tables, but each seat is a registered player following its one
  stream (``GET /players/me/events``) and acting on its ``yourTurn`` notice (which carries its
  view: no GET); spectators still follow the game's stream. A player's stream carries no other
  player's moves, so a move's followers are the spectators and the seats whose turn it began.
- The baseline, in the same run and the same app: the minimal fan-out (bench/baseline_app.py):
  four seat clients and the spectators follow one Redis stream per table by ``XREAD BLOCK``
  through the same workers, and each move is one POST doing one XADD.

Each phase seats its tables and opens their streams first, then starts its clock (``--settle``
later): the figures are the steady state, not the burst of a host's first seconds. Per phase:
the time from a POST's answer to its event reaching every other follower of the
table (p50, p99, max over every (move, follower) pair; an event that came before the answer
counts 0), moves/s, streams open, errors, deliveries missed (a follower that never saw a move),
and CPU as a share of one core (the workers, Redis, and this client: if the client nears a full
core, the figures measure the client). ``--find-max`` steps the tables up (1, 2, 4, ...) for
both until p99 passes 100 ms (two steps in a row), within ``--max-tables`` and
``--max-seconds``: the largest count under 100 ms of each, and their ratio.

``--before REV`` (a git revision, e.g. ``main``) adds a third kind, ``before``: the same
tables against the code of REV (``git archive``d to a temporary directory, served by its own
``hearts serve`` and redis-server), phase after phase with the others, so a change's before
and after are measured in the same run.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import os
import random
import secrets
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench import api_profile
from bench.api import Connection
from bench.common import HeartsServer, RedisServer, Report, checkout, parser, percentile

P99_LIMIT_MS = 100.0
MISSES_TO_STOP = 2  # --find-max stops stepping a kind after two steps over the limit in a row
PACES = {"human": (1.0, 3.0), "bot": (0.0, 0.0)}
TICK = os.sysconf("SC_CLK_TCK")


class Follower:
    """One live stream of one client: when each seq (per key: a game, or a table) arrived."""

    def __init__(self) -> None:
        self.seqs: dict[str, list[int]] = {}
        self.times: dict[str, list[float]] = {}
        self.payloads: dict[str, object] = {}
        self.waiters: list[tuple[str, int, asyncio.Future]] = []

    def saw(self, key: str, seq: int, payload: object = None) -> None:
        now = time.perf_counter()
        self.seqs.setdefault(key, []).append(seq)
        self.times.setdefault(key, []).append(now)
        self.payloads[key] = payload
        still = []
        for waiter in self.waiters:
            wkey, wseq, future = waiter
            if wkey == key and seq >= wseq:
                if not future.done():
                    future.set_result(payload)
            else:
                still.append(waiter)
        self.waiters = still

    def last(self, key: str) -> int:
        seqs = self.seqs.get(key)
        return seqs[-1] if seqs else -1

    async def reached(self, key: str, seq: int, timeout: float) -> bool:
        """Whether ``seq`` (or a later one) of ``key`` came within ``timeout`` seconds."""
        if self.last(key) >= seq:
            return True
        future = asyncio.get_running_loop().create_future()
        self.waiters.append((key, seq, future))
        try:
            await asyncio.wait_for(future, timeout)
            return True
        except TimeoutError:
            return False

    def arrival(self, key: str, seq: int) -> float | None:
        """When the first seq at or after ``seq`` of ``key`` arrived (a stream may skip a seq)."""
        seqs = self.seqs.get(key, [])
        i = bisect.bisect_left(seqs, seq)
        return self.times[key][i] if i < len(seqs) else None


@dataclass
class Move:
    key: str
    version: int
    sent: float
    answered: float
    followers: list[Follower]


@dataclass
class Phase:
    """What one phase (one kind, one table count) saw."""

    kind: str
    tables: int
    moves: list[Move] = field(default_factory=list)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"post": [], "view": []})
    errors: Counter = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    streams: int = 0
    streams_max: int = 0
    games_finished: int = 0
    seconds: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    profile: dict[str, int] = field(default_factory=dict)  # py-spy samples per layer

    def error(self, kind: str, text: str) -> None:
        self.errors[kind] += 1
        if len(self.samples) < 5:
            self.samples.append(text)

    def figures(self) -> dict[str, float]:
        delays, trips, missed, early = [], [], 0, 0
        for move in self.moves:
            for follower in move.followers:
                came = follower.arrival(move.key, move.version)
                if came is None:
                    missed += 1
                    continue
                early += came < move.answered
                delays.append(max(0.0, came - move.answered) * 1000)
                trips.append((came - move.sent) * 1000)
        delays.sort()
        trips.sort()
        posts = sorted(self.latencies["post"])
        return {
            "tables": self.tables,
            "moves": len(self.moves),
            "moves_per_second": len(self.moves) / self.seconds if self.seconds else 0.0,
            "deliveries": len(delays),
            "deliveries_missed": missed,
            "deliveries_before_answer": early,
            "delivery_p50_ms": percentile(delays, 50),
            "delivery_p99_ms": percentile(delays, 99),
            "delivery_max_ms": delays[-1] if delays else float("nan"),
            "delivery_from_send_p50_ms": percentile(trips, 50),
            "delivery_from_send_p99_ms": percentile(trips, 99),
            "post_p50_ms": percentile(posts, 50),
            "post_p99_ms": percentile(posts, 99),
            "streams_open": self.streams_max,
            "errors": sum(self.errors.values()),
            "games_finished": self.games_finished,
            **{f"cpu_{name}": share for name, share in self.cpu.items()},
        }


@dataclass
class Ready:
    """A game whose seats are taken and whose streams are open: its first decisions wait."""

    key: str
    tokens: dict[int, str]
    seats: dict[int, Follower]
    spectators: list[Follower]
    view: dict
    version: int


# -- the client's HTTP: keep-alive requests (bench.api's Connection) and SSE streams --------------


class Client:
    """Requests of one phase: answers as JSON, or None after counting an error."""

    def __init__(self, port: int, phase: Phase) -> None:
        self.port = port
        self.phase = phase

    async def call(
        self, conn: Connection, kind: str, method: str, path: str, body=None, token=None
    ) -> dict | None:
        start = time.perf_counter()
        try:
            status, data = await conn.request(method, path, body, token)
        except (TimeoutError, OSError, EOFError, asyncio.IncompleteReadError) as error:
            self.phase.error(kind, f"{kind}: {type(error).__name__} {error}")
            return None
        if not 200 <= status < 300:
            self.phase.error(kind, f"{kind} {path}: HTTP {status} {data[:200]!r}")
            return None
        if kind in self.phase.latencies:
            self.phase.latencies[kind].append((time.perf_counter() - start) * 1000)
        return json.loads(data) if data else {}

    async def follow(self, path: str, token: str | None, on_message) -> None:
        """Read one event stream until it ends or is cancelled; each message to ``on_message``
        as (event, id, data) bytes."""
        phase = self.phase
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError as error:
            phase.error("stream", f"stream {path}: {error}")
            return
        phase.streams += 1
        phase.streams_max = max(phase.streams_max, phase.streams)
        try:
            head = f"GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n"
            if token is not None:
                head += f"Authorization: Bearer {token}\r\n"
            writer.write((head + "\r\n").encode())
            status = await reader.readline()
            chunked = False
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"transfer-encoding" and b"chunked" in value.lower():
                    chunked = True
            if not status.startswith(b"HTTP/1.1 200"):
                phase.error("stream", f"stream {path}: {status.strip()!r}")
                return
            buffer = b""
            while True:
                if chunked:
                    size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        return
                    buffer += (await reader.readexactly(size + 2))[:-2]
                else:
                    data = await reader.read(65536)
                    if not data:
                        return
                    buffer += data
                while b"\n\n" in buffer:
                    message, buffer = buffer.split(b"\n\n", 1)
                    fields = dict(
                        line.split(b": ", 1) for line in message.split(b"\n") if b": " in line
                    )
                    on_message(fields.get(b"event"), fields.get(b"id"), fields.get(b"data"))
        except (OSError, asyncio.IncompleteReadError, ValueError) as error:
            phase.error("stream", f"stream {path}: {type(error).__name__} {error}")
        finally:
            phase.streams -= 1
            writer.close()


# -- tables ---------------------------------------------------------------------------------------


class Table:
    """One table of one phase: its players' moves and its followers, until ``until``."""

    def __init__(self, client: Client, args, number: int, rng: random.Random) -> None:
        self.client = client
        self.phase = client.phase
        self.args = args
        self.number = number
        self.rng = rng
        self.conns = [Connection(client.port, timeout=30) for _ in range(4)]
        self.tasks: list[asyncio.Task] = []
        self.wait = 30.0  # the longest a seat waits for its stream before it counts a stall
        self.players: list[tuple[str, Follower]] | None = None
        self.ready: Ready | None = None
        self.key = ""
        self.everyone: list[Follower] = []

    def think(self) -> float:
        low, high = PACES[self.args.pace]
        return self.rng.uniform(low, high)

    def stream(self, path: str, token: str | None, follower: Follower, key: str) -> None:
        def on_message(event: bytes | None, seq: bytes | None, _data: bytes | None) -> None:
            if seq is not None and event is None:
                follower.saw(key, int(seq))

        self.tasks.append(asyncio.create_task(self.client.follow(path, token, on_message)))

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        for conn in self.conns:
            conn.close()

    def followers(self, path: str, tokens: list[str | None], key: str) -> list[Follower]:
        """A follower on ``path`` per token (None: a spectator), each reading its stream."""
        out = []
        for token in tokens:
            follower = Follower()
            self.stream(path, token, follower, key)
            out.append(follower)
        return out

    async def prepare(self) -> None:
        """The table's players, first game and streams, before the phase's clock starts."""
        if self.args.target == "fanout":
            self.key = f"t{self.number}-{secrets.token_hex(4)}"
            path = f"/api/v1/bench/fanout/{self.key}/events"
            self.everyone = self.followers(path, [None] * (4 + self.args.spectators), self.key)
            return
        if self.args.mode == "player":
            self.players = await self.register()
            if self.players is None:
                return
        self.ready = await self.seat(self.players)

    async def run(self, until: float) -> None:
        if self.args.target == "fanout":
            await self.fanout(until)
            return
        ready = self.ready
        while ready is not None and time.monotonic() < until:
            if not await self.game(until, ready) or time.monotonic() >= until:
                return
            ready = await self.seat(self.players)  # the game ended: the next one

    async def fanout(self, until: float) -> None:
        """The baseline: moves in turn, each one XADD, every follower on XREAD."""
        key, everyone = self.key, self.everyone
        path = f"/api/v1/bench/fanout/{key}"
        seats = everyone[:4]
        seq = 0
        while time.monotonic() < until:
            seat = seq % 4
            if seq and not await seats[seat].reached(key, seq, self.wait):
                self.phase.error("stall", f"fanout {key}: seat {seat} never saw move {seq}")
                return
            await asyncio.sleep(self.think())
            sent = time.perf_counter()
            body = {"seq": seq + 1}
            answer = await self.client.call(self.conns[seat], "post", "POST", path, body)
            if answer is None:
                return
            seq += 1
            others = [f for f in everyone if f is not seats[seat]]
            self.phase.moves.append(Move(key, seq, sent, time.perf_counter(), others))

    async def register(self) -> list[tuple[str, Follower]] | None:
        """Four registered players, each following its own stream (kept across games)."""
        players = []
        for n in range(4):
            name = f"cap{self.number}x{n}x{secrets.token_hex(3)}"
            body = {"name": name}
            made = await self.client.call(self.conns[n], "player", "POST", "/api/v1/players", body)
            if made is None:
                return None
            follower = Follower()

            def on_notice(event, _id, data, follower=follower) -> None:
                if event == b"yourTurn" and data is not None:  # each notice names its kind
                    item = json.loads(data)
                    if item.get("type") == "yourTurn":
                        follower.saw(item["game_id"], item["version"], item["view"])

            path = "/api/v1/players/me/events"
            self.tasks.append(asyncio.create_task(self.client.follow(path, made["key"], on_notice)))
            players.append((made["key"], follower))
        return players

    async def seat(self, players: list[tuple[str, Follower]] | None) -> Ready | None:
        """A new game at this table, its seats taken and its streams opened (None: an error)."""
        call, conns = self.client.call, self.conns
        created = await call(conns[0], "create", "POST", "/api/v1/games", {"seats": [None] * 4})
        if created is None:
            return None
        key = created["id"]
        game = f"/api/v1/games/{key}"
        tokens: dict[int, str] = {}
        notices: dict[int, Follower] = {}
        joined: dict = {}
        for n in range(4):
            # A player joins with its key; a guest with a name.
            key_of_player = players[n][0] if players else None
            body = {} if players else {"name": f"seat {n}"}
            joined = await call(conns[n], "join", "POST", f"{game}/seats", body, key_of_player)
            if joined is None:
                return None
            tokens[joined["seat"]] = joined["token"]
            if players:
                notices[joined["seat"]] = players[n][1]
        spectators = self.followers(f"{game}/events", [None] * self.args.spectators, key)
        if players:
            seats = notices
        else:
            streams = self.followers(f"{game}/events", [tokens[s] for s in range(4)], key)
            seats = dict(enumerate(streams))
        return Ready(key, tokens, seats, spectators, joined["view"], joined["version"])

    async def game(self, until: float, ready: Ready) -> bool:
        """One game at this table, until it ends or time is up; False if an error stopped it."""
        key, tokens, seats, spectators = ready.key, ready.tokens, ready.seats, ready.spectators
        game, players = f"/api/v1/games/{key}", self.players
        view, version = ready.view, ready.version
        became = dict.fromkeys(range(4), version)  # when each seat's decision began
        while time.monotonic() < until:
            if view["phase"] == "finished":
                self.phase.games_finished += 1
                return True
            if not view["awaiting"]:
                self.phase.error("state", f"{key}: nobody to act in phase {view['phase']}")
                return False
            awaiting = set(view["awaiting"])  # as the last answer saw it: the latest truth
            seat = view["awaiting"][0]
            # A game stream carries every move; a player's stream only the seat's own turns.
            need = became[seat] if players else version
            view = await self.turn(key, game, seat, seats[seat], need, view, tokens)
            if view is None:
                return False
            await asyncio.sleep(self.think())
            sent = time.perf_counter()
            answer = await self.move(game, seat, view, tokens[seat])
            if answer is None:
                return False
            answered = time.perf_counter()
            # (Not the view acted on: a turn's notice may be older than the last answer.)
            before = awaiting - {seat}
            view, version = answer["view"], answer["version"]
            if players:
                began = set(view["awaiting"]) - before  # a player's stream has only its turns
                for s in began:
                    became[s] = version
                others = [seats[s] for s in sorted(began)] + spectators
            else:
                others = [f for s, f in seats.items() if s != seat] + spectators
            self.phase.moves.append(Move(key, version, sent, answered, others))
        return True

    async def turn(self, key, game, seat, follower, began, view, tokens) -> dict | None:
        """The acting seat's view once the news reached its stream (None after an error)."""
        if not await follower.reached(key, began, self.wait):
            self.phase.error("stall", f"{key}: seat {seat}'s stream never reached {began}")
            return None
        if self.args.mode == "player":
            return follower.payloads[key]  # the yourTurn notice's view
        if view.get("seat") == seat and (view["legal_cards"] or view["phase"] == "moon_choice"):
            return view
        return await self.client.call(self.conns[seat], "view", "GET", game, None, tokens[seat])

    async def move(self, game: str, seat: int, view: dict, token: str) -> dict | None:
        phase = view["phase"]
        if phase == "passing":
            body: dict = {"cards": self.rng.sample(view["legal_cards"], view["cards_to_pass"])}
            path = "pass"
        elif phase == "playing":
            body, path = {"card": self.rng.choice(view["legal_cards"])}, "play"
        elif phase == "moon_choice":
            body, path = {"choice": "add_to_others"}, "moon"
        else:
            self.phase.error("state", f"{game}: unexpected phase {phase}")
            return None
        conn = self.conns[seat]
        return await self.client.call(conn, "post", "POST", f"{game}/{path}", body, token)


# -- phases ---------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (/proc/<pid>/stat), in seconds."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


async def run_phase(args, target: str, port: int, tables: int, pids: dict[str, list[int]]) -> Phase:
    """``tables`` tables of ``target`` (``hearts``, ``before`` or ``fanout``) for
    ``args.seconds``."""
    phase = Phase(target, tables)
    client = Client(port, phase)
    run_args = _Args(args, target)
    rng = random.Random(args.seed * 7919 + tables)
    table_list = [Table(client, run_args, i, random.Random(rng.random())) for i in range(tables)]
    # Steady state: every table seated and following before the clock starts (a first event of
    # a game the live hub did not follow yet may wait for its current XREAD: up to 0.5 s).
    await asyncio.gather(*(table.prepare() for table in table_list))
    await asyncio.sleep(args.settle)
    profiles = _profile_start(args, target, pids["workers"])
    cpu_before = {name: sum(cpu_seconds(p) for p in ps) for name, ps in pids.items()}
    client_before = time.process_time()
    start = time.perf_counter()
    until = time.monotonic() + args.seconds
    await asyncio.gather(*(table.run(until) for table in table_list))
    phase.seconds = time.perf_counter() - start
    for name, ps in pids.items():
        phase.cpu[name] = (sum(cpu_seconds(p) for p in ps) - cpu_before[name]) / phase.seconds
    phase.cpu["client"] = (time.process_time() - client_before) / phase.seconds
    phase.profile = await _profile_read(profiles)
    await asyncio.sleep(args.grace)  # the last moves' events on their way
    for table in table_list:
        table.close()
    await asyncio.sleep(0.1)  # the cancelled streams' cleanup
    return phase


def _profile_start(args, target: str, workers: list[int]) -> list[Path]:
    """With ``--profile``: py-spy on every worker for the phase's clock (bench.api_profile's
    sampling), writing where it says; none for the warm-up."""
    if not args.profile or args.seconds < 1:
        return []
    folder = Path(tempfile.mkdtemp(prefix="hearts-capacity-profile-"))
    return api_profile.sample(workers, args.seconds, args.profile, folder, target)


async def _profile_read(files: list[Path]) -> dict[str, int]:
    """Samples per layer of py-spy's files, once it has written them (bounded wait)."""
    samples: Counter = Counter()
    for file in files:
        for _ in range(50):
            if file.exists() and file.stat().st_size:
                break
            await asyncio.sleep(0.1)
        if file.exists():
            samples.update(api_profile.collapsed(file))
    return dict(samples)


class _Args:
    """The command line with the phase's target."""

    def __init__(self, args, target: str) -> None:
        self.__dict__.update(vars(args))
        self.target = target


# -- the run --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--tables", type=int, default=8, help="tables at once (without --find-max)")
    p.add_argument("--spectators", type=int, default=2, help="spectator streams per table")
    p.add_argument("--pace", choices=sorted(PACES), default="human", help="seats' think time")
    p.add_argument("--mode", choices=("game", "player"), default="game", help="seats' streams")
    p.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    p.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    p.add_argument("--find-max", action="store_true", help="step tables up while p99 < 100 ms")
    p.add_argument("--max-tables", type=int, default=256, help="--find-max's last step")
    p.add_argument("--max-seconds", type=float, default=240.0, help="bound on the whole run")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds of each, uncounted (0: none)")
    p.add_argument("--settle", type=float, default=1.0, help="seconds after the set-up")
    p.add_argument("--grace", type=float, default=2.0, help="seconds for the last events")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--profile", type=int, default=0, help="py-spy samples/s of the workers (0: none)"
    )
    p.add_argument("--before", metavar="REV", help="also measure the code of this git revision")
    args = p.parse_args(argv)
    if args.profile and shutil.which("py-spy") is None:
        raise SystemExit("--profile needs py-spy: pip install py-spy")
    deadline = time.monotonic() + args.max_seconds
    env = {"HEARTS_SSE_MAX_STREAMS": "100000", "HEARTS_SSE_MAX_STREAMS_PER_CLIENT": "100000"}
    app = "bench.baseline_app:create_app"
    kinds = ("fanout", "hearts", "before") if args.before else ("fanout", "hearts")
    results: dict[str, list[Phase]] = {kind: [] for kind in kinds}
    with contextlib.ExitStack() as stack:
        servers: dict[str, tuple[int, dict[str, list[int]]]] = {}
        roots = {"hearts": None, "before": stack.enter_context(checkout(args.before))}
        for kind in kinds[1:]:
            redis_server = stack.enter_context(RedisServer())
            server = stack.enter_context(
                HeartsServer(
                    redis_server.url, workers=args.workers, env=env, app=app, root=roots[kind]
                )
            )
            assert redis_server.process is not None
            pids = {"workers": server.worker_pids(), "redis": [redis_server.process.pid]}
            servers[kind] = (server.port, pids)
        servers["fanout"] = servers["hearts"]  # the baseline is a route of the same app

        async def run() -> None:
            # Not counted: the workers' first requests (imports, caches) and the client's.
            warm = _Args(args, "")
            warm.seconds, warm.profile = args.warmup, 0
            for target in kinds if args.warmup > 0 else ():
                port, pids = servers[target]
                await run_phase(warm, target, port, 1, pids)
            steps = _steps(args.max_tables) if args.find_max else [args.tables]
            # Steps missed in a row: one miss may be a shared machine's hiccup on few moves.
            misses = dict.fromkeys(kinds, 0)
            for tables in steps:
                for target in kinds:
                    if misses[target] >= MISSES_TO_STOP:
                        continue
                    if time.monotonic() + args.seconds + args.grace > deadline:
                        return
                    port, pids = servers[target]
                    phase = await run_phase(args, target, port, tables, pids)
                    results[target].append(phase)
                    misses[target] = 0 if _holds(phase.figures()) else misses[target] + 1
                if min(misses.values()) >= MISSES_TO_STOP:
                    return

        asyncio.run(run())
    return _report(args, results)


def _steps(most: int) -> list[int]:
    steps, tables = [], 1
    while tables < most:
        steps.append(tables)
        tables *= 2
    return [*steps, most]


def _holds(figures: dict) -> bool:
    """Whether a phase kept its promise: p99 under the limit, nothing lost, no error."""
    return (
        figures["moves"] > 0
        and figures["delivery_p99_ms"] < P99_LIMIT_MS
        and figures["deliveries_missed"] == 0
        and figures["errors"] == 0
    )


def _report(args, results: dict[str, list[Phase]]) -> dict:
    report = Report(f"capacity ({args.mode} mode, {args.pace} pace)")
    report.add("workers", args.workers)
    report.add("spectators_per_table", args.spectators)
    report.add("seconds_per_phase", args.seconds, "s")
    units = {"_ms": "ms", "_per_second": "/s", "cpu_": "of a core"}
    if args.before:
        report.add("before", args.before)
    out: dict = {target: [] for target in results}
    for target, phases in results.items():
        for phase in phases:
            figures = phase.figures()
            out[target].append({**figures, "error_samples": phase.samples})
            for name, value in figures.items():
                unit = next((u for k, u in units.items() if k in name), "")
                report.add(f"{target}_t{phase.tables}_{name}", value, unit)
            for kind, n in sorted(phase.errors.items()):
                report.add(f"{target}_t{phase.tables}_errors_{kind}", n)
            for text in phase.samples:
                report.note(f"{target} t{phase.tables}: {text}")
            _report_profile(report, args, phase, figures)
    best = {t: max((f["tables"] for f in out[t] if _holds(f)), default=0) for t in results}
    out["max_tables"] = best
    compared = [t for t in results if t != "fanout"]
    if args.find_max:
        for target in results:
            report.add(f"{target}_max_tables_p99_under_100ms", best[target])
        for target in compared:
            ratio = _ratio(best[target], best["fanout"])
            out[f"ratio_tables{'' if target == 'hearts' else '_' + target}"] = ratio
            report.add(f"ratio_tables_{target}_to_fanout", ratio)
        report.target("tables", out["ratio_tables"] >= 0.5, ">= 0.5x the minimal fan-out's tables")
    else:
        for target in compared:
            if not (out[target] and out["fanout"]):
                continue
            h, f = out[target][0], out["fanout"][0]
            p99 = _ratio(h["delivery_p99_ms"], f["delivery_p99_ms"])
            report.add(f"ratio_p99_{target}_to_fanout", p99)
            report.add(
                f"ratio_moves_{target}_to_fanout",
                _ratio(h["moves_per_second"], f["moves_per_second"]),
            )
    report.note("cpu_*: CPU seconds per second of the phase (1.0 = one core busy)")
    report.emit(args.json)
    return out


def _report_profile(report: Report, args, phase: Phase, figures: dict) -> None:
    """Worker CPU per move by layer, from ``--profile``: each layer's share of py-spy's samples
    times the workers' CPU per move from /proc. py-spy counts a thread that waits for a core
    (runnable) as active, so on a loaded machine its own totals are far above the CPU used;
    its shares are what it is good for."""
    total = sum(phase.profile.values())
    moves = figures["moves"]
    if not total or not moves:
        return
    cpu_us = figures["cpu_workers"] * phase.seconds / moves * 1e6
    name = f"{phase.kind}_t{phase.tables}_profile"
    report.add(f"{name}_samples_us_per_move", total * 1e6 / args.profile / moves, "us")
    report.add(f"{name}_worker_cpu_us_per_move", cpu_us, "us")
    for layer, n in sorted(phase.profile.items(), key=lambda item: -item[1]):
        report.add(f"{name}_{layer}", cpu_us * n / total, f"us ({100 * n / total:.0f}%)")


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


if __name__ == "__main__":
    main()
