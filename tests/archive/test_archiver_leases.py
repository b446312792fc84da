"""Archivers share the partitions by leases: two over one Redis split them and together move
every ended game exactly once; when one dies the other takes its partitions over once its
leases lapse."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from service.app.archiver import Archiver
from tests.api.helpers import poll
from tests.archive.helpers import World

PARTITIONS = 16


class Steps:
    """Each archiver's steps, as its ``on_step`` saw them: (archiver, step, game)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []
        self._lock = threading.Lock()

    def of(self, name: str):
        def on_step(step: str, game_id: str) -> None:
            with self._lock:
                self.seen.append((name, step, game_id))

        return on_step

    def games(self, step: str, name: str | None = None) -> list[str]:
        return [g for who, s, g in self.seen if s == step and name in (None, who)]


def _split(a: Archiver, b: Archiver) -> None:
    """Refresh both in turn until each holds half of the partitions (the first takes them all,
    then gives back what is beyond its share once it sees the second)."""
    for _ in range(10):
        a.refresh_leases()
        b.refresh_leases()
        if len(a.leases.owned) == len(b.leases.owned) == PARTITIONS // 2:
            return
    raise AssertionError(f"no split: {sorted(a.leases.owned)} / {sorted(b.leases.owned)}")


def _games_in(hub: World, wanted: list[set[int]], most: int = 16) -> list[str]:
    """Finished games until each set of partitions has at least one (ids are random)."""
    games: list[str] = []
    while not all(any(hub.store.partition_of(g) in p for g in games) for p in wanted):
        assert len(games) < most, "the games' partitions never covered both archivers"
        games.append(hub.bot_game())
    return games


@pytest.mark.unlimited(
    "ends games of bots until each archiver's partitions have one: up to 16 in seconds "
    "(the default lets an address create 3 a minute)"
)
def test_two_archivers_split_the_partitions_and_move_each_game_once(hub: World):
    steps = Steps()
    a = hub.archiver(owner="a", lease_ms=60_000, on_step=steps.of("a"))
    b = hub.archiver(owner="b", lease_ms=60_000, on_step=steps.of("b"))
    _split(a, b)
    held = {"a": set(a.leases.owned), "b": set(b.leases.owned)}
    assert held["a"].isdisjoint(held["b"])
    assert held["a"] | held["b"] == set(range(PARTITIONS))
    games = _games_in(hub, [held["a"], held["b"]])
    hub.project()

    with ThreadPoolExecutor(2) as pool:  # both at once, each holding on to its leases
        passes = list(pool.map(lambda archiver: archiver.run_once(hold=True), [a, b]))

    assert [sorted(p.partitions) for p in passes] == [sorted(held["a"]), sorted(held["b"])]
    for name, done in zip("ab", passes, strict=True):
        assert {hub.store.partition_of(g) for g in done.archived} <= held[name]
        assert sorted(steps.games("written", name)) == sorted(done.archived)
    assert sorted(passes[0].archived + passes[1].archived) == sorted(games)
    for step in ("written", "checked", "recorded", "removed"):
        assert Counter(steps.games(step)) == Counter(games)  # each game once, by one of them
    for game_id in games:
        assert not hub.store.redis.exists(hub.store.game_key(game_id))
        assert hub.archive.record_of(game_id) is not None
    assert hub.archive.counts()["archived"] == len(games)
    assert hub.archive.counts()["ended_hot"] == 0
    # Their next passes find nothing to do: no game is moved twice.
    assert a.run_once(hold=True).archived == [] and b.run_once(hold=True).archived == []
    a.release()
    b.release()
    assert not any(hub.store.redis.exists(a.lease_key(p)) for p in range(PARTITIONS))


@pytest.mark.unlimited(
    "ends games of bots until the dead archiver's partitions have one: up to 16 in seconds "
    "(the default lets an address create 3 a minute)"
)
def test_a_dead_archivers_partitions_are_taken_over_once_its_leases_lapse(hub: World):
    steps = Steps()
    # "a" dies right after the split: it never renews (nor gives back) its short leases.
    a = hub.archiver(owner="a", lease_ms=1_000, on_step=steps.of("a"))
    b = hub.archiver(owner="b", lease_ms=60_000, on_step=steps.of("b"))
    _split(a, b)
    dead = set(a.leases.owned)
    games = _games_in(hub, [dead])
    hub.project()

    def pass_of_b() -> set[int]:
        done = b.run_once(hold=True)
        return set(done.partitions)

    # While a lease of "a" lives, "b" cannot hold its partition (SET NX); once they lapse, "b"
    # is the only archiver alive and takes them all (its fair share is every partition).
    poll(pass_of_b, lambda held: held == set(range(PARTITIONS)), 60)

    def hot_after_a_pass() -> int:
        b.run_once(hold=True)
        return hub.archive.counts()["ended_hot"]

    poll(hot_after_a_pass, lambda hot: hot == 0, 60)
    for game_id in games:
        assert hub.archive.record_of(game_id) is not None
        assert not hub.store.redis.exists(hub.store.game_key(game_id))
    assert Counter(steps.games("written")) == Counter(games)  # each once, all by "b"
    assert steps.games("written", "a") == []
    taken = [g for g in games if hub.store.partition_of(g) in dead]
    assert taken and set(taken) <= set(steps.games("removed", "b"))
    for p in range(PARTITIONS):
        owner = hub.store.redis.get(b.lease_key(p))
        assert owner in (b"b", "b")
    b.release()
