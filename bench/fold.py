"""fold: events per second folding recorded games into state, and loading a game from Redis.

Fold (pure domain): the events of whole random games (bench/randomplay.py) folded with
``domain.fold``, one game at a time from the initial state. Target: 500,000 events/s.

Baseline, in the same run: the same events through a loop that only dispatches each event on its
type to a function that returns the state unchanged. Any event-by-event fold in Python pays at
least that (iterate, look up the type, call), so ``ratio`` is the share of the fold's time that
is that irreducible floor, and ``1 / ratio`` what the state changes themselves cost on top of it.
``fold`` drafts the state once and applies each event to that draft in place (domain/decider.py),
so for context also: ``evolve_one_by_one``, the same events through ``evolve`` one at a time (a
new frozen state per event, as the audit and the replays step through a log), and
``copy_floor``: per event only the two copies such a state needs (the game's and its hand's
attribute dicts into new objects), no rule applied: what any fold that copied the state per event
would pay at the least (the fold did until issue 13).
For context, also: ``json.loads`` of the same events' payloads (the decoding every load from the
store pays anyway), and ``event_from_dict`` + fold (payloads to state, as a load does).

Load (with ``--redis``, the default): a 10-hand game appended through
``service.store.event_store``'s ``RedisEventStore`` (on a throwaway redis-server started here, never
the shared one) is read back and folded: ``store.read`` + ``event_from_dict`` + ``fold``, and as
the service loads a game it has not cached (a miss of its cache, ``service.app.game.game_cache``:
the page decoder of service/app/typed_envelopes.py reads each envelope with its payload left
raw, the cache checks the seqs, then ``fold_records`` reads the payloads the state needs and
folds them: not those of the events the last deal supersedes). Baseline: a raw ``XRANGE`` of the
same stream with redis-py, returning the entries undecoded. Target: the service's load
(``load_service_ratio_to_baseline``) within 2x of it.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable

from bench.common import RedisServer, Report, alternate, median, parser
from bench.randomplay import random_game
from domain.decider import evolve, fold
from domain.events import EVENT_TYPES, Event, event_from_dict, event_to_dict, event_type
from domain.rules import PRESETS, RuleOptions
from domain.state import INITIAL_STATE

TARGET_EVENTS_PER_SECOND = 500_000
TARGET_LOAD_RATIO = 2.0  # the service's cold load of a game against the raw XRANGE (issue 23)
CPU_REPEATS = 10  # loads per CPU-time sample: process_time ticks are coarser than a load


def make_games(count: int, rules: RuleOptions, seed: int) -> list[list[Event]]:
    rng = random.Random(seed)
    return [random_game(f"fold-{i}", rules, rng) for i in range(count)]


def fold_rate(games: list[list[Event]]) -> float:
    total = sum(len(g) for g in games)
    start = time.process_time()
    for events in games:
        fold(events)
    return total / (time.process_time() - start)


def evolve_rate(games: list[list[Event]]) -> float:
    """The same events through ``evolve``, one new state per event."""
    total = sum(len(g) for g in games)
    start = time.process_time()
    for events in games:
        state = INITIAL_STATE
        for event in events:
            state = evolve(state, event)
    return total / (time.process_time() - start)


def _unchanged(state: object, event: object) -> object:
    return state


_DISPATCH_ONLY: dict[type, Callable[[object, object], object]] = {
    cls: _unchanged for cls in EVENT_TYPES.values()
}


def dispatch_rate(games: list[list[Event]]) -> float:
    """The floor: iterate, dispatch on type, call; no state change."""
    total = sum(len(g) for g in games)
    table = _DISPATCH_ONLY
    start = time.process_time()
    for events in games:
        state: object = INITIAL_STATE
        for event in events:
            state = table[type(event)](state, event)
    return total / (time.process_time() - start)


def copy_floor_rate(games: list[list[Event]]) -> float:
    """What copying an immutable state per event costs at the least: the game's and its hand's
    attribute dicts copied into two new objects (what ``evolve`` does for a play) and nothing
    else. A fold that made a frozen state per event could not beat this."""
    total = sum(len(g) for g in games)
    states = [fold(g[: len(g) // 2]) for g in games]  # a state mid-game, with a hand
    new, set_attribute = object.__new__, object.__setattr__
    start = time.process_time()
    for events, state in zip(games, states, strict=True):
        hand = state.hand
        for _ in events:
            h = {**hand.__dict__}
            copy = new(type(hand))
            set_attribute(copy, "__dict__", h)
            g = {**state.__dict__}
            g["hand"] = copy
            state = new(type(state))
            set_attribute(state, "__dict__", g)
    return total / (time.process_time() - start)


def json_rate(encoded: list[list[str]]) -> float:
    total = sum(len(g) for g in encoded)
    loads = json.loads
    start = time.process_time()
    for texts in encoded:
        for text in texts:
            loads(text)
    return total / (time.process_time() - start)


def decode_fold_rate(payloads: list[list[tuple[str, dict]]]) -> float:
    total = sum(len(g) for g in payloads)
    start = time.process_time()
    for game in payloads:
        fold(event_from_dict(kind, payload) for kind, payload in game)
    return total / (time.process_time() - start)


# -- loading from Redis ---------------------------------------------------------------------------


def redis_load(report: Report, rules: RuleOptions, rounds: int, seed: int) -> None:
    try:
        import redis

        from service.app.game import game_cache
        from service.store.envelope import NewEvent
        from service.store.event_store import RedisEventStore
    except ImportError as missing:
        report.note(f"load from Redis skipped: {missing}")
        return
    ten_hands = RuleOptions.from_dict({**rules.to_dict(), "score_limit": 500})
    events = random_game("load-10-hands", ten_hands, random.Random(seed), max_hands=10)
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        store = RedisEventStore(client, prefix="bench")
        # One append per event: the stream is the same whatever the batching.
        for seq, event in enumerate(events):
            new = NewEvent(event_type(event), event.schema_version, event_to_dict(event))
            store.append("load-10-hands", seq, [new], f"command-{seq}")
        key = store.game_key("load-10-hands")

        def load() -> float:
            start = time.perf_counter()
            recorded = store.read("load-10-hands")
            state = fold(event_from_dict(r.type, r.payload) for r in recorded)
            elapsed = time.perf_counter() - start
            assert state.hand_number == 10
            return elapsed * 1000

        cache = game_cache(store)  # the service's own: a miss reads and folds the whole log

        def service_load() -> float:
            cache.forget("load-10-hands")
            start = time.perf_counter()
            game = cache.get("load-10-hands").state
            elapsed = time.perf_counter() - start
            assert game.state.hand_number == 10
            return elapsed * 1000

        def raw() -> float:
            start = time.perf_counter()
            entries = client.xrange(key, "-", "+")
            elapsed = time.perf_counter() - start
            assert len(entries) == len(events)
            return elapsed * 1000

        def cpu(load: Callable[[], object]) -> Callable[[], float]:
            # This process's CPU time alone (not redis-server's, the same query on both sides):
            # steadier than the wall clock when other processes hold the cores.
            def timed() -> float:
                start = time.process_time()
                for _ in range(CPU_REPEATS):
                    load()
                return (time.process_time() - start) * 1000 / CPU_REPEATS

            return timed

        def read_only() -> float:
            start = time.perf_counter()
            store.read("load-10-hands")
            return (time.perf_counter() - start) * 1000

        load()
        service_load()
        # Many short rounds (a load is milliseconds): the best rounds are what the code costs
        # when no other process held the core; the medians include the machine's load.
        times = alternate(
            {
                "load": load,
                "service": service_load,
                "raw": raw,
                "read": read_only,
                "service_cpu": cpu(service_load),
                "raw_cpu": cpu(raw),
            },
            rounds * 20,
        )
        client.close()
    project, floor = median(times["load"]), median(times["raw"])
    report.add("load_10_hand_game_events", len(events))
    report.add("load_10_hand_game_ms", project, "ms")
    report.add("load_store_read_only_ms", median(times["read"]), "ms")
    report.add("load_service_fold_records_ms", median(times["service"]), "ms")
    report.add("load_baseline_raw_xrange_ms", floor, "ms")
    report.add("load_ratio_to_baseline", project / floor)
    service = median(times["service"])
    report.add("load_service_ratio_to_baseline", service / floor)
    best_service, best_raw = min(times["service"]), min(times["raw"])
    report.add("load_service_best_round_ms", best_service, "ms")
    report.add("load_baseline_raw_xrange_best_round_ms", best_raw, "ms")
    report.add("load_service_ratio_best_rounds", best_service / best_raw)
    service_cpu, raw_cpu = median(times["service_cpu"]), median(times["raw_cpu"])
    report.add("load_service_cpu_ms", service_cpu, "ms")
    report.add("load_baseline_raw_xrange_cpu_ms", raw_cpu, "ms")
    report.add("load_service_cpu_ratio_to_baseline", service_cpu / raw_cpu)
    report.target("load_service_ratio_to_baseline", service <= TARGET_LOAD_RATIO * floor, "<= 2.0")


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=100, help="random games to fold per round")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--preset", default="standard", choices=sorted(PRESETS))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-redis", dest="redis", action="store_false", help="skip the Redis load")
    args = p.parse_args(argv)

    rules = PRESETS[args.preset]
    games = make_games(args.games, rules, args.seed)
    payloads = [[(event_type(e), event_to_dict(e)) for e in g] for g in games]
    encoded = [[json.dumps(p) for _, p in g] for g in payloads]
    total = sum(len(g) for g in games)
    rates = alternate(
        {
            "fold": lambda: fold_rate(games),
            "dispatch": lambda: dispatch_rate(games),
            "evolve": lambda: evolve_rate(games),
            "copy_floor": lambda: copy_floor_rate(games),
            "json": lambda: json_rate(encoded),
            "decode_fold": lambda: decode_fold_rate(payloads),
        },
        args.rounds,
    )
    project, floor = median(rates["fold"]), median(rates["dispatch"])
    report = Report("fold")
    report.add("preset", args.preset)
    report.add("games", len(games))
    report.add("events_per_round", total)
    report.add("fold_events_per_second", project, "events/s")
    report.add("fold_us_per_event", 1e6 / project, "us")
    report.add("fold_events_per_second_best_round", max(rates["fold"]), "events/s")
    report.add("baseline_dispatch_events_per_second", floor, "events/s")
    report.add("ratio_to_baseline", project / floor)
    report.add("evolve_one_by_one_events_per_second", median(rates["evolve"]), "events/s")
    report.add("copy_floor_events_per_second", median(rates["copy_floor"]), "events/s")
    report.add("ratio_to_copy_floor", project / median(rates["copy_floor"]))
    report.add("json_loads_events_per_second", median(rates["json"]), "events/s")
    report.add("decode_and_fold_events_per_second", median(rates["decode_fold"]), "events/s")
    report.target("fold_events_per_second", project >= TARGET_EVENTS_PER_SECOND, ">= 500,000")
    if args.redis:
        redis_load(report, rules, args.rounds, args.seed)
    report.note("median of rounds; each game folded from the initial state")
    report.note("fold rates in this process's CPU time; the Redis load in wall-clock time")
    report.emit(args.json)


if __name__ == "__main__":
    main()
