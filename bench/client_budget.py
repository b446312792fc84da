"""client_budget: what one client address can cost, path by path (issue 42).

``hearts serve`` (gunicorn, two workers, rate limits ON at their defaults) on a throwaway
redis-server. For each write path, one address (this process, 127.0.0.1) tries it as fast as
the server answers for ``--seconds`` (60 by default): the Redis bytes it adds (``used_memory``
after minus before; the background bots of games it made keep adding while it runs, which is
counted) and the workers' CPU (and their long-work children's) over the window. Meanwhile an
honest client reads its own game (``GET /games/{id}``) in a loop; its median is printed beside
its idle median measured in the same run before any path.

Paths: ``create`` (a waiting game), ``deals`` (a waiting game with 100 preset deals),
``deals_creates`` (a game with 100 preset deals, or a plain one when that is refused: the
preset-deals limit's bytes on top of the create limit's), ``bot_games`` (every seat a bot),
``hand_over`` (one open seat and three bots, joined, handed to a bot: issue 42's attack),
``import`` (an export with its ids changed and its chain recomputed each time), ``audit`` and
``export`` (of a finished game), ``register``, ``play`` (one-hand games against three bots,
played to their end), and ``mix``: every write path from the one address (plain creates,
games handed to bots, preset deals, games of bots, played games, registrations, imports, seeks,
challenges, tournaments) taken in turn from one connection, as an attacker spending every budget
would (``mix4``: the same from four connections at once): the storage budget
(HEARTS_RATE_LIMIT_STORAGE) is the bound over them all. Without ``--paths``: every single path.

    python -m bench.client_budget [--seconds 60] [--paths create,audit] [--json]
"""

from __future__ import annotations

import copy
import itertools
import os
import random
import secrets
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
import requests

from bench.common import HeartsServer, RedisServer, Report, parser
from service.store.envelope import GENESIS_HASH, canonical_body, chain_hash

BOTS = [{"bot": "random"}] * 4
TARGET_BYTES_PER_MINUTE = 5 * 1024 * 1024


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of the processes and all their descendants now (seconds)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    seen: set[int] = set()
    todo = list(pids)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        todo += [int(c) for c in children]
    return total


class Client:
    def __init__(self, base: str) -> None:
        self.base = base + "/api/v1"
        self.http = requests.Session()

    def post(self, path: str, body: Any = None, token: str | None = None) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.http.post(self.base + path, json=body or {}, headers=headers, timeout=120)

    def get(self, path: str) -> requests.Response:
        return self.http.get(self.base + path, timeout=120)


def preset_deals(n: int) -> list[list[list[str]]]:
    cards = [r + s for s in "CDSH" for r in "23456789TJQKA"]
    deals = []
    for _ in range(n):
        random.shuffle(cards)
        deals.append([sorted(cards[i * 13 : (i + 1) * 13]) for i in range(4)])
    return deals


