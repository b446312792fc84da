"""What the other seats' plays say about their hands, read as the heuristic would have played.

A seat that plays like ``bots.heuristic`` gives its hand away: out of the suit led it throws its
most dangerous card (so whoever throws anything but the queen of spades has no queen of spades,
and no card it ranks more dangerous than the one thrown); following, it ducks with the highest
card under the trick's winner (so it holds none between the two), and it plays over the winner
only with nothing under it. The other seats are the heuristic, or montecarlo (which plays the
heuristic's card unless another is clearly better), at this project's tables; other players do
much the same, less strictly. These inferences are cards a seat cannot hold (as the voids are
suits it cannot hold), and the sampler keeps to them where it can (``bots.sampling``).

Only what the heuristic's choice says in its normal mood is read: not a seat that may be
shooting the moon (every penalty point so far is its own) or blocking a shot, not the first
trick, and not under rule options that change which card it would choose or may choose (a
bonus card, the queen of spades forced when safe).
"""

from __future__ import annotations

from domain.rules import RuleOptions
from domain.tablerules import leading_play, resolve_trick
from domain.views import SeatView

from .cardbits import QS, QS_BIT, SPADES, SUIT_MASK, above, below
from .heuristic import _discard_danger
from .simulation import TableRules, table_rules


def excluded_cards(view: SeatView, rules: RuleOptions) -> tuple[int, ...]:
    """Per seat, the unplayed cards its plays so far say it does not hold (0 for this seat)."""
    tr = table_rules(rules)
    n = tr.players
    me = view.seat
    excluded = [0] * n
    if tr.bonus >= 0 or tr.must_play_queen_when_safe or tr.kitty:
        return tuple(excluded)
    pub = view.public
    tricks = [t.plays for t in pub.tricks] + [pub.current_trick]
    penalty = [0] * n
    played = 0
    for number, plays in enumerate(tricks):
        trick: list[tuple[int, int]] = []
        for seat, card in plays:
            c = card.index
            if number > 0 and seat != me and trick and _normal_mood(seat, penalty, number, tr):
                excluded[seat] |= _inferred(trick, c, played, tr)
            trick.append((seat, c))
            played |= 1 << c
        if len(trick) == n:
            winner, _, taken, _ = resolve_trick(tr, trick)
            penalty[winner] += taken
    unplayed = tr.in_play & ~played
    return tuple(0 if s == me else excluded[s] & unplayed for s in range(n))


def _normal_mood(seat: int, penalty: list[int], tricks_done: int, tr: TableRules) -> bool:
    """Whether the heuristic in ``seat`` surely plays in its normal mood (not shooting, not
    blocking) at this point of the hand, from the points taken so far."""
    takers = [s for s, p in enumerate(penalty) if p > 0]
    if not takers:
        return tricks_done > 1
    if len(takers) > 1:
        return True
    taker = takers[0]
    if taker == seat:
        return False
    return not (penalty[taker] * 2 > tr.moon_points and tricks_done * 2 >= tr.hand_size)


def _inferred(trick: list[tuple[int, int]], c: int, played: int, tr: TableRules) -> int:
    """The cards the seat that played ``c`` on ``trick`` cannot have held, had it played as the
    heuristic does in its normal mood."""
    led = trick[0][1] // 13
    suit_left = SUIT_MASK[led] & ~played
    out = 0
    queen_live = not played & QS_BIT
    if c // 13 != led:
        # Out of the suit: it threw its most dangerous card.
        if c != QS and queen_live:
            out |= QS_BIT
        if c == QS:
            return out
        # At most this dangerous to it (an empty hand counts every suit short); any card
        # surely more dangerous, it would have thrown instead.
        worst = _discard_danger(c, 0, tr, queen_live)
        for y in range(52):
            bit = 1 << y
            if (
                bit & tr.in_play
                and not bit & played
                and y != c
                and _discard_danger(y, SUIT_MASK[y // 13], tr, queen_live) > worst
            ):
                out |= bit
        return out
    _, w = leading_play(trick)
    if led == SPADES and w > QS and c != QS and queen_live:
        out |= QS_BIT  # under the ace or king it would have played the queen
    if c == QS and c > w:
        return out | (suit_left & ~QS_BIT)  # the queen over the winner: it had no other spade
    if c < w:
        if c != QS:
            out |= suit_left & below(w) & above(c)  # it ducked with its highest card under w
        return out
    last = len(trick) == tr.players - 1
    if not last or any(tr.penalty_mask >> x & 1 for _, x in trick):
        out |= suit_left & below(w)  # over the winner: it had nothing under it
    return out
