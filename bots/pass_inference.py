"""What the cards passed to this seat say about the hand of the seat that passed them.

A seat that passes like ``bots.heuristic`` (the server's ``heuristic`` and ``montecarlo`` bots
do: ``montecarlo`` weighs its pass only with ``pass_deals``) passes its most dangerous cards: a
seat that passed three middling clubs did not keep an unguarded queen of spades. A sampled deal
that gives the passer a hand from which the heuristic would have passed other cards is less
likely than one that does not; ``PassClue.agrees`` tells which.

The passer's hand before the pass is its cards now, the ones it has played and the ones it
passed, less the ones it received. Those it received are known when they came from this seat
(a pass across at four); otherwise (left, right) they are some of its cards now, unknown: the
passer's most dangerous cards are taken for them, since had it held them before it would have
passed them. So a deal disagrees only when even that reading cannot explain the pass.

Only directional passes without a kitty, optional passing or a bonus card are read.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.passing import pass_target
from domain.rules import PassDirection, RuleOptions
from domain.views import SeatView

from .cardbits import bits, mask_of
from .heuristic import _pass_danger, pass_cards
from .simulation import TableRules, table_rules


@dataclass(frozen=True, slots=True)
class PassClue:
    passer: int  # the seat that passed to this one
    passed: int  # the cards it passed to this seat
    received: int  # the cards it received, where known (this seat's pass); else 0
    unknown: int  # how many cards it received from a seat other than this one
    played: int  # the cards it has played this hand so far
    rules: TableRules

    def agrees(self, hand: int) -> bool:
        """Whether the heuristic, holding the passer's cards of a deal in which it holds
        ``hand`` now, would have passed exactly the cards it passed."""
        before = (hand | self.played) & ~self.received | self.passed
        if self.unknown:
            kept = before & ~self.passed
            ranked = sorted(bits(kept), key=lambda c: (-_pass_danger(c, before, self.rules), c))
            for c in ranked[: self.unknown]:
                before &= ~(1 << c)
        count = self.passed.bit_count()
        picks = 0
        for c in pass_cards(before, self.rules, count):
            picks |= 1 << c
        return picks == self.passed


def pass_clue(view: SeatView, rules: RuleOptions) -> PassClue | None:
    """What the pass this seat received says, or None where it says nothing this reads."""
    direction = view.public.pass_direction
    tr = table_rules(rules)
    if (
        not view.received_cards
        or not view.passed_cards
        or direction not in ("left", "right", "across")
        or tr.kitty
        or tr.bonus >= 0
        or rules.optional_passing
    ):
        return None
    d = PassDirection(direction)
    n = tr.players
    me = view.seat
    passer = next(s for s in range(n) if pass_target(d, s, n) == me)
    source = next(s for s in range(n) if pass_target(d, s, n) == passer)
    played = 0
    pub = view.public
    for trick in [t.plays for t in pub.tricks] + [pub.current_trick]:
        for seat, card in trick:
            if seat == passer:
                played |= 1 << card.index
    passed = mask_of(view.received_cards)
    mine = mask_of(view.passed_cards)
    return PassClue(
        passer=passer,
        passed=passed,
        received=mine if source == me else 0,
        unknown=0 if source == me else mine.bit_count(),
        played=played,
        rules=tr,
    )
