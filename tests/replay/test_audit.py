"""The audit passes on played games and names the event on every kind of tampering."""

from __future__ import annotations

from dataclasses import replace

import fakeredis
import pytest
import redis

from domain.cards import Card, sort_cards
from domain.decider import decide, fold
from domain.legal import legal_plays
from domain.rules import RuleOptions
from service.app.audit import PRIMARY, audit_events, command_for
from service.app.hand_records import decode_events
from service.app.replay import Replay
from service.store.event_store import RedisEventStore
from tests.replay.helpers import play_game
from tests.replay.tamper import find, read_raw, tamper, write_raw

GAME = "audited"


@pytest.fixture(scope="module")
def played() -> list[dict]:
    """The stored envelopes of one finished game (played once for the module)."""
    store = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    play_game(store, GAME, seed="audit")
    return read_raw(store, GAME)


@pytest.fixture
def store(played) -> RedisEventStore:
    """A fresh fakeredis store holding a copy of the played game."""
    store = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    write_raw(store, GAME, played)
    return store


def named(report, seq: int) -> list:
    return [d for d in report.discrepancies if d.seq == seq or seq in d.related]


@pytest.mark.parametrize(
    "rules",
    [
        RuleOptions(score_limit=30),
        RuleOptions.from_dict({"preset": "omnibus", "score_limit": 30}),
        RuleOptions.from_dict({"preset": "original", "score_limit": 30}),
        RuleOptions.from_dict({"players": 4, "kitty": True, "score_limit": 30}),
        RuleOptions.from_dict({"pass_cycle": "mix", "score_limit": 30}),
    ],
    ids=["standard", "omnibus", "original", "kitty", "mix"],
)
def test_audit_passes_on_played_games(rules):
    store = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    final = play_game(store, "g", rules=rules, seed=f"pass-{rules.to_dict()}")
    report = Replay(store).audit("g")
    assert report.ok, report.to_text()
    assert [c.name for c in report.checks] == ["chain", "commitment", "deal", "domain"]
    assert all(c.ok for c in report.checks)
    assert len(report.hands) == final.hand_number
    assert report.events == store.version("g")
    assert "no discrepancies" in report.to_text()


def test_audit_of_an_unfinished_game_marks_the_hand_in_play(store):
    envelopes = read_raw(store, GAME)
    cut = find(envelopes, "CardPlayed", 60)  # in hand 2
    write_raw(store, GAME, envelopes[: cut + 1])
    report = Replay(store).audit(GAME)
    assert report.ok, report.to_text()
    assert report.hands[-1].finished is False
    assert report.hands[0].finished is True


def test_a_log_that_ends_inside_a_command_is_reported(store):
    envelopes = read_raw(store, GAME)
    taken = find(envelopes, "TrickTaken", 3)
    write_raw(store, GAME, envelopes[:taken])  # the trick's last play, but not its taking
    report = Replay(store).audit(GAME)
    assert [d.seq for d in report.discrepancies] == [taken + 1]
    assert "missing TrickTaken" in report.discrepancies[0].reason


