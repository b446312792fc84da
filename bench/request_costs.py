"""request_costs: what each step every command request pays costs, with the step and without.

The app in process (``create_app``, Flask's test client: no gunicorn, no sockets) on a throwaway
redis-server; four registered players play games as bench/api.py's client does (GET the acting
seat's view, POST a random legal pass or play), and only the command POSTs are timed, in CPU
(``time.process_time``: this process only, so not Redis's) and wall time (with the Redis round
trips). Each variant plays ``--commands`` commands per round; rounds alternate the variants, and
a variant's figure is its median round.

Variants: the reference (every step on, rate limits off as in the other benchmarks) and, for
each step, the same with that step taken out by monkeypatching it (signed head, security
headers, input hygiene, request metrics, the player feed) or put in (rate limits on, an
Idempotency-Key on every command, a turn clock on the game). A step's cost is the difference
from the reference. ``direct_us`` times the step's function alone (``timeit``) where it is one
call, a steadier figure than a difference of two noisy means.
"""

from __future__ import annotations

import contextlib
import json
import random
import secrets
import statistics
import time
import timeit
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from flask import Flask, Response

from bench.common import RedisServer, Report, parser
from service import metrics
from service.api import common as api_common
from service.api import hygiene
from service.api.factory import create_app
from service.api.security_headers import _secure
from service.settings import Settings

PLAY_BODY = b'{"card": "QS"}'
# Limits that count every request (a Redis round trip each) but never refuse one.
UNLIMITED = "1000000/second"


@dataclass(frozen=True)
class Workload:
    """How the players play: who is on, what each command carries."""

    limited: bool = False  # the app with rate limits on
    idempotent: bool = False  # an Idempotency-Key on every command
    clock: bool = False  # games on a turn clock


def make_app(url: str, prefix: str, limited: bool) -> Flask:
    overrides: dict[str, object] = {
        "redis_url": url,
        "key_prefix": prefix,
        "rate_limits": limited,
        "bot_runner": False,
        "sweep_on_start": False,
    }
    if limited:
        for name in ("create", "join", "command", "register", "account", "stream"):
            overrides[f"rate_limit_{name}"] = UNLIMITED
    return create_app(Settings(**overrides))  # type: ignore[arg-type]


class Players:
    """Four registered players of one app, playing games one after another."""

    def __init__(self, app: Flask, rng: random.Random) -> None:
        self.client = app.test_client()
        self.rng = rng
        self.keys = []
        for n in range(4):
            name = f"rc{n}x{secrets.token_hex(3)}"
            answer = self.client.post("/api/v1/players", json={"name": name})
            assert answer.status_code == 201, answer.get_data()
            self.keys.append(answer.json["key"])

    def commands(self, workload: Workload) -> Iterator[tuple[float, float]]:
        """Commands, games back to back: each one's (CPU, wall) seconds."""
        while True:
            yield from self._game(workload)

    def _game(self, workload: Workload) -> Iterator[tuple[float, float]]:
        client = self.client
        rules = {"time_control": "relaxed"} if workload.clock else {}
        created = client.post("/api/v1/games", json={"seats": [None] * 4, "rules": rules})
        assert created.status_code == 201, created.get_data()
        game = f"/api/v1/games/{created.json['id']}"
        tokens: dict[int, dict[str, str]] = {}
        for key in self.keys:
            bearer = {"Authorization": f"Bearer {key}"}
            joined = client.post(f"{game}/seats", json={}, headers=bearer)
            assert joined.status_code == 201, joined.get_data()
            tokens[joined.json["seat"]] = {"Authorization": f"Bearer {joined.json['token']}"}
        while True:
            public = client.get(game).json
            if public["phase"] == "finished" or not public["awaiting"]:
                return
            seat = public["awaiting"][0]
            view = client.get(game, headers=tokens[seat]).json
            path, body = self._move(view)
            headers = dict(tokens[seat])
            if workload.idempotent:
                headers["Idempotency-Key"] = secrets.token_urlsafe(22)
            cpu, wall = time.process_time(), time.perf_counter()
            answer = client.post(f"{game}/{path}", json=body, headers=headers)
            timed = (time.process_time() - cpu, time.perf_counter() - wall)
            assert answer.status_code == 200, answer.get_data()
            yield timed

    def _move(self, view: dict) -> tuple[str, dict]:
        if view["phase"] == "passing":
            return "pass", {"cards": self.rng.sample(view["legal_cards"], view["cards_to_pass"])}
        if view["phase"] == "moon_choice":
            return "moon", {"choice": "add_to_others"}
        return "play", {"card": self.rng.choice(view["legal_cards"])}


# -- the steps, taken out ---------------------------------------------------------------------


@contextlib.contextmanager
def patched(target: object, name: str, value: object) -> Iterator[None]:
    saved = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, saved)


@contextlib.contextmanager
def without_security_headers(app: Flask) -> Iterator[None]:
    hooks = app.after_request_funcs[None]
    hooks.remove(_secure)
    try:
        yield
    finally:
        hooks.append(_secure)


@contextlib.contextmanager
def without_player_feed(app: Flask) -> Iterator[None]:
    hooks = app.extensions["hearts"].on_appended
    appended = app.extensions["hearts.feed"].appended
    hooks.remove(appended)
    try:
        yield
    finally:
        hooks.append(appended)


@contextlib.contextmanager
def without_hygiene(_app: Flask) -> Iterator[None]:
    with (
        patched(hygiene, "check_head", lambda: None),
        patched(hygiene, "load_json", json.loads),
    ):
        yield


