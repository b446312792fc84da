"""Contract of RedisEventStore, run against fakeredis and a real redis-server."""

from __future__ import annotations

import hashlib
import json
import threading
import zlib

import fakeredis
import pytest
import redis

from service.app.state_cache import StateCache
from service.store.append import IdempotencyRecord
from service.store.envelope import (
    GENESIS_HASH,
    HASH_MISMATCH,
    NewEvent,
    envelope_json,
    verify_chain,
)
from service.store.errors import (
    ChainMismatch,
    ConcurrencyConflict,
    CorruptStore,
    IdempotencyKeyReused,
)
from service.store.event_store import RedisEventStore
from service.store.stream_entries import GamePage

T0 = "2024-05-01T12:00:00.000000Z"


def t(n: int) -> str:
    return f"2024-05-01T12:00:{n:02d}.000000Z"


def ev(n: int, type: str = "Tick", version: int = 1) -> NewEvent:
    return NewEvent(type, version, {"n": n, "name": f"évènement {n}"})


def stream_sizes(store: RedisEventStore, game_id: str) -> tuple[int, int, int]:
    p = store.partition_of(game_id)
    r = store.redis
    return r.xlen(store.game_key(game_id)), r.xlen(store.log_key(p)), r.zcard(store.games_key(p))


def rewrite_entry(store: RedisEventStore, game_id: str, seq: int, edit) -> None:
    """Tamper by hand: rebuild the game stream with entry ``seq``'s fields edited."""
    key = store.game_key(game_id)
    entries = store.redis.xrange(key)
    store.redis.delete(key)
    for entry_id, fields in entries:
        fields = {k.decode(): v.decode() for k, v in fields.items()}
        if entry_id.decode() == f"{seq}-0":
            fields = edit(fields)
        if fields is not None:
            store.redis.xadd(key, fields, id=entry_id)


# --- append and read ----------------------------------------------------------


def test_append_and_read_back(event_store):
    result = event_store.append("g1", 0, [ev(1), ev(2)], "cmd-1", T0)
    assert result.version == 2 and not result.replayed
    assert [e.seq for e in result.events] == [1, 2]

    events = event_store.read("g1")
    assert events == list(result.events)
    first = events[0]
    assert (first.type, first.schema_version, first.game_id) == ("Tick", 1, "g1")
    assert (first.time, first.command_id) == (T0, "cmd-1")
    assert first.payload == {"n": 1, "name": "évènement 1"}
    assert event_store.version("g1") == 2
    assert event_store.exists("g1")
    assert not event_store.exists("nope")
    assert event_store.version("nope") == 0
    assert event_store.read("nope") == []


def test_seq_numbers_continue_across_appends(event_store):
    event_store.append("g", 0, [ev(1)], "c1", t(1))
    event_store.append("g", 1, [ev(2), ev(3)], "c2", t(2))
    result = event_store.append("g", 3, [ev(4)], "c3", t(3))
    assert result.version == 4
    events = event_store.read("g")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert [e.payload["n"] for e in events] == [1, 2, 3, 4]
    assert [e.command_id for e in events] == ["c1", "c2", "c2", "c3"]
    ids = [i.decode() for i, _ in event_store.redis.xrange(event_store.game_key("g"))]
    assert ids == ["1-0", "2-0", "3-0", "4-0"]


def test_read_ranges(event_store):
    event_store.append("g", 0, [ev(n) for n in range(1, 8)], "c", T0)
    assert [e.seq for e in event_store.read("g", after=3)] == [4, 5, 6, 7]
    assert [e.seq for e in event_store.read("g", after=2, limit=3)] == [3, 4, 5]
    assert [e.seq for e in event_store.read("g", limit=2)] == [1, 2]
    assert event_store.read("g", after=7) == []
    assert event_store.read("g", after=100) == []
    with pytest.raises(ValueError):
        event_store.read("g", after=-1)
    with pytest.raises(ValueError):
        event_store.read("g", limit=0)


def test_refuses_bad_appends(event_store):
    with pytest.raises(ValueError):
        event_store.append("g", 0, [], "c", T0)
    with pytest.raises(ValueError):
        event_store.append("g", -1, [ev(1)], "c", T0)
    with pytest.raises(ValueError):
        event_store.append("", 0, [ev(1)], "c", T0)
    with pytest.raises(ValueError):
        event_store.append("g", 0, [ev(1)], "", T0)
    with pytest.raises(ValueError):
        event_store.append("g", 0, [ev(1)], "c", "2024-05-01T12:00:00+02:00")
    with pytest.raises(ValueError):
        event_store.append("g", 0, [ev(1)], "c", "yesterday")
    assert not event_store.exists("g")