def rehash(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    prev = GENESIS_HASH
    out = []
    for env in events:
        env = dict(env)
        body = {k: env[k] for k in ("type", "schema_version", "game_id", "seq", "time")}
        body.update(command_id=env["command_id"], payload=env["payload"])
        env["prev_hash"] = prev
        env["hash"] = prev = chain_hash(prev, canonical_body(**body))
        out.append(env)
    return out


def minted(document: dict[str, Any]) -> dict[str, Any]:
    """The export as "another" game: a fresh id everywhere, the chain recomputed."""
    doc = copy.deepcopy(document)
    old, new = doc["game_id"], "g" + secrets.token_hex(10)
    doc["game_id"] = new
    for event in doc["events"]:
        event["game_id"] = new
        if event["payload"].get("game_id") == old:
            event["payload"]["game_id"] = new
    doc["events"] = rehash(doc["events"])
    doc["last_hash"] = doc["events"][-1]["hash"]
    return doc


def finished_game(client: Client) -> str:
    game = client.post("/games", {"seats": BOTS, "rules": {"hand_limit": 1}}).json()["id"]
    deadline = time.monotonic() + 120
    while client.get(f"/games/{game}").json()["phase"] != "finished":
        if time.monotonic() > deadline:
            raise RuntimeError("the bench's game did not finish")
        time.sleep(0.2)
    return game


@dataclass(frozen=True)
class Answer:
    """What a path's attempt of several requests came to (its last refusal, or success)."""

    status_code: int


def played(client: Client, name: str) -> Answer:
    """A one-hand game against three bots, created, joined and played to its end as the
    client's README loop plays it (``legal_cards[0]``); stops at the first refusal."""
    game = client.post("/games", {"seats": [None, *BOTS[1:]], "rules": {"hand_limit": 1}})
    if game.status_code != 201:
        return Answer(game.status_code)
    game_id = game.json()["id"]
    joined = client.post(f"/games/{game_id}/seats", {"name": name})
    if joined.status_code != 201:
        return Answer(joined.status_code)
    token = joined.json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        view = client.http.get(
            f"{client.base}/games/{game_id}/resume", headers=headers, timeout=120
        ).json()["view"]
        if view["phase"] == "finished":
            return Answer(200)
        if view.get("turn") != view.get("seat") and view["phase"] != "passing":
            time.sleep(0.02)
            continue
        if view["phase"] == "passing":
            if not view.get("legal_cards"):
                time.sleep(0.02)
                continue
            answer = client.post(
                f"/games/{game_id}/pass",
                {"cards": view["legal_cards"][: view["cards_to_pass"]]},
                token,
            )
        elif view["phase"] == "moon_choice":
            answer = client.post(f"/games/{game_id}/moon", {"choice": "add_to_others"}, token)
        else:
            answer = client.post(f"/games/{game_id}/play", {"card": view["legal_cards"][0]}, token)
        if answer.status_code in (429, 503):
            return Answer(answer.status_code)
    return Answer(200)


def paths(
    client: Client, finished: str, keys: list[dict[str, str]] | None = None
) -> dict[str, Callable[[], Any]]:
    export = client.get(f"/games/{finished}/export").json()
    deals = preset_deals(100)
    counter = iter(range(10**9))
    keys = keys or []

    def hand_over() -> requests.Response:
        game = client.post("/games", {"seats": [None, *BOTS[1:]]})
        if game.status_code != 201:
            return game
        joined = client.post(f"/games/{game.json()['id']}/seats", {"name": f"m{next(counter)}"})
        if joined.status_code != 201:
            return joined
        seat, token = joined.json()["seat"], joined.json()["token"]
        return client.post(f"/games/{game.json()['id']}/seats/{seat}/bot", {"bot": "random"}, token)

    def deals_creates() -> requests.Response:
        answer = client.post("/games", {"deals": deals})
        return client.post("/games", {}) if answer.status_code == 429 else answer

    def seek() -> requests.Response:
        key = keys[next(counter) % len(keys)]["key"]
        return client.post("/seeks", {"players": 4}, key)

    def challenge() -> requests.Response:
        n = next(counter)
        return client.post(
            "/challenges", {"to": keys[(n + 1) % len(keys)]["name"]}, keys[n % len(keys)]["key"]
        )

    def tournament() -> requests.Response:
        key = keys[next(counter) % len(keys)]["key"]
        return client.post(
            "/tournaments", {"name": f"t{next(counter)}", "rounds": 1, "boards": 1}, key
        )

    return {
        "create": lambda: client.post("/games", {}),
        "deals": lambda: client.post("/games", {"deals": deals}),
        "deals_creates": deals_creates,
        "bot_games": lambda: client.post("/games", {"seats": BOTS}),
        "hand_over": hand_over,
        "import": lambda: client.post("/games/import", minted(export)),
        "audit": lambda: client.get(f"/games/{finished}/audit"),
        "export": lambda: client.get(f"/games/{finished}/export"),
        "register": lambda: client.post("/players", {"name": f"budget{secrets.token_hex(4)}"}),
        "play": lambda: played(client, f"p{next(counter)}"),
        "seek": seek,
        "challenge": challenge,
        "tournament": tournament,
    }


# The paths the ``mix`` runs at once, a thread each: every one that stores bytes.
MIX = (
    "create",
    "hand_over",
    "deals",
    "bot_games",
    "play",
    "register",
    "import",
    "seek",
    "challenge",
    "tournament",
)
# A mix's connections: ``mix`` one (as every single path), ``mix4`` four at once (the bound
# on bytes is the same; the honest client then shares the two workers with four floods).
MIX_THREADS = {"mix": 1, "mix4": 4}


def round_robin(tried: dict[str, Callable[[], Any]]) -> Callable[[], Any]:
    """The mix's paths in turn, one attempt each (a thread-safe turn: ``itertools.cycle``)."""
    turn = itertools.cycle(MIX)
    lock = threading.Lock()

    def attempt() -> Any:
        with lock:
            name = next(turn)
        return tried[name]()

    return attempt


SINGLE = (
    "create",
    "deals",
    "deals_creates",
    "bot_games",
    "hand_over",
    "import",
    "audit",
    "export",
    "register",
    "play",
)


class Honest:
    """GET /games/{id} of its own game in a loop, timing each answer."""

    def __init__(self, client: Client, game_id: str) -> None:
        self.client, self.game_id = client, game_id
        self.times: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            start = time.perf_counter()
            self.client.get(f"/games/{self.game_id}")
            self.times.append(time.perf_counter() - start)
            time.sleep(0.05)

    def median_ms(self, seconds: float) -> float:
        self.times, self.stop = [], threading.Event()
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        time.sleep(seconds)
        self.stop.set()
        thread.join()
        return statistics.median(self.times) * 1000


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0, help="time per path")
    p.add_argument("--paths", default="", help="comma-separated subset of the paths")
    args = p.parse_args(argv)
    report = Report("client_budget")
    with RedisServer() as server, HeartsServer(server.url, env={"HEARTS_RATE_LIMITS": "1"}) as hs:
        r = redis.Redis.from_url(server.url)
        base = f"http://127.0.0.1:{hs.port}"
        # The honest client and the bench's own set-up come from "other" addresses only in
        # the sense that matters here: the set-up is done before the windows, and the honest
        # client's reads are not rate-limited.
        setup = Client(base)
        finished = finished_game(setup)
        honest_game = setup.post("/games", {"seats": [None, *BOTS[1:]]}).json()["id"]
        setup.post(f"/games/{honest_game}/seats", {"name": "honest"})
        honest = Honest(Client(base), honest_game)
        idle = honest.median_ms(min(10.0, args.seconds))
        report.add("honest_get_idle_median", idle, "ms")
        attacker = Client(base)
        # Players for the seeks, challenges and tournaments of the mix, registered before any
        # window (their registrations are the address's: the mix's own meet that limit sooner).
        keys = [
            setup.post("/players", {"name": f"mixer{secrets.token_hex(3)}"}).json()
            for _ in range(4)
        ]
        chosen = [n for n in args.paths.split(",") if n] or list(SINGLE)
        worst_bytes, worst_ratio = 0.0, 0.0
        for name in chosen:
            tried = paths(attacker, finished, keys)
            attempts = [round_robin(tried)] * MIX_THREADS.get(name, 0) or [tried[name]]
            time.sleep(2)  # let the previous path's answers settle
            before_bytes = int(r.info("memory")["used_memory"])
            before_cpu = cpu_seconds(hs.worker_pids())
            answers: dict[int, int] = {}
            stop = threading.Event()

            lock = threading.Lock()

            def flood(
                attempt: Callable[[], Any],
                answers: dict[int, int] = answers,
                stop: threading.Event = stop,
                lock: threading.Lock = lock,
            ) -> None:
                while not stop.is_set():
                    try:
                        status = attempt().status_code
                    except (requests.RequestException, KeyError, ValueError):
                        status = 0  # a path's own failure (e.g. its game gone): counted, not fatal
                    with lock:
                        answers[status] = answers.get(status, 0) + 1
                    if status in (429, 503):
                        time.sleep(0.05)  # a refused flood still asks again at once, nearly

            threads = [
                threading.Thread(target=flood, args=(attempt,), daemon=True) for attempt in attempts
            ]
            for thread in threads:
                thread.start()
            during = honest.median_ms(args.seconds)
            stop.set()
            for thread in threads:
                thread.join()
            added = int(r.info("memory")["used_memory"]) - before_bytes
            cpu = cpu_seconds(hs.worker_pids()) - before_cpu
            per_minute = added * 60 / args.seconds
            worst_bytes = max(worst_bytes, per_minute)
            worst_ratio = max(worst_ratio, during / idle)
            report.add(f"{name}_redis_bytes_per_minute", per_minute / 1024, "KiB")
            report.add(f"{name}_worker_cpu", cpu, "s")
            report.add(f"{name}_honest_get_median", during, "ms")
            report.add(f"{name}_answers", ", ".join(f"{k}x{v}" for k, v in sorted(answers.items())))
        report.target(
            "redis_per_address", worst_bytes <= TARGET_BYTES_PER_MINUTE, "<= 5 MB a minute"
        )
        report.target("honest_get", worst_ratio <= 2.0, "median within 2x of idle")
    report.emit(args.json)
    return report


if __name__ == "__main__":
    main()
