"""Issue 42, "Preset deals": ``POST /games`` with 100 preset deals (a 32 KB body) stored the deals
twice, in the game's stream and again in its partition log. They are stored once now: the log's
entry of the game's ``DealPlan`` holds its envelope without the payload (the projections use only
its being there), and the game's stream keeps the deals the game is dealt from."""

from __future__ import annotations

import fakeredis
import pytest

from domain.cards import DECK
from service.api.factory import create_app
from service.app.deal_plan import DEAL_PLAN
from service.settings import Settings
from tests.api.helpers import Hearts

# 100 deals, each the deck dealt round-robin from another card on: 100 x ~160 B of cards.
DEALS = [
    [[str(c) for c in (DECK[k:] + DECK[:k])[seat::4]] for seat in range(4)] for k in range(100)
]


@pytest.fixture
def hearts() -> Hearts:
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return Hearts(create_app(Settings(key_prefix="presets"), redis=redis).test_client())


def stored_bytes(entries) -> int:
    return sum(len(k) + len(v) for _, fields in entries for k, v in fields.items())


def test_preset_deals_are_stored_once_in_the_game_stream(hearts: Hearts):
    game = hearts.create([None] * 4, deals=DEALS)
    store = hearts.http.application.extensions["hearts"].store
    redis = store.redis
    stream = redis.xrange(store.keys.game_key(game["id"]))
    log = [
        (entry_id, fields)
        for entry_id, fields in redis.xrange(store.log_key(store.partition_of(game["id"])))
        if fields[b"game_id"].decode() == game["id"]
    ]
    assert len(log) == len(stream)  # every record still has its log entry, in order
    plan = [fields for _, fields in stream if DEAL_PLAN.encode() in fields[b"event"][-40:]]
    assert len(plan) == 1 and b'"deals":[[[' in plan[0][b"event"]  # the deals, in the stream
    assert stored_bytes(stream) > 25_000
    # Was ~28 KB: the deals again. Now the log holds a few envelopes without them.
    assert stored_bytes(log) < 3_000


def test_a_preset_game_is_dealt_its_deals_and_marked_arranged(hearts: Hearts):
    game = hearts.create([None] * 4, deals=DEALS)
    seat, token = hearts.join(game["id"], "ann")
    for name in ("bob", "cy", "di"):
        hearts.join(game["id"], name)
    view = hearts.view(game["id"], token, seat)
    assert view["arranged"] is True
    assert sorted(view["hand"]) == sorted(DEALS[0][seat])