def test_time_defaults_to_injected_clock(redis_client, key_prefix):
    store = RedisEventStore(redis_client, prefix=key_prefix, now=lambda: T0)
    store.append("g", 0, [ev(1)], "c")
    assert store.read("g")[0].time == T0


# --- concurrency ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("existing", "expected"),
    [(0, 1), (0, 5), (2, 0), (2, 1), (2, 3), (2, 9)],
    ids=["missing-game", "missing-game-far", "create-existing", "stale", "future", "far-future"],
)
def test_expected_version_conflicts_write_nothing(event_store, existing, expected):
    if existing:
        event_store.append("g", 0, [ev(n) for n in range(1, existing + 1)], "c0", T0)
    before = stream_sizes(event_store, "g")
    idem = IdempotencyRecord("scope-x", "fp", "{}")
    with pytest.raises(ConcurrencyConflict) as info:
        event_store.append("g", expected, [ev(10), ev(11)], "c1", t(5), idem)
    assert (info.value.expected, info.value.actual) == (expected, existing)
    assert stream_sizes(event_store, "g") == before
    assert event_store.get_idempotent("g", "scope-x") is None
    assert event_store.version("g") == existing


def test_wrong_prev_hash_is_refused_and_writes_nothing(event_store):
    event_store.append("g", 0, [ev(1)], "c", T0)
    before = stream_sizes(event_store, "g")
    with pytest.raises(ChainMismatch):
        event_store.append("g", 1, [ev(2)], "c", T0, prev_hash="f" * 64)
    assert stream_sizes(event_store, "g") == before
    last = event_store.read("g")[-1]
    ok = event_store.append("g", 1, [ev(2)], "c", T0, prev_hash=last.hash)
    assert ok.events[0].prev_hash == last.hash


