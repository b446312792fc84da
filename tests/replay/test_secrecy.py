"""Every event type x every viewer x every moment of its hand, against domain.secrecy.

The redaction of logged events and the hand records must show exactly what the declaration says:
a public field as logged; a secret field as logged once it is revealed, else only the viewer's own
part (or nothing); a credential never.
"""

from __future__ import annotations

import random

import pytest

from domain.events import (
    EVENT_TYPES,
    GameEnded,
    MoonScoringChosen,
    PlayerJoined,
    SeatControlChanged,
    event_to_dict,
    event_type,
)
from domain.rules import MoonScoring, PassDirection, RuleOptions
from domain.secrecy import SECRETS, SECRETS_BY_NAME, Owner, Until
from service.app.hand_records import ALL, decode_events, hand_records, visible_to
from service.app.redaction import Disclosure, redact
from service.store.envelope import NewEvent, RecordedEvent
from tests.projections.games import play_game

RULES = {
    "standard": RuleOptions(score_limit=60),
    "kitty and mix": RuleOptions(
        score_limit=60,
        kitty=True,
        pass_cycle=(PassDirection.LEFT, PassDirection.MIX),
    ),
    "three players": RuleOptions(
        players=3, score_limit=60, kitty=True, pass_cycle=(PassDirection.LEFT, PassDirection.RIGHT)
    ),
}


def test_every_event_type_is_declared():
    assert set(SECRETS) == set(EVENT_TYPES.values())
    for cls, secrets in SECRETS.items():
        names = {f for f in cls.__dataclass_fields__}
        assert {s.field for s in secrets} <= names, cls


def _log(rules: RuleOptions) -> list[RecordedEvent]:
    """A game of two hands or more, plus the event types random bots rarely log."""
    plan = play_game("secrets", rules, random.Random(7), names=[None] * rules.players, max_hands=2)
    events: list[NewEvent] = [e for batch in plan.batches for e in batch]
    extra = [
        PlayerJoined(0, "ann", "sha256-of-a-token"),
        SeatControlChanged(1, "random"),
        MoonScoringChosen(0, MoonScoring.ADD_TO_OTHERS),
        GameEnded((0,), (10,) * rules.players),
    ]
    events += [NewEvent(event_type(x), 1, event_to_dict(x)) for x in extra]
    return [
        RecordedEvent(e.type, e.schema_version, "secrets", seq, "t", "c", e.payload, "", "")
        for seq, e in enumerate(events, start=1)
    ]


def _expected(name: str, payload: dict, viewer: int | None, hand: int, d: Disclosure) -> dict:
    """What the declaration says ``viewer`` sees, worked out field by field."""
    out = dict(payload)
    for s in SECRETS_BY_NAME[name]:
        value = payload[s.field]
        if s.until is Until.NEVER:
            del out[s.field]
        elif d.game_over or (s.until is Until.HAND_SCORED and hand <= d.hands_over):
            continue
        elif s.owner is Owner.EACH_SEAT:
            out[s.field] = [v if i == viewer else None for i, v in enumerate(value)]
        elif s.owner is Owner.SEAT:
            out[s.field] = value if viewer is not None and payload["seat"] == viewer else None
        elif s.owner is Owner.KITTY:
            out[s.field] = value if not value else None
        else:
            out[s.field] = None
    return out


@pytest.mark.parametrize("variant", sorted(RULES))
def test_redaction_follows_the_declaration(variant):
    rules = RULES[variant]
    log = _log(rules)
    seen_types = set()
    hand = 0
    for event in log:
        if event.type == "HandDealt":
            hand = event.payload["hand_number"]
        seen_types.add(event.type)
        # The hand in play, the hand just scored, the game over.
        for hands_over, over in ((hand - 1, False), (hand, False), (hand, True)):
            for viewer in (None, *range(rules.players)):
                d = Disclosure(viewer, max(hands_over, 0), over)
                shown = redact(event, d, hand)
                want = _expected(event.type, event.payload, viewer, hand, d)
                assert shown["payload"] == want, (event.type, viewer, hands_over, over)
                public = {k: event.payload[k] for k in want}
                assert shown["redacted"] == (want != public), (event.type, viewer)
                assert "hash" not in shown and "prev_hash" not in shown
    assert seen_types == set(EVENT_TYPES)


def test_an_unknown_event_type_is_hidden_whole():
    event = RecordedEvent("Surprise", 1, "g", 1, "t", "c", {"cards": ["QS"]}, "", "")
    shown = redact(event, Disclosure(0, 0), 1)
    assert shown["payload"] == {} and shown["redacted"] is True


@pytest.mark.parametrize("variant", sorted(RULES))
def test_hand_records_follow_the_declaration(variant):
    rules = RULES[variant]
    log = _log(rules)[: -len(("joined", "handed", "moon", "ended"))]
    # The second hand unfinished: cut the log before its HandScored.
    last_scored = max(i for i, r in enumerate(log) if r.type == "HandScored")
    full = hand_records(decode_events(log[:last_scored]), ALL)
    finished, in_play = full[0], full[-1]
    assert finished.finished and not in_play.finished
    for viewer in (None, *range(rules.players)):
        assert visible_to(finished, viewer) == finished
        shown = visible_to(in_play, viewer)
        assert shown.seed is None and shown.kitty_dealt is None and shown.kitty_after_pass is None
        for name in ("dealt", "passed", "received"):
            value, whole = getattr(shown, name), getattr(in_play, name)
            if whole is None:
                assert value is None
                continue
            assert value == tuple(v if i == viewer else None for i, v in enumerate(whole)), name
        assert shown.tricks == in_play.tricks  # plays, and a kitty taken with a trick: public
