"""What a viewer (the public, or one seat) may see of each recorded event.

What is whose and until when is declared once, in :mod:`domain.secrecy`: other seats' hands,
passes and received cards, the kitty and the hand's seed stay hidden until that hand is scored
(its ``HandScored`` is in the log); the ``PlayerJoined`` credential is never shown. The service's
own ``DealPlan`` record shows its seed once the game is over and deal ``k`` once hand ``k`` is
scored. Event types neither declares are hidden whole (deny by default), so a new event type is
never leaked by accident.

The envelopes shown carry no hashes: a hash over a hidden body (a pass of 3 cards out of 13 has
only 286 possibilities) would let anyone brute-force the hidden cards, and the next event's
``prev_hash`` is that same hash. The chain is verified on the server (the audit).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from domain.secrecy import Moment, mask
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
    moment = Moment(disclosure.hands_over, disclosure.game_over)
    if event.type == DEAL_PLAN:
        shown = _plan(dict(event.payload), disclosure)
    else:
        shown = mask(event.type, event.payload, disclosure.viewer, hand, moment)
    payload, redacted = shown if shown is not None else ({}, True)
    return {
        "seq": event.seq,
        "type": event.type,
        "schema_version": event.schema_version,
        "time": event.time,
        "command_id": event.command_id,
        "payload": payload,
        "redacted": redacted,
    }


def _plan(payload: dict, d: Disclosure) -> tuple[dict, bool]:
    """The seed until the game is over, deal ``k`` until hand ``k`` is scored."""
    redacted = False
    if not d.game_over and payload.get("seed") is not None:
        payload["seed"] = None
        redacted = True
    deals = payload.get("deals") or []
    shown = [deal if k + 1 <= d.hands_over or d.game_over else None for k, deal in enumerate(deals)]
    redacted = redacted or any(deal is None for deal in shown)
    payload["deals"] = shown
    return payload, redacted