def test_thread_race_exactly_one_wins(redis_server, key_prefix):
    client = redis.Redis.from_url(redis_server)
    store = RedisEventStore(client, prefix=key_prefix, partitions=4)
    store.append("race", 0, [ev(0)], "setup", T0)
    barrier = threading.Barrier(8)
    outcomes: list[object] = [None] * 8

    def contender(i: int) -> None:
        barrier.wait()
        try:
            outcomes[i] = store.append("race", 1, [ev(i), ev(100 + i)], f"c{i}", t(i))
        except ConcurrencyConflict as exc:
            outcomes[i] = exc

    threads = [threading.Thread(target=contender, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    winners = [o for o in outcomes if not isinstance(o, ConcurrencyConflict)]
    losers = [o for o in outcomes if isinstance(o, ConcurrencyConflict)]
    assert len(winners) == 1 and len(losers) == 7
    assert all(loser.actual == 3 for loser in losers)
    winner = winners[0].events[0].command_id

    events = store.read("race")
    assert [e.seq for e in events] == [1, 2, 3]
    assert {e.command_id for e in events[1:]} == {winner}
    assert verify_chain(store.read("race")) == []
    log = store.read_log(store.partition_of("race"))
    assert [(entry.game_id, entry.seq) for entry in log] == [("race", 1), ("race", 2), ("race", 3)]
    client.close()


# --- hash chain -------------------------------------------------------------------


def test_hash_chain_is_intact_and_follows_the_documented_scheme(event_store):
    event_store.append("g", 0, [ev(1), ev(2)], "c1", t(1))
    event_store.append("g", 2, [ev(3)], "c2", t(2))
    events = event_store.read("g")
    assert events[0].prev_hash == GENESIS_HASH
    assert [e.prev_hash for e in events[1:]] == [e.hash for e in events[:-1]]
    assert verify_chain(events) == []
    assert event_store.verify("g") == []

    first = events[0]
    body = json.dumps(
        {
            "type": "Tick",
            "schema_version": 1,
            "game_id": "g",
            "seq": 1,
            "time": t(1),
            "command_id": "c1",
            "payload": {"n": 1, "name": "évènement 1"},
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()
    assert first.hash == hashlib.sha256(("0" * 64).encode() + body).hexdigest()
    # The stream's hash field is what the append script checks.
    fields = event_store.redis.xrange(event_store.game_key("g"))[0][1]
    assert fields[b"hash"].decode() == first.hash


def test_tampered_payload_is_detected_at_its_seq(event_store):
    event_store.append("g", 0, [ev(n) for n in range(1, 6)], "c", T0)

    def edit(fields):
        envelope = json.loads(fields["event"])
        envelope["payload"]["n"] = 999
        fields["event"] = json.dumps(envelope)
        return fields

    rewrite_entry(event_store, "g", 3, edit)
    problems = verify_chain(event_store.read("g"))
    assert [(p.seq, p.reason) for p in problems] == [(3, HASH_MISMATCH)]
    assert [(p.seq, p.reason) for p in event_store.verify("g")] == [(3, HASH_MISMATCH)]


def test_deleted_entry_is_a_seq_gap(event_store):
    event_store.append("g", 0, [ev(n) for n in range(1, 5)], "c", T0)
    rewrite_entry(event_store, "g", 2, lambda fields: None)
    problems = event_store.verify("g")
    assert problems[0].seq == 3
    assert {p.reason for p in problems} == {"seq gap", "prev_hash mismatch"}


# --- idempotency --------------------------------------------------------------


def test_idempotent_replay_returns_stored_response_and_appends_nothing(event_store):
    record = IdempotencyRecord("user-1:key-1", "fp-a", '{"status": 201}')
    first = event_store.append("g", 0, [ev(1)], "c1", T0, record)
    assert not first.replayed and first.response == '{"status": 201}'
    assert event_store.get_idempotent("g", "user-1:key-1") == ("fp-a", '{"status": 201}')
    ttl = event_store.redis.ttl(event_store.idem_key("g", "user-1:key-1"))
    assert 0 < ttl <= 86400

    before = stream_sizes(event_store, "g")
    # Same key and fingerprint: replay, even though the expected version is stale now.
    again = IdempotencyRecord("user-1:key-1", "fp-a", "ignored")
    replay = event_store.append("g", 0, [ev(1)], "c1-retry", T0, again)
    assert replay.replayed and replay.events == ()
    assert replay.response == '{"status": 201}'
    assert replay.version == 1
    assert stream_sizes(event_store, "g") == before

    other = IdempotencyRecord("user-1:key-1", "fp-b", "{}")
    with pytest.raises(IdempotencyKeyReused):
        event_store.append("g", 1, [ev(2)], "c2", T0, other)
    assert stream_sizes(event_store, "g") == before
    assert event_store.get_idempotent("g", "user-1:key-1") == ("fp-a", '{"status": 201}')


def test_idempotency_ttl_is_configurable(event_store):
    event_store.append("g", 0, [ev(1)], "c", T0, IdempotencyRecord("s", "fp", "r", 60))
    assert 0 < event_store.redis.ttl(event_store.idem_key("g", "s")) <= 60
    with pytest.raises(ValueError):
        IdempotencyRecord("s", "fp\nx", "r")
    with pytest.raises(ValueError):
        IdempotencyRecord("s", "fp", "r", 0)


# --- partition log ------------------------------------------------------------


def test_partition_log_carries_every_event_in_commit_order(redis_client, key_prefix):
    store = RedisEventStore(redis_client, prefix=key_prefix, partitions=3)
    games = [f"game-{i}" for i in range(7)]
    committed: list[tuple[str, int]] = []
    for round_ in range(3):
        for i, game in enumerate(games):
            if (round_ + i) % 2 == 0 or round_ == 0:
                version = store.version(game)
                result = store.append(game, version, [ev(round_), ev(i)], "c", t(round_))
                committed += [(game, e.seq) for e in result.events]

    seen: list[tuple[str, int]] = []
    for p in range(3):
        log = store.read_log(p, count=1000)
        assert all(store.partition_of(entry.game_id) == p for entry in log)
        expected = [item for item in committed if store.partition_of(item[0]) == p]
        assert [(entry.game_id, entry.seq) for entry in log] == expected
        for entry in log:
            assert entry.event == store.read(entry.game_id, after=entry.seq - 1, limit=1)[0]
        seen += [(entry.game_id, entry.seq) for entry in log]
    assert sorted(seen) == sorted(committed)

    # Paging through a log with after_id.
    p = store.partition_of("game-0")
    whole = store.read_log(p, count=1000)
    paged, after = [], "0-0"
    while batch := store.read_log(p, after_id=after, count=2):
        paged += batch
        after = batch[-1].id
    assert paged == whole
    assert store.read_log(p, after_id=whole[-1].id, block_ms=20) == []
    assert store.read_log(p, after_id=whole[0].id, block_ms=20, count=1) == whole[1:2]


def test_key_layout_and_partitions(redis_client, key_prefix):
    store = RedisEventStore(redis_client, prefix=key_prefix, partitions=5)
    game = "abc-123"
    p = zlib.crc32(game.encode()) % 5
    assert store.partition_of(game) == p
    assert store.partition_log_keys() == [f"{key_prefix}:{{p{n}}}:log" for n in range(5)]
    store.append(game, 0, [ev(1)], "c", T0, IdempotencyRecord("k", "f", "r"))
    keys = {k.decode() for k in redis_client.scan_iter(match=f"{key_prefix}:*")}
    assert keys == {
        f"{key_prefix}:{{p{p}}}:game:{game}",
        f"{key_prefix}:{{p{p}}}:log",
        f"{key_prefix}:{{p{p}}}:games",
        f"{key_prefix}:{{p{p}}}:idem:k",
    }
    with pytest.raises(ValueError):
        RedisEventStore(redis_client, prefix="bad{tag}")


# --- games index ----------------------------------------------------------------


def test_games_index_and_list_games_pagination(redis_client, key_prefix):
    store = RedisEventStore(redis_client, prefix=key_prefix, partitions=4)
    created = []
    for i in range(11):
        game = f"game-{i:02d}"
        store.append(game, 0, [ev(i)], "c", t(i // 3))  # three games per second: ties
        created.append((i // 3, game))
    # Later appends do not move a game in the index.
    store.append("game-00", 1, [ev(99)], "c", t(59))
    expected = [game for _, game in sorted(created)]

    assert store.list_games(limit=100) == GamePage(expected, None)
    for limit in (1, 2, 3, 4, 10, 11):
        listed, cursor = [], None
        while True:
            page = store.list_games(cursor=cursor, limit=limit)
            assert len(page.game_ids) <= limit
            listed += page.game_ids
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert listed == expected
    with pytest.raises(ValueError):
        store.list_games(cursor="not a cursor")
    assert RedisEventStore(redis_client, prefix=key_prefix + "x").list_games() == GamePage([], None)


# --- upcasting --------------------------------------------------------------------


def test_reads_return_events_as_stored(event_store):
    """Never upcast here: the game log (service.app.game_log) is the one place that does."""
    event_store.append("g", 0, [NewEvent("Played", 1, {"c": "QS"})], "c", T0)
    (played,) = event_store.read("g")
    assert (played.schema_version, played.payload) == (1, {"c": "QS"})
    assert event_store.read_log(event_store.partition_of("g"))[0].event == played
    assert event_store.follow("g", 0, block_ms=1) == [played]
    assert event_store.verify("g") == []


# --- clients with decode_responses ----------------------------------------------------


def test_works_with_decode_responses(request, key_prefix):
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), decode_responses=True)
    real = redis.Redis.from_url(request.getfixturevalue("redis_server"), decode_responses=True)
    for r in (client, real):
        store = RedisEventStore(r, prefix=key_prefix)
        store.append("g", 0, [ev(1)], "c", T0, IdempotencyRecord("s", "f", "r"))
        store.append("g", 1, [ev(2)], "c", T0)
        assert [e.seq for e in store.read("g")] == [1, 2]
        assert store.version("g") == 2 and store.verify("g") == []
        assert store.get_idempotent("g", "s") == ("f", "r")
        assert store.append("g", 0, [ev(1)], "c", T0, IdempotencyRecord("s", "f", "x")).replayed
        assert len(store.read_log(store.partition_of("g"))) == 2
        assert store.list_games().game_ids == ["g"]
        r.close()


# --- state cache --------------------------------------------------------------------


def test_state_cache_never_serves_a_stale_version(event_store):
    folds: list[int] = []

    def fold(state, events):
        folds.append(len(events))
        return state + [e.payload["n"] for e in events]

    cache = StateCache(event_store, fold, list)
    assert cache.get("g").version == 0 and cache.get("g").state == []
    event_store.append("g", 0, [ev(1), ev(2)], "c", T0)
    snap = cache.get("g")
    assert (snap.version, snap.state) == (2, [1, 2])
    assert snap.last_hash == event_store.read("g")[-1].hash

    # Another writer appends: the cache catches up, folding only the new events.
    event_store.append("g", 2, [ev(3)], "c", T0, prev_hash=snap.last_hash)
    folds.clear()
    assert cache.get("g").state == [1, 2, 3]
    assert folds == [1]
    folds.clear()
    assert cache.get("g").version == 3 and folds == []

    # A rewritten stream (different hash at the cached version) is folded from scratch.
    def edit(fields):
        envelope = json.loads(fields["event"])
        envelope["payload"]["n"] = 30
        envelope["hash"] = "e" * 64
        fields["event"], fields["hash"] = json.dumps(envelope), "e" * 64
        return fields

    rewrite_entry(event_store, "g", 3, edit)
    assert cache.get("g").state == [1, 2, 30]


def test_follow_gives_the_events_after_a_seq_or_nothing_when_none_come(event_store):
    game = "follow-me"
    event_store.append(game, 0, [NewEvent("A", 1, {"n": 1}), NewEvent("B", 1, {"n": 2})], "c1")
    assert [e.seq for e in event_store.follow(game, 0, block_ms=1)] == [1, 2]
    assert [e.payload for e in event_store.follow(game, 1, block_ms=1)] == [{"n": 2}]
    assert event_store.follow(game, 2, block_ms=1) == []  # waited 1 ms, nothing came
    event_store.append(game, 2, [NewEvent("C", 1, {"n": 3})], "c2")
    assert [e.type for e in event_store.follow(game, 2, block_ms=1)] == ["C"]


def test_an_entry_deleted_by_hand_is_noticed_by_a_cached_read_and_by_append(event_store):
    event_store.append("holey", 0, [ev(1), ev(2), ev(3)], "c1", T0)
    key = event_store.game_key("holey")
    assert event_store.redis.xdel(key, "2-0") == 1
    # The head (seq 3) is intact: only the count tells that seq 2 is gone.
    with pytest.raises(CorruptStore):
        event_store.read_since("holey", 3)
    with pytest.raises(CorruptStore):
        event_store.append("holey", 3, [ev(4)], "c2", T0)
    assert event_store.version("holey") == 3


def _stored(store: RedisEventStore, game_id: str) -> tuple[list, list]:
    """The game's stream and its partition's log, as Redis holds them."""
    partition = store.partition_of(game_id)
    return store.redis.xrange(store.game_key(game_id)), store.redis.xrange(store.log_key(partition))


@pytest.mark.parametrize(
    ("key", "append"),
    [
        ("log", {}),
        ("games", {}),
        ("waiting", {"waiting": True}),
        ("deadlines", {"deadline": "2024-05-01T12:05:00Z"}),
        ("silent", {"silent": True}),
    ],
)
def test_a_key_of_another_type_is_a_corrupt_store_and_nothing_is_written(event_store, key, append):
    # Given a key the append writes holding a string, when a new game is appended, then the
    # store is corrupt and nothing at all was written (the script checks before its first write).
    partition = event_store.partition_of("typed")
    name = getattr(event_store, f"{key}_key")(partition)
    event_store.redis.set(name, "not ours")
    before = _stored(event_store, "typed") if key != "log" else None
    receipt = IdempotencyRecord("scope-t", "fp", "{}")
    with pytest.raises(CorruptStore, match=f"{key} key is a string"):
        event_store.append("typed", 0, [ev(1)], "c", T0, receipt, **append)
    assert not event_store.redis.exists(event_store.game_key("typed"))
    assert event_store.get_idempotent("typed", "scope-t") is None
    if before is not None:
        assert _stored(event_store, "typed") == before


def test_any_text_in_a_payload_is_stored_byte_for_byte(event_store):
    # The append script's argument is JSON: what the envelope holds (quotes, backslashes,
    # controls, NUL, non-ASCII, astral characters) must reach the stream exactly as written.
    text = 'a "quoted" \\ back\\slash\n\t\x00\x01\x7f é ß 名前 🂡 \u2028 </script>'
    event_store.append("bytes", 0, [NewEvent("Said", 1, {"text": text})], "c", T0)
    (said,) = event_store.read("bytes")
    assert said.payload == {"text": text}
    assert event_store.verify("bytes") == []
    (entry,) = event_store.redis.xrange(event_store.game_key("bytes"))
    stored = entry[1].get(b"event", entry[1].get("event"))
    stored = stored.encode("utf-8") if isinstance(stored, str) else stored
    assert stored == envelope_json(said).encode("utf-8")
