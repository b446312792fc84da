"""Deals of the unseen cards that agree with everything a seat knows.

Each sample gives every other seat as many cards as it holds, never a card of a suit it has
shown it is out of, and the cards this seat passed to whoever received them (until played);
the rest go outside the hands (the kitty, live or already taken). Cards are placed most
constrained first, each to a seat drawn in proportion to its free room, which is close to
uniform over the consistent deals and never produces an inconsistent one.
"""

from __future__ import annotations

import random

from .cardbits import bits
from .knowledge import Knowledge
from .simulation import PlayState

_ATTEMPTS = 20


def sample_state(k: Knowledge, rng: random.Random) -> PlayState:
    """A copy of the seat's model with the other hands (and a live kitty) filled in."""
    st = k.state.copy()
    n = st.rules.players
    others = [s for s in range(n) if s != k.seat]
    fixed = 0
    for h in k.holds:
        fixed |= h
    free = [c for c in bits(k.unseen & ~fixed)]
    outside = n  # the slot for cards in no hand
    for attempt in range(_ATTEMPTS + 1):
        strict = attempt < _ATTEMPTS  # the last try ignores voids rather than fail
        room = [k.sizes[s] - k.holds[s].bit_count() for s in range(n)] + [k.outside]
        room[k.seat] = 0
        hands = [k.holds[s] for s in range(n)] + [0]
        rng.shuffle(free)
        # The most constrained cards first: those that fewer seats could hold.
        order = sorted(free, key=lambda c: _choices(c, others, st.voids)) if strict else free
        ok = True
        for c in order:
            suit_bit = 1 << (c // 13)
            slots = [s for s in others if room[s] > 0 and not (strict and st.voids[s] & suit_bit)]
            if room[outside] > 0:
                slots.append(outside)
            if not slots:
                ok = False
                break
            total = sum(room[s] for s in slots)
            x = rng.randrange(total)
            for s in slots:
                x -= room[s]
                if x < 0:
                    break
            hands[s] |= 1 << c
            room[s] -= 1
        if ok:
            for s in others:
                st.hands[s] = hands[s]
            st.kitty = hands[outside] if k.kitty_live else 0
            return st
    raise AssertionError("unreachable: the last attempt places every card")  # pragma: no cover


def _choices(card: int, others: list[int], voids: list[int]) -> int:
    suit_bit = 1 << (card // 13)
    return sum(1 for s in others if not voids[s] & suit_bit)
