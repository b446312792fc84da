"""What one seat knows about the hand in play, read from its ``SeatView`` and nothing else.

A ``Knowledge`` holds the seat's model of the hand (a ``PlayState`` whose other hands are empty)
and the constraints on where the cards it cannot see may be: how many each seat holds, the
suits a seat has shown it is out of (by not following), the cards this seat passed and to whom,
and how many unseen cards lie outside every hand (the kitty, or a kitty already taken).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.cards import Card
from domain.passing import pass_target
from domain.rules import PassDirection, RuleOptions
from domain.views import SeatView

from .cardbits import mask_of
from .simulation import PlayState, table_rules


@dataclass(frozen=True, slots=True)
class Knowledge:
    seat: int
    state: PlayState  # hands[s] == 0 for every other seat: a template, copy before use
    unseen: int  # cards in play this seat cannot see: other hands, the kitty, a taken kitty
    sizes: tuple[int, ...]  # cards each seat holds now
    holds: tuple[int, ...]  # per seat: cards it must hold (this seat's passes, not yet played)
    outside: int  # unseen cards in no hand
    kitty_live: bool  # the outside cards are the kitty, still to be taken
    # Per seat: cards its plays say it does not hold (bots.inference), kept to where they can
    # be; empty: none inferred.
    excluded: tuple[int, ...] = ()


def knowledge_of(view: SeatView, rules: RuleOptions) -> Knowledge:
    tr = table_rules(rules)
    n = tr.players
    me = view.seat
    pub = view.public
    hand = mask_of(view.hand)

    played = 0
    points = [0] * n
    penalty = [0] * n
    tricks_won = [0] * n
    voids = [0] * n
    bonus_taker = -1
    kitty_taken = False
    for t in pub.tricks:
        cards = 0
        for _, card in t.plays:
            cards |= 1 << card.index
        played |= cards
        winner = t.winner if t.winner is not None else t.plays[0][0]
        card_points = sum(tr.points[c.index] for _, c in t.plays)
        trick_penalty = sum(
            tr.points[c.index] for _, c in t.plays if (1 << c.index) & tr.penalty_mask
        )
        # The trick's points include a kitty taken with it; its cards stay unseen.
        kitty_points = (t.points or 0) - card_points
        points[winner] += t.points or 0
        penalty[winner] += trick_penalty + max(kitty_points, 0)
        tricks_won[winner] += 1
        if tr.bonus >= 0 and cards >> tr.bonus & 1:
            bonus_taker = winner
        if tr.kitty and not kitty_taken and cards & tr.penalty_mask:
            kitty_taken = True
        _note_voids(t.plays, voids)
    trick = [(s, c.index) for s, c in pub.current_trick]
    for _, c in trick:
        played |= 1 << c
    _note_voids(pub.current_trick, voids)

    sizes = tuple(s.hand_size for s in pub.seats)
    unseen = tr.in_play & ~played & ~hand
    outside = unseen.bit_count() - sum(sizes[s] for s in range(n) if s != me)
    holds = _passed_cards_held(view, rules, unseen)

    hands = [0] * n
    hands[me] = hand
    state = PlayState(
        tr,
        hands,
        kitty_taken=kitty_taken,
        trick=trick,
        turn=pub.turn if pub.turn is not None else me,
        played=played,
        tricks_done=len(pub.tricks),
        hearts_broken=pub.hearts_broken,
        points=points,
        penalty=penalty,
        tricks_won=tricks_won,
        voids=voids,
        bonus_taker=bonus_taker,
        scores=tuple(pub.scores),
    )
    return Knowledge(
        seat=me,
        state=state,
        unseen=unseen,
        sizes=sizes,
        holds=holds,
        outside=max(outside, 0),
        kitty_live=tr.kitty and not kitty_taken,
    )


def _note_voids(plays: Sequence[tuple[int, Card]], voids: list[int]) -> None:
    if not plays:
        return
    led = plays[0][1].index // 13
    for seat, card in plays[1:]:
        if card.index // 13 != led:
            voids[seat] |= 1 << led


def _passed_cards_held(view: SeatView, rules: RuleOptions, unseen: int) -> tuple[int, ...]:
    """Where this seat's passed cards went, where that is certain, less those since played.

    With optional passing a card travels on past a seat that declined, and the mix shuffles
    every pass together, so neither says where a card is.
    """
    n = rules.players
    holds = [0] * n
    passed = view.passed_cards
    direction = view.public.pass_direction
    if not passed or direction is None or rules.optional_passing or not view.received_cards:
        return tuple(holds)
    d = PassDirection(direction)
    if d is PassDirection.SCATTER:
        for k, card in enumerate(passed, start=1):
            holds[(view.seat + k) % n] |= 1 << card.index
    elif d in (PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS):
        holds[pass_target(d, view.seat, n)] = mask_of(passed)
    return tuple(h & unseen for h in holds)
