"""The pass: where each seat's cards go once every seat has passed."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import Card, sort_cards
from .rules import PassDirection
from .shuffle import shuffled

Passes = Sequence[tuple[Card, ...]]  # per seat; () for a seat that declined


def pass_target(direction: PassDirection, seat: int, players: int) -> int:
    """The seat that ``seat`` passes to (left = clockwise = seat + 1)."""
    if direction is PassDirection.LEFT:
        return (seat + 1) % players
    if direction is PassDirection.RIGHT:
        return (seat - 1) % players
    if direction is PassDirection.ACROSS:
        return (seat + players // 2) % players
    raise ValueError(f"{direction.value} has no single target")


def exchange(
    direction: PassDirection,
    passes: Passes,
    kitty: tuple[Card, ...],
    dealer: int,
    mix_seed: str,
    mix_kitty: bool,
) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    """What each seat receives, and the kitty after the pass."""
    if direction is PassDirection.SCATTER:
        return _scatter(passes), kitty
    if direction is PassDirection.MIX:
        return _mix(passes, kitty, dealer, mix_seed, mix_kitty)
    return _directional(direction, passes), kitty


def _directional(direction: PassDirection, passes: Passes) -> tuple[tuple[Card, ...], ...]:
    """Each pass goes to the target; a seat that declined passes on what it gets, unseen.

    So cards travel on past every seat that declined, and come home if every other seat did.
    """
    players = len(passes)
    received: list[list[Card]] = [[] for _ in range(players)]
    for seat, cards in enumerate(passes):
        if not cards:
            continue
        target = pass_target(direction, seat, players)
        while not passes[target] and target != seat:
            target = pass_target(direction, target, players)
        received[target].extend(cards)
    return tuple(sort_cards(r) for r in received)


def _scatter(passes: Passes) -> tuple[tuple[Card, ...], ...]:
    """One card to every other seat: the k-th card passed goes to seat + k (clockwise)."""
    players = len(passes)
    received: list[list[Card]] = [[] for _ in range(players)]
    for seat, cards in enumerate(passes):
        for k, card in enumerate(cards, start=1):
            received[(seat + k) % players].append(card)
    return tuple(sort_cards(r) for r in received)


def _mix(
    passes: Passes, kitty: tuple[Card, ...], dealer: int, seed: str, mix_kitty: bool
) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    """The discards (and the kitty, if there is one) shuffled and dealt back.

    The pile is the passed cards in deck order, then the kitty; it is shuffled with the seed
    ``<hand seed>/mix`` and dealt one at a time clockwise from the dealer's left to each seat
    that passed, as many as it passed; what is left is the new kitty.
    """
    players = len(passes)
    pile = sort_cards(c for cards in passes for c in cards) + (kitty if mix_kitty else ())
    deck = shuffled(pile, seed)
    wants = [len(cards) for cards in passes]
    received: list[list[Card]] = [[] for _ in range(players)]
    seat = dealer
    i = 0
    while any(len(received[s]) < wants[s] for s in range(players)):
        seat = (seat + 1) % players
        if len(received[seat]) < wants[seat]:
            received[seat].append(deck[i])
            i += 1
    new_kitty = tuple(deck[i:]) if mix_kitty else kitty
    return tuple(sort_cards(r) for r in received), new_kitty
