"""What a viewer (the public, or one seat) may see of each entry of a game's log.

Redaction works on the game log's typed records (:mod:`service.app.game_log`) and asks the
declaration, by class, what is whose and until when: :mod:`domain.secrecy` for the domain's
events (other seats' hands, passes and received cards, the kitty and the hand's seed stay hidden
until that hand is scored; the ``PlayerJoined`` credential is never shown), and
:data:`~service.app.deal_plan.DEAL_PLAN_SECRETS` in the same terms for the service's own
``DealPlan`` (its seed until the game is over, deal ``k`` until hand ``k`` is scored). In a game
dealt from its creator's seed, the hands' seeds and salts wait for the game's end too
(``SEEDED_HAND_DEALT_SECRETS``: each is an HMAC of the game seed). A record
class neither declares is hidden whole (deny by default), so a new one is never leaked by
accident.

The envelopes shown carry no hashes: a hash over a hidden body (a pass of 3 cards out of 13 has
only 286 possibilities) would let anyone brute-force the hidden cards, and the next event's
``prev_hash`` is that same hash. The chain is verified on the server (the audit).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.events import HandDealt
from domain.secrecy import SECRETS, Moment, Secret, mask, moment_of
from domain.state import GameState
from service.app import game_log
from service.app.deal_plan import (
    DEAL_PLAN_SECRETS,
    SEED_COMMITTED_SECRETS,
    SEEDED_HAND_DEALT_SECRETS,
    DealPlan,
    SeedCommitted,
)

# Every record class the log may hold, and its declaration.
_DECLARED: Mapping[type, tuple[Secret, ...]] = {
    **SECRETS,
    DealPlan: DEAL_PLAN_SECRETS,
    SeedCommitted: SEED_COMMITTED_SECRETS,
}


@dataclass(frozen=True, slots=True)
class Disclosure:
    viewer: int | None  # the seat looking, or None for the public
    hands_over: int  # hands 1..hands_over have been scored
    game_over: bool = False
    seeded: bool = False  # dealt from the creator's seed: hand seeds wait for the game's end

    @property
    def moment(self) -> Moment:
        return Moment(self.hands_over, self.game_over)


def disclosure_for(state: GameState, viewer: int | None, seeded: bool = False) -> Disclosure:
    """What may be shown to ``viewer`` of a game standing at ``state``; ``seeded``: the game
    was dealt from its creator's seed (see ``SEEDED_HAND_DEALT_SECRETS``)."""
    moment = moment_of(state)
    return Disclosure(viewer, moment.hands_over, moment.game_over, seeded)


def redact_events(
    entries: Iterable[game_log.Entry], disclosure: Disclosure, hand_before: int = 0
) -> list[dict[str, Any]]:
    """The entries as ``disclosure.viewer`` may see them.

    ``hand_before`` is the hand number current just before the first entry (the
    ``hand_number`` of the state folded up to it): passes belong to the hand dealt last.
    """
    hand = hand_before
    out = []
    for entry in entries:
        if isinstance(entry.record, HandDealt):
            hand = entry.record.hand_number
        out.append(redact(entry, disclosure, hand))
    return out


def redact(entry: game_log.Entry, disclosure: Disclosure, hand: int) -> dict[str, Any]:
    """One entry as the viewer may see it; ``hand`` is the hand it belongs to."""
    record = entry.record
    type_name, version, payload = game_log.payload_of(record)
    secrets = _DECLARED.get(type(record))
    if disclosure.seeded and isinstance(record, HandDealt):
        secrets = SEEDED_HAND_DEALT_SECRETS
    if isinstance(record, SeedCommitted):
        hand = record.hand_number  # committed ahead: its secret is that hand's, not this one's
    if secrets is None:
        shown, redacted = {}, True
    else:
        shown, redacted = mask(secrets, payload, disclosure.viewer, hand, disclosure.moment)
    return {
        "seq": entry.seq,
        "type": type_name,
        "schema_version": version,
        "time": entry.time,
        "command_id": entry.command_id,
        "payload": shown,
        "redacted": redacted,
    }
