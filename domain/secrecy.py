"""Secrecy, declared once: which field of each event is whose, and until when it stays hidden.

Every field not declared here is public the moment it is logged. A declared field belongs to:

- ``SEAT``: the seat the event names in its ``seat`` field (a pass);
- ``EACH_SEAT``: one entry per seat, entry ``i`` being seat ``i``'s (the hands dealt, the cards
  received in the pass);
- ``KITTY``: cards nobody holds (the kitty as dealt, and after a mixing pass);
- ``SEED``: the deal's seed, which gives away every hand at once;
- ``NOBODY``: a credential, never shown to anyone.

It is hidden from everyone but its owner until the hand it belongs to is scored (``HAND_SCORED``),
until the game is over (``GAME_OVER``), or for ever (``NEVER``). A kitty taken with a trick
(``TrickTaken.kitty``) is public: it is turned face up with the trick that takes it.

Who reads this: the service's redaction of logged events, its hand records and its audit (which
never quotes a hidden field). Views of the state (``domain.views``) show a seat its own hand and
nobody else's, which is this declaration for the state as it stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any

from .events import (
    CardPlayed,
    CardsPassed,
    GameCreated,
    GameEnded,
    HandDealt,
    HandScored,
    MoonScoringChosen,
    PassesExchanged,
    PlayerJoined,
    SeatControlChanged,
    TrickTaken,
)


class Owner(Enum):
    SEAT = "seat"
    EACH_SEAT = "each seat"
    KITTY = "kitty"
    SEED = "seed"
    NOBODY = "nobody"


class Until(Enum):
    HAND_SCORED = "hand scored"
    GAME_OVER = "game over"
    NEVER = "never"


@dataclass(frozen=True, slots=True)
class Secret:
    field: str
    owner: Owner
    until: Until


SECRETS: Mapping[type, tuple[Secret, ...]] = MappingProxyType(
    {
        GameCreated: (),
        PlayerJoined: (Secret("credential", Owner.NOBODY, Until.NEVER),),
        SeatControlChanged: (),
        HandDealt: (
            Secret("hands", Owner.EACH_SEAT, Until.HAND_SCORED),
            Secret("kitty", Owner.KITTY, Until.HAND_SCORED),
            Secret("seed", Owner.SEED, Until.HAND_SCORED),
        ),
        CardsPassed: (Secret("cards", Owner.SEAT, Until.HAND_SCORED),),
        PassesExchanged: (
            Secret("received", Owner.EACH_SEAT, Until.HAND_SCORED),
            Secret("kitty", Owner.KITTY, Until.HAND_SCORED),
        ),
        CardPlayed: (),
        TrickTaken: (),
        MoonScoringChosen: (),
        HandScored: (),
        GameEnded: (),
    }
)

SECRETS_BY_NAME: Mapping[str, tuple[Secret, ...]] = MappingProxyType(
    {cls.__name__: secrets for cls, secrets in SECRETS.items()}
)


def secret(event_type: type, field: str) -> Secret:
    """The declaration of one field (KeyError if the field is public)."""
    return next(s for s in SECRETS[event_type] if s.field == field)


@dataclass(frozen=True, slots=True)
class Moment:
    """How far a game is, as far as secrets go: hands 1..hands_over are scored."""

    hands_over: int
    game_over: bool = False


def revealed(secret: Secret, hand: int, moment: Moment) -> bool:
    """Whether ``secret``, of hand ``hand``, is public by ``moment``."""
    if secret.until is Until.NEVER:
        return False
    if moment.game_over:
        return True
    return secret.until is Until.HAND_SCORED and hand <= moment.hands_over


def hidden_part(secret: Secret, value: Any, viewer: int | None, seat: Any = None) -> Any:
    """``value`` of an unrevealed ``secret`` as ``viewer`` (a seat, None for a spectator) may
    see it: the viewer's own entry or own pass, else None; ``seat`` is the event's ``seat``."""
    if secret.owner is Owner.EACH_SEAT:
        return type(value)(v if i == viewer else None for i, v in enumerate(value))
    if secret.owner is Owner.SEAT:
        return value if viewer is not None and seat == viewer else None
    if secret.owner is Owner.KITTY and not value:
        return value  # no kitty in this game: nothing to hide
    return None


def mask(
    type_name: str, payload: Mapping[str, Any], viewer: int | None, hand: int, moment: Moment
) -> tuple[dict[str, Any], bool] | None:
    """An event's fields (JSON form or not) as ``viewer`` may see them at ``moment``, and
    whether anything was hidden; ``hand`` is the hand the event belongs to. None for a type
    this module does not know: the caller hides it whole (deny by default).

    ``NOBODY`` fields are left out altogether: they are not part of any view, hidden or not.
    """
    secrets = SECRETS_BY_NAME.get(type_name)
    if secrets is None:
        return None
    shown = dict(payload)
    hidden = False
    for s in secrets:
        if s.field not in shown or revealed(s, hand, moment):
            continue
        if s.owner is Owner.NOBODY:
            del shown[s.field]
            continue
        value = shown[s.field]
        part = hidden_part(s, value, viewer, shown.get("seat"))
        shown[s.field] = part
        hidden = hidden or part != value
    return shown, hidden
