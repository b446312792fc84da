"""Secrecy, declared once: which field of each event is whose, and until when it stays hidden.

Every field not declared here is public the moment it is logged. A declared field belongs to:

- ``SEAT``: the seat the event names in its ``seat`` field (a pass);
- ``EACH_SEAT``: one entry per seat, entry ``i`` being seat ``i``'s (the hands dealt, the cards
  received in the pass);
- ``KITTY``: cards nobody holds (the kitty as dealt, and after a mixing pass);
- ``SEED``: the deal's seed, which gives away every hand at once;
- ``NOBODY``: a credential, never shown to anyone;
- ``EACH_HAND``: one entry per hand, entry ``k`` being hand ``k + 1``'s (the deals a game was
  created with, in the service's deal plan): each hidden until its own hand is scored.

It is hidden from everyone but its owner until the hand it belongs to is scored (``HAND_SCORED``),
until the game is over (``GAME_OVER``), or for ever (``NEVER``). A kitty taken with a trick
(``TrickTaken.kitty``) is public: it is turned face up with the trick that takes it.

One predicate decides, :func:`may_see`: whether a viewer may see the part of a secret that one
seat owns (or that no seat owns) at a moment of the game. Who asks it: the views of the state
(``domain.views``, for each secret of the hand in play it shows: :data:`HAND`, :data:`PASSED`,
:data:`RECEIVED`; it never shows :data:`KITTY` or :data:`SEED`), the service's hand records,
and through :func:`mask` its redaction of logged events. The audit never quotes a field
declared here.
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
    GameAbandoned,
    GameCreated,
    GameEnded,
    GameExpired,
    HandDealt,
    HandScored,
    MoonScoringChosen,
    PassesExchanged,
    PlayerJoined,
    SeatControlChanged,
    SeatResumed,
    SeatTimedOut,
    SeedContributed,
    TrickTaken,
)
from .state import GameState, Phase


class Owner(Enum):
    SEAT = "seat"
    EACH_SEAT = "each seat"
    KITTY = "kitty"
    SEED = "seed"
    NOBODY = "nobody"
    EACH_HAND = "each hand"


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
        SeatResumed: (Secret("credential", Owner.NOBODY, Until.NEVER),),
        SeatControlChanged: (),
        HandDealt: (
            Secret("hands", Owner.EACH_SEAT, Until.HAND_SCORED),
            Secret("kitty", Owner.KITTY, Until.HAND_SCORED),
            Secret("seed", Owner.SEED, Until.HAND_SCORED),
            # Revealed with the seed: before that it is what keeps a guess from being tested
            # against the public commitment.
            Secret("salt", Owner.SEED, Until.HAND_SCORED),
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
        GameExpired: (),
        SeatTimedOut: (),
        GameAbandoned: (),
        SeedContributed: (),
    }
)

SECRETS_BY_NAME: Mapping[str, tuple[Secret, ...]] = MappingProxyType(
    {cls.__name__: secrets for cls, secrets in SECRETS.items()}
)


def secret(event_type: type, field: str) -> Secret:
    """The declaration of one field (StopIteration if the field is public)."""
    return next(s for s in SECRETS[event_type] if s.field == field)


# The secrets the state of a hand in play holds, by the event field each comes from.
HAND = secret(HandDealt, "hands")  # a seat's cards, as dealt and as they are after the pass
PASSED = secret(CardsPassed, "cards")
RECEIVED = secret(PassesExchanged, "received")
KITTY = secret(HandDealt, "kitty")
SEED = secret(HandDealt, "seed")


@dataclass(frozen=True, slots=True)
class Moment:
    """How far a game is, as far as secrets go: hands 1..hands_over are scored."""

    hands_over: int
    game_over: bool = False


def moment_of(state: GameState) -> Moment:
    """How far the game standing at ``state`` is: the hand in play is scored once the game
    waits for the next deal, or is over."""
    scored = state.phase in (Phase.DEALING, Phase.FINISHED)
    hands_over = state.hand_number if scored else max(state.hand_number - 1, 0)
    return Moment(hands_over, state.phase is Phase.FINISHED)


def revealed(secret: Secret, hand: int, moment: Moment) -> bool:
    """Whether ``secret``, of hand ``hand``, is public by ``moment``."""
    if secret.until is Until.NEVER:
        return False
    if moment.game_over:
        return True
    return secret.until is Until.HAND_SCORED and hand <= moment.hands_over


def may_see(
    secret: Secret, viewer: int | None, owner: int | None, hand: int, moment: Moment
) -> bool:
    """Whether ``viewer`` (a seat, None for the public) may see the part of ``secret`` that
    ``owner`` holds (a seat; None for a part no seat holds: a kitty, a seed, a credential), of
    hand ``hand``, at ``moment``: anyone once it is revealed; until then the seat it belongs
    to, for a seat's secret, and nobody for the rest."""
    if revealed(secret, hand, moment):
        return True
    if secret.owner is Owner.SEAT or secret.owner is Owner.EACH_SEAT:
        return viewer is not None and owner == viewer
    return False


def hidden_part(
    secret: Secret, value: Any, viewer: int | None, hand: int, moment: Moment, seat: Any = None
) -> Any:
    """``value`` of ``secret`` (of hand ``hand``) as ``viewer`` may see it at ``moment``: the
    entries :func:`may_see` allows, None for the rest; ``seat`` is the event's ``seat``."""
    if secret.owner is Owner.EACH_SEAT:
        return type(value)(
            v if may_see(secret, viewer, i, hand, moment) else None for i, v in enumerate(value)
        )
    if secret.owner is Owner.EACH_HAND:
        return type(value)(
            v if may_see(secret, viewer, None, k + 1, moment) else None for k, v in enumerate(value)
        )
    if secret.owner is Owner.KITTY and not value:
        return value  # no kitty in this game: nothing to hide
    owner = seat if secret.owner is Owner.SEAT else None
    return value if may_see(secret, viewer, owner, hand, moment) else None


def mask(
    secrets: tuple[Secret, ...],
    payload: Mapping[str, Any],
    viewer: int | None,
    hand: int,
    moment: Moment,
) -> tuple[dict[str, Any], bool]:
    """A record's fields (JSON form or not) as ``viewer`` may see them at ``moment``, given
    the declaration of its class (``SECRETS[cls]``), and whether anything was hidden; ``hand``
    is the hand the record belongs to. A class without a declaration is the caller's to hide
    whole (deny by default).

    ``NOBODY`` fields are left out altogether: they are not part of any view, hidden or not.
    """
    shown = dict(payload)
    hidden = False
    for s in secrets:
        if s.field not in shown or revealed(s, hand, moment):
            continue
        if s.owner is Owner.NOBODY:
            del shown[s.field]
            continue
        value = shown[s.field]
        part = hidden_part(s, value, viewer, hand, moment, shown.get("seat"))
        shown[s.field] = part
        hidden = hidden or part != value
    return shown, hidden
