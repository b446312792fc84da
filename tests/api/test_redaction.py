"""No response a seat (or the public) receives shows a card another seat still holds hidden."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from domain.events import event_from_dict
from domain.state import GameState, Phase
from service.app import game_log
from service.app.deal_plan import is_domain_event
from service.app.game import StoredGame, fold_records
from service.app.redaction import Disclosure, redact, redact_events
from service.store.envelope import RecordedEvent
from tests.api.helpers import Hearts, cards_in


def hidden_from(state: GameState, seat: int | None) -> set:
    """The cards other seats hold now, less those this seat passed them (it knows those)."""
    hand = state.hand
    if hand is None or state.phase not in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
        return set()
    others = set().union(*(hand.hands[o] for o in range(state.players) if o != seat))
    passed = set(hand.passed[seat] or ()) if seat is not None else set()
    return others - passed


def scan(hearts: Hearts, service, game_id: str) -> int:
    log = service.store.read(game_id)
    tables = [StoredGame()]  # the game after each version
    for event in log:
        tables.append(fold_records(tables[-1], [event]))
    checked = 0
    for seat, data in hearts.responses:
        version = data["version"]
        state = tables[version].state
        hidden = hidden_from(state, seat)
        view = data.get("view", data)
        leaked = cards_in(view) & hidden
        assert not leaked, f"seat {seat} saw {leaked} at version {version}"
        # Events of the hand now being played must not show them either (a finished hand's
        # events may show everything: its cards were dealt again since).
        dealt = [e.seq for e in log[:version] if e.type == "HandDealt"]
        current = [e for e in data.get("events", []) if dealt and e["seq"] >= dealt[-1]]
        leaked = cards_in(current) & hidden
        assert not leaked, f"seat {seat} saw {leaked} in events at version {version}"
        assert "credential" not in str(data)
        checked += 1
    return checked


@pytest.mark.parametrize("humans", [4, 1])
def test_no_response_reveals_another_seats_hidden_cards(hearts: Hearts, service, humans):
    game_id, tokens = hearts.new_game(humans, rules={"score_limit": 30})
    public_seen = []
    original_view = hearts.view

    def view(game_id, token=None, seat=None):
        data = original_view(game_id, token, seat)
        if token is None:
            public_seen.append(data)
        return data

    hearts.view = view  # type: ignore[method-assign]
    hearts.play_out(game_id, tokens)
    assert public_seen and scan(hearts, service, game_id) > 50
    events = [e for _, d in hearts.responses for e in d.get("events", [])]
    types = {e["type"] for e in events}
    assert {"CardsPassed", "PassesExchanged", "CardPlayed", "HandScored"} <= types
    assert any(e["redacted"] for e in events)


def recorded(seq: int, type_: str, payload: dict) -> game_log.Entry:
    """A log entry, typed by the game log from the stored envelope it would be."""
    version = 3 if type_ == "HandDealt" else 1  # v2 added the salt, v3 the contributions
    stored = RecordedEvent(type_, version, "g", seq, "t", "c", payload, "0" * 64, "1" * 64)
    return game_log.Entry(seq, "t", "c", stored.hash, game_log.decode(stored))


@dataclass(frozen=True)
class SomethingNew:
    """A record class no declaration knows."""

    cards: tuple[str, ...]


DEALT = {
    "hand_number": 1,
    "dealer": 0,
    "pass_direction": "left",
    "hands": [["2C"], ["3C"], ["4C"], ["5C"]],
    "kitty": [],
    "seed": "secret",
    "seed_commitment": "c",
    "explicit": False,
    "salt": "5a" * 16,
    "contributions": [[1, "c0ffee"]],
}


def test_redaction_rules_by_event():
    during = Disclosure(viewer=1, hands_over=0)
    after = Disclosure(viewer=1, hands_over=1)
    public = Disclosure(viewer=None, hands_over=0)
    dealt = redact(recorded(3, "HandDealt", DEALT), during, 1)
    assert dealt["payload"]["hands"] == [None, ["3C"], None, None]
    assert dealt["payload"]["seed"] is None and dealt["payload"]["seed_commitment"] == "c"
    assert dealt["payload"]["salt"] is None  # the salt is revealed with the seed, not before
    assert dealt["redacted"] and "hash" not in dealt
    assert redact(recorded(3, "HandDealt", DEALT), after, 1)["payload"] == DEALT
    assert redact(recorded(3, "HandDealt", DEALT), public, 1)["payload"]["hands"] == [None] * 4

    passed = recorded(4, "CardsPassed", {"seat": 2, "cards": ["4C"]})
    assert redact(passed, during, 1)["payload"]["cards"] is None
    assert redact(passed, after, 1)["payload"]["cards"] == ["4C"]
    assert redact(passed, Disclosure(2, 0), 1)["payload"]["cards"] == ["4C"]

    received = [["2C"], ["3C"], ["4C"], ["5C"]]
    exchanged = recorded(5, "PassesExchanged", {"received": received, "kitty": []})
    assert redact(exchanged, during, 1)["payload"]["received"] == [None, ["3C"], None, None]

    joined = recorded(2, "PlayerJoined", {"seat": 0, "name": "ann", "credential": "h"})
    # Upcast to v2: a join stored before players registered is a guest's (player_id None).
    assert redact(joined, public, 0)["payload"] == {"seat": 0, "name": "ann", "player_id": None}
    unknown = game_log.Entry(9, "t", "c", "h", SomethingNew(("QS",)))  # type: ignore[arg-type]
    assert redact(unknown, after, 1)["payload"] == {} and redact(unknown, after, 1)["redacted"]

    plan = recorded(2, "DealPlan", {"seed": "s", "deals": [[["2C"]], [["3C"]]]})
    shown = redact(plan, after, 2)["payload"]
    assert shown == {"seed": None, "deals": [[["2C"]], None]}
    assert redact(plan, Disclosure(None, 2, game_over=True), 2)["payload"]["seed"] == "s"


def test_passes_belong_to_the_hand_dealt_before_them():
    events = [recorded(3, "HandDealt", DEALT), recorded(4, "CardsPassed", {"seat": 0, "cards": []})]
    second = dict(DEALT, hand_number=2)
    events += [
        recorded(5, "HandDealt", second),
        recorded(6, "CardsPassed", {"seat": 3, "cards": ["5C"]}),
    ]
    shown = redact_events(events[1:], Disclosure(viewer=1, hands_over=1), hand_before=1)
    assert shown[0]["payload"]["cards"] == [] and shown[2]["payload"]["cards"] is None
    assert all(is_domain_event(type(e.record).__name__) for e in events)
    assert event_from_dict("HandDealt", DEALT).seed == "secret"
