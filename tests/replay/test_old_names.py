"""A game created before names were checked (GameCreated v1) keeps the name rule it was played
under: it loads, and its audit re-decides its joins alike, though today's rule would refuse or
respell its names (domain/names.py NameRules; the upcaster in service/store/upcasting.py)."""

from __future__ import annotations

import fakeredis

from domain.names import NameRules
from service.app.replay import Replay
from service.store.event_store import RedisEventStore
from service.store.upcasting import default_registry
from tests.replay.helpers import play_game
from tests.replay.tamper import find, read_raw, tamper

GAME = "old-names"
# Names the RFC 8266 rule respells ("ＡＮＮ" is "ANN"), or finds equal to another ("Bob" and "bob").
LEGACY_NAMES = {"ann": "ＡＮＮ", "bob": "Bob", "cat": "bob", "dan": "dan"}


def _old_game(*, created_as_v1: bool) -> RedisEventStore:
    store = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    play_game(store, GAME, seed="old-names", stop_after=40)

    def edit(envelopes: list[dict]) -> list[dict]:
        if created_as_v1:
            created = envelopes[find(envelopes, "GameCreated")]
            created["schema_version"] = 1
            del created["payload"]["names"]
        for env in envelopes:
            if env["type"] == "PlayerJoined":
                env["payload"]["name"] = LEGACY_NAMES[env["payload"]["name"]]
        return envelopes

    tamper(store, GAME, edit, rehash_chain=True)
    return store


def test_a_v1_game_created_is_upcast_to_names_as_written() -> None:
    version, payload = default_registry.upcast("GameCreated", 1, {"game_id": "g"})
    assert (version, payload["names"]) == (2, NameRules.AS_WRITTEN.value)


def test_a_game_from_before_names_were_checked_loads_and_audits_clean() -> None:
    store = _old_game(created_as_v1=True)
    report = Replay(store).audit(GAME)
    assert report.ok, report.to_text()
    names = [
        env["payload"]["name"] for env in read_raw(store, GAME) if env["type"] == "PlayerJoined"
    ]
    assert names == ["ＡＮＮ", "Bob", "bob", "dan"]


def test_the_same_names_in_a_game_created_under_rfc_8266_are_discrepancies() -> None:
    # The control: the rule the game recorded is what the audit applies.
    report = Replay(store := _old_game(created_as_v1=False)).audit(GAME)
    joined = [i + 1 for i, env in enumerate(read_raw(store, GAME)) if env["type"] == "PlayerJoined"]
    flagged = {d.seq for d in report.discrepancies if d.check == "domain"}
    assert not report.ok
    assert {joined[0], joined[2]} <= flagged  # "ＡＮＮ" respelt, "bob" taken by "Bob"
