"""A compact, mutable model of one hand in play, for the bots' look-ahead.

``domain`` is the referee: immutable and event-sourced. Monte Carlo play-outs need thousands of
plays per decision, so they play on a mutable model instead, in the domain's own representation
(card masks, the rules compiled by ``domain.tablerules``) and with its own legal-play rule
(``domain.legal.legal_mask``); tests/bots/test_simulation.py checks the model against the domain
on random games under random rule options. The real game always takes its legal cards from the
seat's view, never from here.
"""

from __future__ import annotations

from domain.legal import legal_mask as rule_legal_mask
from domain.tablerules import TableRules, leading_play, resolve_trick, table_rules, takes_kitty

from .cardbits import bits

__all__ = ["PlayState", "TableRules", "legal_mask", "outcome", "play", "table_rules"]


class PlayState:
    """One hand from the current trick on. Mutable: a play-out copies it first.

    ``hands`` holds a mask per seat; in a seat's own model of the game (built from its view)
    the other seats' masks are 0 until a sampled deal fills them. ``kitty`` is the undealt
    kitty while nobody has taken it (0 when unknown). Whoever decides for seat ``s`` reads
    ``hands[s]`` and the public fields, nothing else.
    """

    __slots__ = (
        "rules",
        "hands",
        "kitty",
        "kitty_taken",
        "trick",
        "turn",
        "played",
        "tricks_done",
        "hearts_broken",
        "points",
        "penalty",
        "tricks_won",
        "voids",
        "bonus_taker",
        "scores",
    )

    def __init__(
        self,
        rules: TableRules,
        hands: list[int],
        *,
        kitty: int = 0,
        kitty_taken: bool = False,
        trick: list[tuple[int, int]] | None = None,
        turn: int = 0,
        played: int = 0,
        tricks_done: int = 0,
        hearts_broken: bool = False,
        points: list[int] | None = None,
        penalty: list[int] | None = None,
        tricks_won: list[int] | None = None,
        voids: list[int] | None = None,
        bonus_taker: int = -1,
        scores: tuple[int, ...] | None = None,
    ) -> None:
        n = rules.players
        self.rules = rules
        self.hands = hands
        self.kitty = kitty
        self.kitty_taken = kitty_taken
        self.trick = trick if trick is not None else []
        self.turn = turn
        self.played = played
        self.tricks_done = tricks_done
        self.hearts_broken = hearts_broken
        self.points = points if points is not None else [0] * n  # all card points, kitty too
        self.penalty = penalty if penalty is not None else [0] * n  # penalty cards only
        self.tricks_won = tricks_won if tricks_won is not None else [0] * n
        self.voids = voids if voids is not None else [0] * n  # bit s: known void in suit s
        self.bonus_taker = bonus_taker
        self.scores = scores if scores is not None else (0,) * n

    def copy(self) -> PlayState:
        new = PlayState.__new__(PlayState)
        new.rules = self.rules
        new.hands = self.hands[:]
        new.kitty = self.kitty
        new.kitty_taken = self.kitty_taken
        new.trick = self.trick[:]
        new.turn = self.turn
        new.played = self.played
        new.tricks_done = self.tricks_done
        new.hearts_broken = self.hearts_broken
        new.points = self.points[:]
        new.penalty = self.penalty[:]
        new.tricks_won = self.tricks_won[:]
        new.voids = self.voids[:]
        new.bonus_taker = self.bonus_taker
        new.scores = self.scores
        return new

    @property
    def over(self) -> bool:
        return not self.trick and not any(self.hands)

    def trick_winner(self) -> tuple[int, int]:
        """(seat, card) winning the current trick so far; the trick must not be empty."""
        return leading_play(self.trick)


def legal_mask(st: PlayState, seat: int) -> int:
    """The cards ``seat`` may play now: the domain's own ``legal_mask``, on this model."""
    trick = st.trick
    first = st.tricks_done == 0
    if not trick:
        return rule_legal_mask(st.rules, st.hands[seat], -1, first, st.hearts_broken, 0)
    cards = 0
    if st.rules.must_play_queen_when_safe:
        for _, card in trick:
            cards |= 1 << card
    return rule_legal_mask(
        st.rules, st.hands[seat], trick[0][1] // 13, first, st.hearts_broken, cards
    )


def play(st: PlayState, seat: int, card: int) -> None:
    """Play ``card`` for ``seat`` (its turn; the card legal), completing the trick if full."""
    r = st.rules
    bit = 1 << card
    st.hands[seat] &= ~bit
    st.played |= bit
    trick = st.trick
    if trick:
        led = trick[0][1] // 13
        if card // 13 != led:
            st.voids[seat] |= 1 << led
    if r.breaks_hearts & bit:  # breaks_hearts (domain/tablerules.py), inlined
        st.hearts_broken = True
    trick.append((seat, card))
    if len(trick) < r.players:
        st.turn = (seat + 1) % r.players
        return
    # The trick rules of the domain (domain/tablerules.py), as the decider resolves a trick.
    winner, total, penalty, cards = resolve_trick(r, trick)
    # takes_kitty, asked only when the rules have a kitty (most play-outs have none).
    if r.kitty and takes_kitty(r, st.kitty_taken, cards, st.tricks_done + 1 == r.hand_size):
        cards |= st.kitty
        total += sum(r.points[c] for c in bits(st.kitty))
        penalty += sum(r.penalty_points[c] for c in bits(st.kitty))
        st.kitty = 0
        st.kitty_taken = True
    if cards & r.bonus_bit:
        st.bonus_taker = winner
    st.points[winner] += total
    st.penalty[winner] += penalty
    st.tricks_won[winner] += 1
    st.tricks_done += 1
    st.trick = []
    st.turn = winner


def outcome(st: PlayState) -> tuple[list[int], int]:
    """What the finished hand adds to each seat's score, and the shooter (-1 if none).

    A shot counts as points added to everyone else: under "subtract from the shooter" the gap
    between the shooter and the others is the same, and that gap is what a bot weighs.
    """
    r = st.rules
    n = r.players
    shooter = -1
    amount = 0
    if r.shoot_the_sun:
        total = sum(st.tricks_won)
        for s in range(n):
            if st.tricks_won[s] == total:
                shooter, amount = s, r.sun_points
    if shooter < 0:
        for s in range(n):
            if st.penalty[s] == r.moon_points:
                shooter, amount = s, r.moon_points
    if shooter < 0:
        return st.points[:], -1
    bonus = r.points[r.bonus] if r.bonus >= 0 else 0
    changes = [
        (0 if s == shooter else amount) + (bonus if s == st.bonus_taker else 0) for s in range(n)
    ]
    return changes, shooter