@pytest.mark.parametrize("rehash_chain", [False, True], ids=["chain-broken", "chain-rehashed"])
class TestTampering:
    def test_a_card_changed_to_one_the_seat_does_not_hold(self, store, rehash_chain):
        envelopes = read_raw(store, GAME)
        i = find(envelopes, "CardPlayed", 9)
        first = envelopes[find(envelopes, "CardPlayed", 0)]["payload"]["card"]

        def edit(envs):
            envs[i]["payload"]["card"] = first  # already played in trick 1
            return envs

        tamper(store, GAME, edit, rehash_chain=rehash_chain)
        report = Replay(store).audit(GAME)
        seq = i + 1
        assert not report.ok
        hits = [d for d in named(report, seq) if d.check == "domain"]
        assert hits and "card-not-in-hand" in hits[0].reason
        assert report.checks[0].ok is rehash_chain  # the chain check alone misses a re-hash

    def test_a_card_changed_to_another_legal_card(self, store, rehash_chain):
        envelopes = read_raw(store, GAME)
        events = decode_events(store.read(GAME))
        # The first play (after the opening lead) where the seat had another legal card.
        for i, env in enumerate(envelopes):
            if env["type"] != "CardPlayed" or i < find(envelopes, "CardPlayed", 4):
                continue
            state = fold(x.event for x in events[:i])
            seat = env["payload"]["seat"]
            others = [
                c for c in legal_plays(state.rules, state.hand, seat) if c != env["payload"]["card"]
            ]
            if others:
                break
        replacement = sort_cards(others)[0]

        def edit(envs):
            envs[i]["payload"]["card"] = str(replacement)
            return envs

        tamper(store, GAME, edit, rehash_chain=rehash_chain)
        report = Replay(store).audit(GAME)
        hits = [d for d in named(report, i + 1) if d.check == "domain"]
        assert hits, report.to_text()
        # The trick it belongs to disagrees with the play, and names it.
        assert any("TrickTaken" in d.reason and i + 1 in d.related for d in hits)

    def test_a_removed_play(self, store, rehash_chain):
        envelopes = read_raw(store, GAME)
        i = find(envelopes, "CardPlayed", 13)  # the second play of trick 4

        tamper(store, GAME, lambda envs: envs[:i] + envs[i + 1 :], rehash_chain=rehash_chain)
        report = Replay(store).audit(GAME)
        seq = i + 1
        if rehash_chain:
            assert report.checks[0].ok
            hits = [d for d in report.discrepancies if d.seq == seq and d.check == "domain"]
            assert hits and "not-your-turn" in hits[0].reason
        else:
            gap = [d for d in report.discrepancies if d.check == "chain"]
            assert gap[0].seq == seq + 1 and "seq gap" in gap[0].reason

    def test_a_removed_trick(self, store, rehash_chain):
        envelopes = read_raw(store, GAME)
        i = find(envelopes, "TrickTaken", 5)

        tamper(store, GAME, lambda envs: envs[:i] + envs[i + 1 :], rehash_chain=rehash_chain)
        report = Replay(store).audit(GAME)
        hits = [d for d in report.discrepancies if d.seq == i + 1 and d.check == "domain"]
        assert hits and "missing TrickTaken" in hits[0].reason
        if rehash_chain:  # the rules put the missing trick back: nothing else is wrong
            assert len(report.discrepancies) == 1, report.to_text()

    def test_reordered_plays(self, store, rehash_chain):
        envelopes = read_raw(store, GAME)
        i = find(envelopes, "CardPlayed", 17)  # trick 5, first and second plays

        def edit(envs):
            envs[i], envs[i + 1] = envs[i + 1], envs[i]
            if not rehash_chain:  # keep each seq with its position, as XADD would need
                envs[i]["seq"], envs[i + 1]["seq"] = envs[i + 1]["seq"], envs[i]["seq"]
            return envs

        tamper(store, GAME, edit, rehash_chain=rehash_chain)
        report = Replay(store).audit(GAME)
        hits = [d for d in report.discrepancies if d.seq == i + 1]
        assert hits, report.to_text()
        checks = {d.check for d in hits}
        assert "domain" in checks
        assert ("chain" in checks) is not rehash_chain
        assert any("not-your-turn" in d.reason for d in hits)

    def test_a_changed_score(self, store, rehash_chain):
        envelopes = read_raw(store, GAME)
        i = find(envelopes, "HandScored", 0)

        def edit(envs):
            envs[i]["payload"]["totals"][2] -= 10
            return envs

        tamper(store, GAME, edit, rehash_chain=rehash_chain)
        report = Replay(store).audit(GAME)
        hits = [d for d in report.discrepancies if d.check == "domain"]
        # Exactly the edited event: the walk goes on from the score the rules give.
        assert [d.seq for d in hits] == [i + 1], report.to_text()
        assert "totals is" in hits[0].reason and "the rules give" in hits[0].reason

    def test_a_deal_that_does_not_match_its_seed(self, store, rehash_chain):
        envelopes = read_raw(store, GAME)
        i = find(envelopes, "HandDealt", 1)

        def edit(envs):
            hands = envs[i]["payload"]["hands"]
            hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
            hands[0][:] = [str(c) for c in sort_cards(Card(x) for x in hands[0])]
            hands[1][:] = [str(c) for c in sort_cards(Card(x) for x in hands[1])]
            return envs

        tamper(store, GAME, edit, rehash_chain=rehash_chain)
        report = Replay(store).audit(GAME)
        seq = i + 1
        by_check = {d.check for d in report.discrepancies if d.seq == seq}
        assert {"deal", "domain"} <= by_check, report.to_text()
        hand = next(h for h in report.hands if h.seq == seq)
        assert hand.deal_ok is False and hand.commitment_ok is True
        # The report never quotes the hidden cards it found wrong.
        reasons = " ".join(d.reason for d in report.discrepancies if d.seq == seq)
        assert not any(c in reasons for c in envelopes[i]["payload"]["hands"][0])

    def test_a_seed_whose_commitment_does_not_match(self, store, rehash_chain):
        envelopes = read_raw(store, GAME)
        i = find(envelopes, "HandDealt", 0)

        def edit(envs):
            envs[i]["payload"]["seed"] += "-other"
            return envs

        tamper(store, GAME, edit, rehash_chain=rehash_chain)
        report = Replay(store).audit(GAME)
        by_check = {d.check for d in report.discrepancies if d.seq == i + 1}
        assert {"commitment", "deal", "domain"} <= by_check


def test_tampering_on_a_real_redis_server(redis_server, key_prefix, played):
    client = redis.Redis.from_url(redis_server)
    store = RedisEventStore(client, prefix=key_prefix)
    write_raw(store, GAME, played)
    assert Replay(store).audit(GAME).ok
    i = find(played, "HandScored", 0)

    def edit(envs):
        envs[i]["payload"]["score_changes"][0] += 1
        return envs

    tamper(store, GAME, edit, rehash_chain=True)
    report = Replay(store).audit(GAME)
    assert [d.seq for d in report.discrepancies] == [i + 1]
    client.delete(store.game_key(GAME))
    client.close()


def test_every_primary_event_rebuilds_its_command(store):
    logged = decode_events(store.read(GAME))
    state = fold([])
    primaries = 0
    for x in logged:
        if isinstance(x.event, PRIMARY):
            assert decide(command_for(x.event), state)[0] == x.event
            primaries += 1
        state = fold([x.event], state)
    assert primaries > 100


def test_undecodable_events_are_reported_not_raised(store):
    stored = store.read(GAME)
    broken = list(stored)
    broken[30] = replace(broken[30], payload={"nonsense": 1})
    report = audit_events(broken, GAME)
    assert any(d.seq == 31 and d.check == "decode" for d in report.discrepancies)
