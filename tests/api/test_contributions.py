"""Deals no one can steer (issue 21): the server's seed for a hand is committed before the
players may contribute to its shuffle; the hand is dealt from both; once the hand is over,
anyone recomputes the deal from what the log reveals."""

from __future__ import annotations

import copy
import secrets

import pytest
from hearts_client import verify as hv

from domain.dealing import deal_from_seed, dealer_of
from domain.rules import RuleOptions
from domain.shuffle import mixed_seed, seed_commitment
from tests.api.helpers import auth, chosen_seed

BOTS = {"bot": "random"}


def events(client, game_id: str) -> list[dict]:
    return client.get(f"/api/v1/games/{game_id}/events?limit=1000").get_json()["events"]


def contribute(client, game_id: str, token: str, seed: str | None = None, **body):
    seed = seed or secrets.token_hex(16)
    return client.post(
        f"/api/v1/games/{game_id}/contribution", json={"seed": seed, **body}, headers=auth(token)
    )


def test_the_servers_seed_is_committed_before_contributions_are_taken(client, hearts):
    game = hearts.create([None, None, BOTS, BOTS])
    view = hearts.view(game["id"])
    pledge = view["next_deal"]
    assert pledge["hand_number"] == 1 and pledge["contributions"] == []
    seat, token = hearts.join(game["id"], "ann")
    assert contribute(client, game["id"], token, "ann-says-hi").status_code == 200
    again = contribute(client, game["id"], token)
    assert again.status_code == 409 and again.get_json()["code"] == "already-contributed"
    wrong = contribute(client, game["id"], token, hand_number=5)
    assert wrong.status_code == 409 and wrong.get_json()["code"] == "wrong-phase"
    hearts.join(game["id"], "bob")  # the last seat: hand 1 is dealt
    log = events(client, game["id"])
    kinds = [e["type"] for e in log]
    committed = kinds.index("SeedCommitted")
    contributed = kinds.index("SeedContributed")
    dealt = kinds.index("HandDealt")
    assert committed < contributed < dealt
    # The commitment was public from the start; the seed behind it is not, until the hand ends.
    assert log[committed]["payload"]["seed_commitment"] == pledge["seed_commitment"]
    assert log[committed]["payload"]["seed"] is None and log[committed]["redacted"]
    assert log[dealt]["payload"]["seed_commitment"] == pledge["seed_commitment"]
    assert log[dealt]["payload"]["contributions"] == [[seat, "ann-says-hi"]]
    # The next hand's seed is committed with this deal, before anyone may contribute to it.
    assert kinds[dealt + 1] == "SeedCommitted"
    assert hearts.view(game["id"])["next_deal"]["hand_number"] == 2


def test_an_arranged_game_takes_no_contributions(client, hearts):
    game = hearts.create([None, BOTS, BOTS, BOTS], seed=chosen_seed("chosen"))
    assert hearts.view(game["id"])["next_deal"] is None
    _, token = hearts.join(game["id"], "cy")
    refused = contribute(client, game["id"], token)
    assert refused.status_code == 409 and refused.get_json()["code"] == "deals-arranged"


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_every_deal_of_a_whole_game_is_recomputed_from_the_revealed_seeds(client, hearts, players):
    rules = {"players": players, "score_limit": 40}
    game = hearts.create([None] + [BOTS] * (players - 1), rules=rules)
    game_id = game["id"]
    _, token = hearts.join(game_id, "dee")
    contributed = 0
    while True:
        view = hearts.wait_for(
            game_id,
            lambda v: v["phase"] == "finished" or 0 in v["awaiting"],
            token,
        )
        if view["phase"] == "finished":
            break
        pledge = view["next_deal"]
        if pledge is not None and not pledge["contributions"]:
            assert contribute(client, game_id, token).status_code == 200
            contributed += 1
        hearts.act(game_id, 0, token)
    log = events(client, game_id)
    assert client.get(f"/api/v1/games/{game_id}/audit").get_json()["ok"] is True
    options = RuleOptions.from_dict(rules)
    pledges = {e["payload"]["hand_number"]: e for e in log if e["type"] == "SeedCommitted"}
    first_contribution = {}
    for e in log:
        if e["type"] == "SeedContributed":
            first_contribution.setdefault(e["payload"]["hand_number"], e["seq"])
    hands = [e for e in log if e["type"] == "HandDealt"]
    assert len(hands) >= 2 and contributed >= len(hands) - 1
    for dealt in hands:
        p = dealt["payload"]
        number = p["hand_number"]
        pledge = pledges[number]
        # Committed before any contribution to the hand, and dealt from that very seed.
        assert pledge["seq"] < first_contribution.get(number, dealt["seq"]) <= dealt["seq"]
        assert pledge["payload"]["seed"] == p["seed"] and pledge["payload"]["salt"] == p["salt"]
        assert seed_commitment(p["seed"], p["salt"]) == p["seed_commitment"]
        contributions = [tuple(c) for c in p["contributions"]]
        assert contributions or number == 1
        cards, kitty = deal_from_seed(
            options, dealer_of(number, players), mixed_seed(p["seed"], contributions)
        )
        assert [[str(c) for c in hand] for hand in cards] == p["hands"]
        assert [str(c) for c in kitty] == p["kitty"]
    # The independent verifier (the client package, no server code) recomputes them too, and
    # notices a contribution changed after the fact.
    document = client.get(f"/api/v1/games/{game_id}/export").get_json()
    assert [f.ok for f in hv.check_deals(document)] == [True]
    forged = copy.deepcopy(document)
    dealt = next(
        e for e in forged["events"] if e["type"] == "HandDealt" and e["payload"]["contributions"]
    )
    dealt["payload"]["contributions"][0][1] = "forged"
    findings = hv.check_deals(forged)
    assert not findings[0].ok and "not the deal its seeds give" in findings[0].message
