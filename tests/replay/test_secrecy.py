"""Every event type x every viewer x every moment of its hand, against domain.secrecy; and the
views of the state, every viewer x every phase, against the same declaration.

The redaction of logged events and the hand records must show exactly what the declaration says:
a public field as logged; a secret field as logged once it is revealed, else only the viewer's own
part (or nothing); a credential never. A view must show no card of a part the declaration hides
from its viewer, and no seed it hides.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pytest

from domain.decider import evolve
from domain.events import (
    EVENT_TYPES,
    GameAbandoned,
    GameEnded,
    GameExpired,
    MoonScoringChosen,
    PlayerJoined,
    SeatControlChanged,
    SeatResumed,
    SeatTimedOut,
    SeedContributed,
    event_from_dict,
    event_to_dict,
    event_type,
)
from domain.rules import MoonScoring, PassDirection, RuleOptions
from domain.secrecy import (
    HAND,
    KITTY,
    PASSED,
    RECEIVED,
    SECRETS,
    SECRETS_BY_NAME,
    SEED,
    Owner,
    Until,
    may_see,
    moment_of,
)
from domain.state import INITIAL_STATE, GameState, Phase
from domain.views import public_view, seat_view
from service.app import game_log
from service.app.deal_plan import DEAL_PLAN_SECRETS, DealPlan
from service.app.hand_records import ALL, decode_events, hand_records, visible_to
from service.app.redaction import Disclosure, redact
from service.store.envelope import NewEvent, RecordedEvent
from tests.api.helpers import cards_in
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
    for cls, secrets in (*SECRETS.items(), (DealPlan, DEAL_PLAN_SECRETS)):
        names = {f for f in cls.__dataclass_fields__}
        assert {s.field for s in secrets} <= names, cls


def _log(rules: RuleOptions) -> list[RecordedEvent]:
    """A game of two hands or more, plus the event types random bots rarely log."""
    plan = play_game("secrets", rules, random.Random(7), names=[None] * rules.players, max_hands=2)
    events: list[NewEvent] = [e for batch in plan.batches for e in batch]
    extra = [
        PlayerJoined(0, "ann", "sha256-of-a-token", "p1"),
        SeatResumed(0, "sha256-of-a-new-token"),
        SeatControlChanged(1, "random"),
        MoonScoringChosen(0, MoonScoring.ADD_TO_OTHERS),
        GameEnded((0,), (10,) * rules.players),
        GameExpired("2026-01-01T00:00:00.000000Z"),
        SeatTimedOut(2, "2026-01-01T00:00:00.000000Z"),
        GameAbandoned(1, "2026-01-01T00:00:00.000000Z"),
        SeedContributed(3, 0, "c0ffee"),
    ]
    events += [NewEvent(event_type(x), type(x).schema_version, event_to_dict(x)) for x in extra]
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
    for event, entry in zip(log, game_log.entries(log), strict=True):
        if event.type == "HandDealt":
            hand = event.payload["hand_number"]
        seen_types.add(event.type)
        # The hand in play, the hand just scored, the game over.
        for hands_over, over in ((hand - 1, False), (hand, False), (hand, True)):
            for viewer in (None, *range(rules.players)):
                d = Disclosure(viewer, max(hands_over, 0), over)
                shown = redact(entry, d, hand)
                want = _expected(event.type, event.payload, viewer, hand, d)
                assert shown["payload"] == want, (event.type, viewer, hands_over, over)
                public = {k: event.payload[k] for k in want}
                assert shown["redacted"] == (want != public), (event.type, viewer)
                assert "hash" not in shown and "prev_hash" not in shown
    assert seen_types == set(EVENT_TYPES)


@dataclass(frozen=True)
class Surprise:
    """A record class the declaration does not know."""

    cards: tuple[str, ...]


def test_an_undeclared_record_class_is_hidden_whole():
    entry = game_log.Entry(1, "t", "c", "h", Surprise(("QS",)))  # type: ignore[arg-type]
    shown = redact(entry, Disclosure(0, 0), 1)
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


# -- views of the state ---------------------------------------------------------------------------


def _states(rules: RuleOptions, seed: int) -> list[GameState]:
    """The state after every event of a random game played to its end."""
    plan = play_game("views", rules, random.Random(seed), names=[None] * rules.players)
    states, state = [], INITIAL_STATE
    for event in (e for batch in plan.batches for e in batch):
        state = evolve(state, event_from_dict(event.type, event.payload))
        states.append(state)
    return states


def _parts(state: GameState):
    """(secret, owning seat or None, cards) of every secret the hand in play holds."""
    hand = state.hand
    assert hand is not None
    for s in range(state.players):
        yield HAND, s, set(hand.hands[s])
        yield PASSED, s, set(hand.passed[s] or ())
        yield RECEIVED, s, set(hand.received[s]) if hand.received is not None else set()
    yield KITTY, None, set(hand.kitty)


def leaks(state: GameState, viewer: int | None, view: dict) -> set:
    """The cards ``view`` shows that the declaration hides from ``viewer`` at ``state`` (a card
    also in a part the viewer may see, or played face up, is no secret to it), and the hand's
    seed if the view shows it while hidden."""
    hand = state.hand
    if hand is None:
        return set()
    moment, number = moment_of(state), state.hand_number
    hidden, known = set(), set()
    for secret, owner, cards in _parts(state):
        allowed = may_see(secret, viewer, owner, number, moment)
        (known if allowed else hidden).update(cards)
    known.update(c for t in hand.tricks for _, c in t.plays)
    known.update(c for _, c in hand.trick)
    if hand.kitty_taken:
        known.update(hand.kitty)  # turned face up with the trick that took it
    found: set = cards_in(view) & (hidden - known)
    if not may_see(SEED, viewer, None, number, moment) and hand.seed in json.dumps(view):
        found.add(hand.seed)
    return found


@pytest.mark.parametrize("variant", sorted(RULES))
def test_views_follow_the_declaration(variant):
    rules = RuleOptions.from_dict({**RULES[variant].to_dict(), "score_limit": 40})
    phases = set()
    for seed in (1, 2):
        for state in _states(rules, seed):
            phases.add(state.phase)
            for viewer in (None, *range(rules.players)):
                if viewer is None:
                    view = public_view(state).to_dict()
                else:
                    view = seat_view(state, viewer).to_dict()
                assert not leaks(state, viewer, view), (state.phase, viewer)
                if viewer is None or state.hand is None:
                    continue
                # A seat's own parts: shown exactly when the declaration lets it see them.
                number, moment = state.hand_number, moment_of(state)
                own = sorted(state.hand.hands[viewer], key=str)
                if may_see(HAND, viewer, viewer, number, moment):
                    assert sorted(view["hand"]) == sorted(str(c) for c in own)
                passed = state.hand.passed[viewer]
                if may_see(PASSED, viewer, viewer, number, moment) and passed is not None:
                    assert view["passed_cards"] == [str(c) for c in passed]
    assert {Phase.PASSING, Phase.PLAYING, Phase.DEALING, Phase.FINISHED} <= phases


def test_the_view_check_finds_a_leak():
    """The check above has teeth: another seat's hand, or the seed, shown mid-hand is caught."""
    state = next(s for s in _states(RULES["standard"], 1) if s.phase is Phase.PLAYING)
    view = seat_view(state, 0).to_dict()
    assert not leaks(state, 0, view)
    other = [str(c) for c in state.hand.hands[1]]
    assert leaks(state, 0, {**view, "extra": other})
    assert leaks(state, None, {**public_view(state).to_dict(), "extra": state.hand.seed})
