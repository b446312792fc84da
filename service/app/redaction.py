"""What a viewer (the public, or one seat) may see of each recorded event.

Hidden until that hand is over (its ``HandScored`` is in the log): other seats' hands and the
kitty in ``HandDealt``, the hand's seed (its commitment is public at once), other seats' cards in
``CardsPassed``, other seats' received cards and the kitty in ``PassesExchanged``. Never shown:
the ``PlayerJoined`` credential. A ``DealPlan`` shows its seed once the game is over and deal
``k`` once hand ``k`` is over. Event types not listed here are hidden whole (deny by default),
so a new event type is never leaked by accident.

The envelopes shown carry no hashes: a hash over a hidden body (a pass of 3 cards out of 13 has
only 286 possibilities) would let anyone brute-force the hidden cards, and the next event's
``prev_hash`` is that same hash. The chain is verified on the server (the audit).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from domain.state import GameState, Phase
from service.app.deal_plan import DEAL_PLAN
from service.store.envelope import RecordedEvent


@dataclass(frozen=True, slots=True)
class Disclosure:
    viewer: int | None  # the seat looking, or None for the public
    hands_over: int  # hands 1..hands_over have been scored
    game_over: bool = False


def disclosure_for(state: GameState, viewer: int | None) -> Disclosure:
    """What may be shown to ``viewer`` of a game standing at ``state``."""
    scored = state.phase in (Phase.DEALING, Phase.FINISHED)
    hands_over = state.hand_number if scored else max(state.hand_number - 1, 0)
    return Disclosure(viewer, hands_over, state.phase is Phase.FINISHED)


def redact_events(
    events: Iterable[RecordedEvent], disclosure: Disclosure, hand_before: int = 0
) -> list[dict[str, Any]]:
    """The events as ``disclosure.viewer`` may see them.

    ``hand_before`` is the hand number current just before the first event (the
    ``hand_number`` of the state folded up to it): passes belong to the hand dealt last.
    """
    hand = hand_before
    out = []
    for event in events:
        if event.type == "HandDealt":
            hand = int(event.payload["hand_number"])
        out.append(redact(event, disclosure, hand))
    return out


def redact(event: RecordedEvent, disclosure: Disclosure, hand: int) -> dict[str, Any]:
    """One event as the viewer may see it; ``hand`` is the hand it belongs to."""
    rule = _RULES.get(event.type, _hide_all)
    payload, redacted = rule(dict(event.payload), disclosure, hand)
    out: dict[str, Any] = {
        "seq": event.seq,
        "type": event.type,
        "schema_version": event.schema_version,
        "time": event.time,
        "command_id": event.command_id,
        "payload": payload,
        "redacted": redacted,
    }
    return out


# Each rule: (payload copy, disclosure, hand) -> (payload to show, whether anything was hidden).


def _public(payload: dict, d: Disclosure, hand: int) -> tuple[dict, bool]:
    return payload, False


def _hide_all(payload: dict, d: Disclosure, hand: int) -> tuple[dict, bool]:
    return {}, True


def _joined(payload: dict, d: Disclosure, hand: int) -> tuple[dict, bool]:
    payload.pop("credential", None)
    return payload, False


def _dealt(payload: dict, d: Disclosure, hand: int) -> tuple[dict, bool]:
    if hand <= d.hands_over:
        return payload, False
    payload["hands"] = [h if seat == d.viewer else None for seat, h in enumerate(payload["hands"])]
    payload["seed"] = None
    if payload.get("kitty"):
        payload["kitty"] = None
    return payload, True


def _passed(payload: dict, d: Disclosure, hand: int) -> tuple[dict, bool]:
    if hand <= d.hands_over or payload.get("seat") == d.viewer:
        return payload, False
    payload["cards"] = None
    return payload, True


def _exchanged(payload: dict, d: Disclosure, hand: int) -> tuple[dict, bool]:
    if hand <= d.hands_over:
        return payload, False
    received = payload["received"]
    payload["received"] = [r if seat == d.viewer else None for seat, r in enumerate(received)]
    if payload.get("kitty"):
        payload["kitty"] = None
    return payload, True


def _plan(payload: dict, d: Disclosure, hand: int) -> tuple[dict, bool]:
    redacted = False
    if not d.game_over and payload.get("seed") is not None:
        payload["seed"] = None
        redacted = True
    deals = payload.get("deals") or []
    shown = [deal if k + 1 <= d.hands_over or d.game_over else None for k, deal in enumerate(deals)]
    redacted = redacted or any(deal is None for deal in shown)
    payload["deals"] = shown
    return payload, redacted


_RULES = {
    "GameCreated": _public,
    "PlayerJoined": _joined,
    "SeatControlChanged": _public,
    "HandDealt": _dealt,
    "CardsPassed": _passed,
    "PassesExchanged": _exchanged,
    "CardPlayed": _public,
    "TrickTaken": _public,
    "MoonScoringChosen": _public,
    "HandScored": _public,
    "GameEnded": _public,
    DEAL_PLAN: _plan,
}
