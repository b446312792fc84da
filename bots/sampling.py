"""Deals of the unseen cards that agree with everything a seat knows.

Each sample gives every other seat as many cards as it holds, never a card of a suit it has
shown it is out of, and the cards this seat passed to whoever received them (until played);
the rest go outside the hands (the kitty, live or already taken). Cards are placed most
constrained first, each to a slot (a seat, or outside) drawn in proportion to its free room.

The placement is exact: before each card it keeps only the slots after which the rest can still
be placed. Cards of a suit are interchangeable for that question, so it is Hall's condition over
the suits: for every set S of suits, the free cards of S fit in the room of the slots that may
take a card of S. The real deal meets it, so a sample always exists and is always found, in one
pass (an earlier version retried at random and, when that failed, ignored the voids).
"""

from __future__ import annotations

import random

from .cardbits import SUIT_MASK, bits
from .knowledge import Knowledge
from .simulation import PlayState

_SUBSETS = range(1, 16)  # every non-empty set of the four suits, as a 4-bit mask


def sample_state(k: Knowledge, rng: random.Random) -> PlayState:
    """A copy of the seat's model with the other hands (and a live kitty) filled in."""
    st = k.state.copy()
    n = st.rules.players
    voids = st.voids
    outside = n  # the slot for cards in no hand
    fixed = 0
    for h in k.holds:
        fixed |= h
    free = list(bits(k.unseen & ~fixed))
    room = [0 if s == k.seat else k.sizes[s] - k.holds[s].bit_count() for s in range(n)]
    room.append(k.outside)
    slots = [s for s in range(n + 1) if room[s] > 0]
    # takes[u]: the slots (as a bit mask) that may hold a card of suit u.
    takes = [0] * 4
    for u in range(4):
        for s in slots:
            if s == outside or not voids[s] >> u & 1:
                takes[u] |= 1 << s
    left = [0] * 4  # free cards per suit still to place
    for c in free:
        left[c // 13] += 1
    # For every set of suits: the slots that may take one of them, and the slack of Hall's
    # condition (their room less the cards of those suits still to place).
    reach = [0] * 16
    slack = [0] * 16
    for subset in _SUBSETS:
        for u in range(4):
            if subset >> u & 1:
                reach[subset] |= takes[u]
        slack[subset] = sum(room[s] for s in slots if reach[subset] >> s & 1) - sum(
            left[u] for u in range(4) if subset >> u & 1
        )
    # A set of suits that every slot may take never closes a slot (its slack exceeds the cards
    # of any other suit still to place), so only the others are checked: none, without voids.
    everyone = 0
    for s in slots:
        everyone |= 1 << s
    checked = [subset for subset in _SUBSETS if reach[subset] != everyone]
    hands = [k.holds[s] for s in range(n)] + [0]
    rng.shuffle(free)
    # The most constrained cards first: those that fewer slots could hold.
    free.sort(key=lambda c: takes[c // 13].bit_count())
    for c in free:
        u = c // 13
        suit_bit = 1 << u
        # A slot is closed to this card if some tight set of suits without u needs its room.
        closed = 0
        for subset in checked:
            if slack[subset] == 0 and not subset & suit_bit:
                closed |= reach[subset]
        open_slots = takes[u] & ~closed
        choices = [s for s in slots if open_slots >> s & 1 and room[s] > 0]
        x = rng.randrange(sum(room[s] for s in choices))
        for s in choices:
            x -= room[s]
            if x < 0:
                break
        hands[s] |= 1 << c
        room[s] -= 1
        for subset in checked:
            slack[subset] += (subset >> u & 1) - (reach[subset] >> s & 1)
    if k.excluded:
        _keep_exclusions(hands, k, voids, rng)
    for s in range(n):
        if s != k.seat:
            st.hands[s] = hands[s]
    st.kitty = hands[outside] if k.kitty_live else 0
    return st


def _keep_exclusions(hands: list[int], k: Knowledge, voids: list[int], rng: random.Random) -> None:
    """Move each card out of a hand said not to hold it (``k.excluded``), by a swap with a card
    of another hand that may take it and that this hand may take in turn (voids, exclusions
    and passed cards kept), chosen at random; a card no swap can move stays where it is.

    A swap never puts a card where it is excluded, so one pass over the hands is enough.
    """
    n = len(k.sizes)
    for s in range(n):
        if s == k.seat:
            continue
        may_take = ~k.excluded[s]
        for u in range(4):
            if voids[s] >> u & 1:
                may_take &= ~SUIT_MASK[u]
        for c in bits(hands[s] & k.excluded[s] & ~k.holds[s]):
            bit = 1 << c
            u = c // 13
            pairs: list[tuple[int, int]] = []
            total = 0
            for t in range(n):
                if t == s or t == k.seat or voids[t] >> u & 1 or k.excluded[t] & bit:
                    continue
                give = hands[t] & ~k.holds[t] & may_take
                if give:
                    pairs.append((t, give))
                    total += give.bit_count()
            if not total:
                continue
            x = rng.randrange(total)
            i = 0
            while x >= pairs[i][1].bit_count():
                x -= pairs[i][1].bit_count()
                i += 1
            t, d = pairs[i]
            for _ in range(x):
                d &= d - 1
            d &= -d
            hands[s] ^= bit | d
            hands[t] ^= bit | d
