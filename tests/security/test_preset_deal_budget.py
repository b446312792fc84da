"""Issue 42, "Preset deals": one address creating games with 100 preset deals each got the
create limit's 600 games a minute, ~19 MB of Redis (a create with 100 deals stores ~32 KB, one
without ~6 KB). Preset deals now count apart, one hit a deal, against
HEARTS_RATE_LIMIT_PRESET_DEALS (1000 a minute, 6000 an hour by default: ten such games a
minute, ~0.25 MB) per client address and, with a player's key (a bot account's too), per key:
whichever route a create takes it spends both. Past it: 429 ``rate-limited`` with Retry-After,
nothing created; a create without deals still passes."""

from __future__ import annotations

import time
from typing import Any

import fakeredis
import pytest

from domain.cards import DECK
from service.api.factory import create_app
from service.settings import Settings
from tests.api.helpers import auth
from tests.security.test_rate_limits import assert_limited
from tests.tournaments.helpers import create as create_tournament
from tests.tournaments.helpers import register

GAMES = "/api/v1/games"
# 100 deals, each the deck dealt round-robin from another card on.
DEALS = [
    [[str(c) for c in (DECK[k:] + DECK[:k])[seat::4]] for seat in range(4)] for k in range(100)
]
HOME, AWAY = {"REMOTE_ADDR": "10.42.0.1"}, {"REMOTE_ADDR": "10.42.0.2"}


def app_with(key_prefix: str, **settings: Any):
    redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return create_app(Settings(key_prefix=key_prefix, rate_limits=True, **settings), redis=redis)


def create(client, deals: list, headers: dict | None = None, environ: dict | None = None):
    body = {"deals": deals} if deals else {}
    return client.post(GAMES, json=body, headers=headers or {}, environ_base=environ or HOME)


def test_one_address_gets_ten_games_of_a_hundred_preset_deals_a_minute_on_defaults(key_prefix):
    app = app_with(key_prefix)  # every limit at its default
    client = app.test_client()
    answers = [create(client, DEALS).status_code for _ in range(10)]
    assert answers == [201] * 10  # a person setting up a few such games is not hindered
    time.sleep(2)  # past the create limit's 10 a second, which ten creates in a second meet
    refused = create(client, DEALS)
    assert_limited(refused)
    assert "1000 per 1 minute" in refused.get_json()["detail"]  # the deals', not the creates'
    assert_limited(create(client, DEALS[:1]))  # each deal counts: one more is one too many
    # The refused create stored nothing: the address's games are the ten.
    listed = client.get(f"{GAMES}?limit=100", environ_base=HOME).get_json()
    assert len(listed["games"]) == 10
    # A game without preset deals costs what any create costs, and still passes.
    assert create(client, []).status_code == 201
    # Another address has its own budget.
    assert create(client, DEALS, environ=AWAY).status_code == 201


def test_a_deals_list_longer_than_a_game_takes_counts_as_the_most_and_is_refused(key_prefix):
    client = app_with(key_prefix, rate_limit_preset_deals="250/minute").test_client()
    for _ in range(2):
        too_many = create(client, DEALS + DEALS[:1])  # 101 deals: 422, counted as 100
        assert too_many.status_code == 422, too_many.get_json()
    assert create(client, DEALS[:50]).status_code == 201
    assert_limited(create(client, DEALS[:1]))


def bot_account(client, name: str) -> str:
    """A registered player entered in a tournament with a bot playing its every board."""
    key = register(client, name)
    tid = create_tournament(client, key, name=f"{name}'s", rounds=1, boards=1)["id"]
    entered = client.post(
        f"/api/v1/tournaments/{tid}/entries", json={"stand_in": "random"}, headers=auth(key)
    )
    assert entered.status_code == 200, entered.get_json()
    return key


@pytest.mark.parametrize("account", ["player", "bot account"])
def test_a_player_key_spends_its_own_budget_and_its_address_budget(key_prefix, account):
    client = app_with(key_prefix, rate_limit_preset_deals="250/minute").test_client()
    key = register(client, "Dealer") if account == "player" else bot_account(client, "Dealer")
    with_key = auth(key)
    assert create(client, DEALS, with_key, HOME).status_code == 201
    assert create(client, DEALS, with_key, HOME).status_code == 201
    # The key, used from another address, has 50 deals left of its 250.
    assert_limited(create(client, DEALS, with_key, AWAY))
    assert create(client, DEALS[:50], with_key, AWAY).status_code == 201
    # Spent: from its first address too, which has 50 of its own left.
    assert_limited(create(client, DEALS[:1], with_key, HOME))
    # The first address, without the key, is where the key left it (200 of 250).
    assert_limited(create(client, DEALS, environ=HOME))
    assert create(client, DEALS[:50], environ=HOME).status_code == 201
    assert_limited(create(client, DEALS[:1], environ=HOME))
    # The other address spent what the key did there (50): anonymous, it has 200 left.
    assert create(client, DEALS, environ=AWAY).status_code == 201
    assert create(client, DEALS, environ=AWAY).status_code == 201
    assert_limited(create(client, DEALS[:1], environ=AWAY))


def test_a_seat_token_or_a_wrong_key_is_no_way_round(key_prefix):
    client = app_with(key_prefix, rate_limit_preset_deals="150/minute").test_client()
    assert create(client, DEALS).status_code == 201
    # Whatever the bearer (a key of nobody, a seat's token), the address's budget is spent.
    for bearer in ("hp_" + "x" * 43, "not-a-key"):
        assert_limited(create(client, DEALS, auth(bearer)))
    assert create(client, DEALS[:50], auth("not-a-key")).status_code == 201
    assert_limited(create(client, DEALS[:1]))
