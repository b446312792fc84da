"""Issue 32, item 2: a creator's seed gave later hands away to anyone.

The attack: once hand 1 of a game created with ``"seed": "bluebird42"`` is scored, its public
record (``GET /games/{id}/hands/1``, no token) shows every dealt hand. A spectator tries a
dictionary of seeds offline (hand 1's seed is ``HMAC(seed, "hand:1")``, the shuffle is public)
until one deals those cards, and then deals hand 2 and every hand after it exactly. Hiding the
hand seeds until the game is over did not help: the cards are enough to test a guess.

The fix: a creator-chosen seed must be unguessable, by the rule a join's Idempotency-Key
follows (``service.app.auth.unguessable_key``: 22+ base64url/hex/UUID characters, 8+ distinct),
else 422 ``seed-guessable`` and nothing is created. A seed of 128 random bits is out of any
dictionary's reach, and the creator keeps reproducible games by reusing it."""

from __future__ import annotations

import secrets

import fakeredis
import pytest

from domain import commands as c
from domain.dealing import deal_from_seed, dealer_of
from domain.decider import decide, fold
from domain.rules import RuleOptions
from domain.state import INITIAL_STATE, Phase
from service.api.factory import create_app
from service.app.deal_plan import DealPlan, fresh_salt, hand_seed, plan_event
from service.app.replay import Replay
from service.settings import Settings
from service.store.event_store import RedisEventStore
from tests.api.helpers import Hearts
from tests.replay.helpers import new_events, next_command, run

WORDS = ["bluebird", "robin", "sparrow", "falcon", "eagle", "heron", "owl", "wren", "finch"]
DICTIONARY = [f"{word}{n}" for word in WORDS for n in range(61)]  # 549 guesses
BOTS = [{"bot": "random"}] * 4
OLD = "g-old-seeded"
RULES = {"score_limit": 52}  # hands 1 and 2 are always dealt (a moon shot gives 26 at most)


@pytest.fixture
def hearts() -> Hearts:
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return Hearts(create_app(Settings(key_prefix="fairseed"), redis=redis).test_client())


def dealt(seed: str, hand: int) -> list[list[str]]:
    """The cards hand ``hand`` of a game seeded ``seed`` deals, as docs/replay.md derives them."""
    hands, _ = deal_from_seed(
        RuleOptions.from_dict(RULES), dealer_of(hand, 4), hand_seed(seed, hand)
    )
    return [[str(c) for c in h] for h in hands]


def guess_seed(record: dict) -> str | None:
    """The spectator's attack on hand 1's public record: the word that deals those cards."""
    for guess in DICTIONARY:
        if dealt(guess, 1) == record["dealt"]:
            return guess
    return None


def hand_record(hearts: Hearts, game_id: str, number: int) -> dict:
    response = hearts.http.get(f"/api/v1/games/{game_id}/hands/{number}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def created(hearts: Hearts, seed: str):
    return hearts.http.post("/api/v1/games", json={"seats": BOTS, "rules": RULES, "seed": seed})


def test_a_guessable_seed_is_refused_so_hand_one_cannot_give_hand_two_away(hearts: Hearts):
    response = created(hearts, "bluebird42")
    if response.status_code == 201:  # the attack, as it worked before the rule
        game_id = response.get_json()["id"]
        hearts.wait_for(game_id, lambda view: view["phase"] == "finished")
        found = guess_seed(hand_record(hearts, game_id, 1))
        predicted = dealt(found, 2) if found is not None else None
        assert predicted != hand_record(hearts, game_id, 2)["dealt"], (
            f"hand 1's record gave the seed away ({found!r}) and with it hand 2"
        )
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["code"] == "seed-guessable"
    assert "22" in problem["detail"]
    assert hearts.http.get("/api/v1/games").get_json()["games"] == []  # nothing was created


@pytest.mark.parametrize(
    "seed",
    [
        "bluebird42",
        "my game",  # a space is outside the alphabet
        "a" * 40,  # long but one character
        "abababababababababababab",  # long but two
        "correcthorsebatterystaple"[:21],  # one short of 22
        "0123456",
    ],
)
def test_each_visibly_weak_seed_is_refused(hearts: Hearts, seed: str):
    response = created(hearts, seed)
    assert response.status_code == 422, response.get_json()
    assert response.get_json()["code"] == "seed-guessable"


def test_an_unguessable_seed_deals_reproducibly_and_no_dictionary_finds_it(hearts: Hearts):
    seed = secrets.token_urlsafe(16)  # 22 characters, 128 bits: what the docs advise
    games = [created(hearts, seed) for _ in range(2)]
    assert [g.status_code for g in games] == [201, 201]
    ids = [g.get_json()["id"] for g in games]
    for game_id in ids:
        hearts.wait_for(game_id, lambda view: view["phase"] == "finished")
    first, again = (hand_record(hearts, game_id, 1) for game_id in ids)
    assert first["dealt"] == again["dealt"] == dealt(seed, 1)  # the creator's test games
    assert guess_seed(first) is None
    # A UUID (with its hyphens) and 32 hex digits pass as well (at a table a person sits at:
    # an address creates 3 games of bots only a minute).
    for other in ("6f1c9a1e-8f4b-4d2e-9c1a-2b7e5d3f4a10", secrets.token_hex(16)):
        body = {"seats": [None, *BOTS[1:]], "rules": RULES, "seed": other}
        assert hearts.http.post("/api/v1/games", json=body).status_code == 201


def test_explicit_deals_without_a_seed_still_make_a_reproducible_game(hearts: Hearts):
    deal = [[str(c) for c in hand] for hand in deal_from_seed(RuleOptions(), 0, "x")[0]]
    body = {"seats": [None] * 4, "deals": [deal]}
    assert hearts.http.post("/api/v1/games", json=body).status_code == 201


def test_a_game_created_before_the_rule_with_a_guessable_seed_still_replays_and_audits():
    # The rule is the creation's, not the log's: an old game seeded "bluebird42" loads, shows
    # its hands and audits clean as it was dealt.
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    store = RedisEventStore(redis)
    plan = DealPlan("bluebird42")
    created = decide(c.CreateGame(OLD, RuleOptions(score_limit=26), (None,) * 4), INITIAL_STATE)
    store.append(OLD, 0, [*new_events(created), plan_event(plan)], "create")
    state = fold(created, INITIAL_STATE)
    for seat, name in enumerate(["ann", "bob", "cat", "dan"]):
        state = run(store, OLD, state, c.JoinGame(name, seat, f"cred-{name}"))
    while state.phase is not Phase.FINISHED:
        if state.phase is Phase.DEALING:
            command = plan.deal_for(state.hand_number + 1, salt=fresh_salt())
        else:
            command = next_command(state, "old")
        state = run(store, OLD, state, command)
    report = Replay(store).audit(OLD)
    assert report.ok, report.to_text()
    http = create_app(Settings(), redis=redis).test_client()
    record = http.get(f"/api/v1/games/{OLD}/hands/1").get_json()
    assert record["seed"] == hand_seed("bluebird42", 1)
    assert http.get(f"/api/v1/games/{OLD}/audit").get_json()["ok"]
