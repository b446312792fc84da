"""The seed and explicit deals a game was created with, and the seed of each of its hands.

The domain cannot hold them (it has no such event), so the service records them in a
``DealPlan`` record: a service-owned entry of the game's stream, written right after
``GameCreated`` in the same atomic append, and only when a seed or deals were given. The game log
(``service.app.game_log``) reads it back as a ``DealPlan``, beside the domain events. Its
secrets are declared in ``domain.secrecy``'s terms (:data:`DEAL_PLAN_SECRETS`): the seed is
hidden until the game ends, deal ``k`` until hand ``k`` is scored.

Seeds of hands: hand ``k`` (1-based) is dealt ``deals[k-1]`` while the listed deals last; the seed
of hand ``k`` is ``HMAC-SHA256(key=utf8(seed), msg=utf8("hand:" + k))`` in lowercase hex when a
game seed was given, else a fresh ``secrets.token_hex(16)``. An HMAC rather than ``seed/k``:
every hand's seed is revealed once the hand is scored, and a revealed hand seed must not let
anyone compute the deals still to come. A scored hand's cards test a guess of the game seed as
well as its seed does, so a new game's seed must be unguessable (``GameService.create``,
``auth.unguessable_key``); a plan read from an old log is taken as it was written.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from domain.cards import Card
from domain.commands import Deal
from domain.events import EVENT_TYPES, HandDealt
from domain.secrecy import SECRETS, Owner, Secret, Until
from domain.shuffle import SALT_HEX_DIGITS, seed_commitment
from service.store.envelope import NewEvent

DEAL_PLAN = "DealPlan"
DEAL_PLAN_SCHEMA_VERSION = 1

Hands = tuple[tuple[Card, ...], ...]

# The seed gives away every deal to come (hand seeds are derived from it); a listed deal is a
# hand's cards.
DEAL_PLAN_SECRETS = (
    Secret("seed", Owner.SEED, Until.GAME_OVER),
    Secret("deals", Owner.EACH_HAND, Until.HAND_SCORED),
)


# In a game dealt from its creator's seed, every hand's seed is an HMAC of the game seed: a hand
# seed revealed when its hand is scored would let anyone test guesses of a guessable game seed
# ("bluebird42") against it and compute every hand still to come. So there a hand's seed (and
# its commitment's salt) stays hidden until the game is over, like the game seed itself.
SEEDED_HAND_DEALT_SECRETS = tuple(
    Secret(s.field, s.owner, Until.GAME_OVER) if s.field in ("seed", "salt") else s
    for s in SECRETS[HandDealt]
)


def is_domain_event(type_name: str) -> bool:
    return type_name in EVENT_TYPES


@dataclass(frozen=True, slots=True)
class DealPlan:
    seed: str | None = None
    deals: tuple[Hands, ...] = ()

    @property
    def empty(self) -> bool:
        return self.seed is None and not self.deals

    def to_payload(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "deals": [[[str(c) for c in hand] for hand in deal] for deal in self.deals],
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> DealPlan:
        deals = tuple(
            tuple(tuple(Card(c) for c in hand) for hand in deal) for deal in payload["deals"]
        )
        return cls(payload.get("seed"), deals)

    def deal_for(
        self,
        hand_number: int,
        fresh_seed: Callable[[], str] = lambda: secrets.token_hex(16),
        salt: str | None = None,
    ) -> Deal:
        """The Deal command for hand ``hand_number`` (1-based); ``salt`` salts the seed's
        commitment (the service always draws a fresh one: :func:`fresh_salt`)."""
        seed = hand_seed(self.seed, hand_number) if self.seed is not None else fresh_seed()
        if hand_number <= len(self.deals):
            return Deal(seed=seed, hands=self.deals[hand_number - 1], salt=salt)
        return Deal(seed=seed, salt=salt)


SEED_COMMITTED = "SeedCommitted"
SEED_COMMITTED_SCHEMA_VERSION = 1

# The server's seed for a hand, committed before the hand's contributions are accepted: secret
# (with its salt) until that hand is scored, like the hand's own seed (issue 21).
SEED_COMMITTED_SECRETS = (
    Secret("seed", Owner.SEED, Until.HAND_SCORED),
    Secret("salt", Owner.SEED, Until.HAND_SCORED),
)


@dataclass(frozen=True, slots=True)
class SeedCommitted:
    """The service's record of the seed (and commitment salt) it will deal hand
    ``hand_number`` from, appended before any player may contribute to that hand's shuffle:
    for hand 1 with the game's creation, for hand n+1 with hand n's deal. Games whose deals
    their creator chose (a seed or explicit deals) have none: contributions would not count."""

    hand_number: int
    seed_commitment: str
    seed: str
    salt: str

    def to_payload(self) -> dict[str, Any]:
        return {
            "hand_number": self.hand_number,
            "seed_commitment": self.seed_commitment,
            "seed": self.seed,
            "salt": self.salt,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> SeedCommitted:
        return cls(
            int(payload["hand_number"]),
            str(payload["seed_commitment"]),
            str(payload["seed"]),
            str(payload["salt"]),
        )

    @classmethod
    def fresh(cls, hand_number: int, seed: str, salt: str) -> SeedCommitted:
        return cls(hand_number, seed_commitment(seed, salt), seed, salt)

    def record(self) -> NewEvent:
        return NewEvent(SEED_COMMITTED, SEED_COMMITTED_SCHEMA_VERSION, self.to_payload())


# The service's own records in a game's log (beside the domain's events).
SERVICE_RECORDS = (DealPlan, SeedCommitted)


def seeded(records: Iterable[object]) -> bool:
    """Whether a game's records hold a DealPlan with a game seed (SEEDED_HAND_DEALT_SECRETS)."""
    return any(isinstance(r, DealPlan) and r.seed is not None for r in records)


def plan_event(plan: DealPlan) -> NewEvent:
    """The record to append for ``plan``, right after the game's ``GameCreated``."""
    return NewEvent(DEAL_PLAN, DEAL_PLAN_SCHEMA_VERSION, plan.to_payload())


def fresh_salt() -> str:
    """A commitment's salt: 128 random bits in lowercase hex (``domain.shuffle.seed_commitment``).
    Drawn for every deal, a creator's chosen seed included: the commitment must hide the seed
    whoever chose it."""
    return secrets.token_hex(SALT_HEX_DIGITS // 2)


def hand_seed(game_seed: str, hand_number: int) -> str:
    message = f"hand:{hand_number}".encode()
    return hmac.new(game_seed.encode("utf-8"), message, hashlib.sha256).hexdigest()