def removals() -> dict[str, Callable[[Flask], contextlib.AbstractContextManager]]:
    """Each step every command pays, and how to take it out of the app."""
    return {
        "signed head (Hearts-Head)": lambda _app: patched(
            api_common, "head_headers", lambda *_: {}
        ),
        "security headers": without_security_headers,
        "input hygiene (head check, JSON depth, Unicode)": without_hygiene,
        "request metrics (Prometheus)": lambda _app: patched(
            metrics, "observe_request", lambda *_: None
        ),
        "player feed (notices per append)": without_player_feed,
    }


ADDITIONS = {
    "rate limits on (Redis counters)": Workload(limited=True),
    "Idempotency-Key (a receipt per command)": Workload(idempotent=True),
    "turn clock (time_control relaxed)": Workload(clock=True),
}


# -- the steps, alone -------------------------------------------------------------------------


def direct(app: Flask) -> dict[str, float]:
    """Microseconds of the steps that are one call, each timed alone."""
    number = 2000
    out = {}
    with app.test_request_context(
        "/api/v1/games/g1/play", method="POST", data=PLAY_BODY, content_type="application/json"
    ):
        log = app.extensions["hearts.log"]
        chain = "ab" * 32
        out["signed head (Hearts-Head)"] = timeit.timeit(
            lambda: log.head("g1", 7, chain), number=number
        )
        out["security headers"] = timeit.timeit(lambda: _secure(Response("{}")), number=number)
        out["security headers"] -= timeit.timeit(lambda: Response("{}"), number=number)
        out["input hygiene (head check, JSON depth, Unicode)"] = timeit.timeit(
            lambda: (hygiene.check_head(), hygiene.load_json(PLAY_BODY)), number=number
        ) - timeit.timeit(lambda: json.loads(PLAY_BODY), number=number)
        out["request metrics (Prometheus)"] = timeit.timeit(
            lambda: metrics.observe_request("POST", "/x", 200, time.perf_counter()), number=number
        )
    return {name: seconds / number * 1e6 for name, seconds in out.items()}


def main(argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--commands", type=int, default=300, help="timed commands per variant")
    p.add_argument("--warmup", type=int, default=30, help="commands per variant, not counted")
    p.add_argument("--max-seconds", type=float, default=150.0, help="bound on the rounds")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    times: dict[str, list[tuple[float, float]]] = {}
    with RedisServer() as redis_server:
        apps = {False: make_app(redis_server.url, "rc", limited=False)}
        apps[True] = make_app(redis_server.url, "rcl", limited=True)
        variants: dict[str, tuple[Workload, Callable | None]] = {"reference": (Workload(), None)}
        variants.update({f"without {k}": (Workload(), v) for k, v in removals().items()})
        variants.update({f"with {k}": (w, None) for k, w in ADDITIONS.items()})
        # Each variant its own players and games; one command of each in turn, so every
        # variant meets the same moments of a shared machine's load.
        plays = {
            name: Players(apps[workload.limited], rng).commands(workload)
            for name, (workload, _) in variants.items()
        }
        deadline = time.monotonic() + args.max_seconds
        for n in range(args.warmup + args.commands):
            for name, (workload, remove) in variants.items():
                app = apps[workload.limited]
                with remove(app) if remove is not None else contextlib.nullcontext():
                    timed = next(plays[name])
                if n >= args.warmup:
                    times.setdefault(name, []).append(timed)
            if time.monotonic() > deadline:
                break
        alone = direct(apps[False])
    return _report(args, times, alone)


def _report(
    args, times: dict[str, list[tuple[float, float]]], alone: dict[str, float]
) -> dict[str, tuple[float, float]]:
    """Prints the figures and the table; returns each variant's median (CPU, wall) us."""
    report = Report("request_costs (one command POST, in process)")
    # The median command of each variant: a shared machine's spikes move a mean more.
    med = {
        name: (statistics.median(t[0] for t in ts) * 1e6, statistics.median(t[1] for t in ts) * 1e6)
        for name, ts in times.items()
    }
    ref_cpu, ref_wall = med["reference"]
    report.add("commands_per_variant", len(times["reference"]))
    report.add("reference_cpu_us", ref_cpu, "us")
    report.add("reference_wall_us", ref_wall, "us")
    rows = []
    for name, (cpu, wall) in med.items():
        if name == "reference":
            continue
        sign = -1 if name.startswith("without ") else 1
        step = name.split(" ", 1)[1]
        cost_cpu, cost_wall = sign * (cpu - ref_cpu), sign * (wall - ref_wall)
        report.add(f"{step}: cpu_us", cost_cpu, "us")
        report.add(f"{step}: wall_us", cost_wall, "us")
        if step in alone:
            report.add(f"{step}: alone_us", alone[step], "us")
        rows.append((step, cost_cpu, cost_wall, alone.get(step)))
    report.note("a step's cost: the variant's median command minus the reference's (same run)")
    report.emit(args.json)
    if not args.json:
        print("\n| step | CPU us | wall us | alone us | share of the command's CPU |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for step, cpu, wall, one in rows:
            shown = f"{one:.1f}" if one is not None else ""
            share = 100 * cpu / ref_cpu
            print(f"| {step} | {cpu:.0f} | {wall:.0f} | {shown} | {share:.0f}% |")
        print(f"| the whole command (reference) | {ref_cpu:.0f} | {ref_wall:.0f} | | 100% |")
    return med


if __name__ == "__main__":
    main()
