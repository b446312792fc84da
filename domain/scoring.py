"""Scoring: points, shooting the moon (and the sun), the end of the game."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .cards import Card
from .rules import ExactLimitReset, MoonScoring, RuleOptions, TieBreak
from .tablerules import table_rules

# Who wins a trick is the trick rule of domain/tablerules.py (resolve_trick).
# Every hand's scoring reads each taken card's points twice: from the options compiled once
# (domain/tablerules.py: ``points`` is ``card_points`` per card, ``penalty_mask`` the cards
# ``is_penalty_card`` accepts) rather than two method calls per card.


def points_of(rules: RuleOptions, cards: Iterable[Card]) -> int:
    points = table_rules(rules).points
    return sum([points[c.index] for c in cards])


def penalty_points_of(rules: RuleOptions, cards: Iterable[Card]) -> int:
    """Points of the penalty cards only (the Omnibus bonus left out)."""
    r = table_rules(rules)
    points, penalty = r.points, r.penalty_mask
    return sum([points[c.index] for c in cards if c.bit & penalty])


@dataclass(frozen=True, slots=True)
class Shot:
    """A seat took every penalty card (the moon) or every trick (the sun)."""

    shooter: int
    kind: str  # "moon" or "sun"
    points: int  # rules.moon_points for the moon (26), rules.sun_points for the sun (52)


def find_shot(
    rules: RuleOptions, taken: Sequence[Sequence[Card]], tricks_won: Sequence[int]
) -> Shot | None:
    total_tricks = sum(tricks_won)
    r = table_rules(rules)
    moon_points = r.moon_points  # rules.moon_points, compiled once
    if r.shoot_the_sun:
        for seat, won in enumerate(tricks_won):
            if won == total_tricks:
                return Shot(seat, "sun", r.sun_points)
    for seat, cards in enumerate(taken):
        if penalty_points_of(rules, cards) == moon_points:
            return Shot(seat, "moon", moon_points)
    return None


@dataclass(frozen=True, slots=True)
class HandScore:
    points_taken: tuple[int, ...]
    shot: Shot | None
    moon_scoring: MoonScoring | None
    score_changes: tuple[int, ...]
    exact_limit_resets: tuple[int, ...]
    totals: tuple[int, ...]
    game_over: bool
    winners: tuple[int, ...]


def score_hand(
    rules: RuleOptions,
    taken: Sequence[Sequence[Card]],
    tricks_won: Sequence[int],
    scores: Sequence[int],
    choice: MoonScoring | None = None,
    last_hand: bool = False,
) -> HandScore:
    """Score a played hand. ``choice`` is the shooter's, when the rules leave it to them;
    ``last_hand``: the hand limit's last hand, after which the game is over whatever the
    scores (the lowest wins, ties shared)."""
    points = tuple(points_of(rules, cards) for cards in taken)
    shot = find_shot(rules, taken, tricks_won)
    if shot is None:
        return _settle(rules, scores, points, points, None, None, last_hand)
    bonus = tuple(points_of(rules, (c for c in cards if c is rules.bonus_card)) for cards in taken)
    method = choice if rules.moon_scoring is MoonScoring.SHOOTERS_CHOICE else rules.moon_scoring
    if method is MoonScoring.ADD_UNLESS_SHOOTER_LOSES:
        added = _settle(
            rules,
            scores,
            points,
            _shot_changes(shot, MoonScoring.ADD_TO_OTHERS, bonus),
            shot,
            method,
            last_hand,
        )
        # The seed: "added unless this would cause one of them [the others] to win", so a win
        # the shooter would only share with another player counts as the shooter losing.
        if not added.game_over or added.winners == (shot.shooter,):
            return added
        changes = _shot_changes(shot, MoonScoring.SUBTRACT_FROM_SHOOTER, bonus)
        return _settle(rules, scores, points, changes, shot, method, last_hand)
    if method not in (MoonScoring.ADD_TO_OTHERS, MoonScoring.SUBTRACT_FROM_SHOOTER):
        raise ValueError("the shooter has not chosen how the moon scores")
    changes = _shot_changes(shot, method, bonus)
    return _settle(rules, scores, points, changes, shot, method, last_hand)


def needs_shooters_choice(
    rules: RuleOptions, taken: Sequence[Sequence[Card]], tricks_won: Sequence[int]
) -> int | None:
    """The seat that must choose how its moon scores before the hand can be scored, if any."""
    if rules.moon_scoring is not MoonScoring.SHOOTERS_CHOICE:
        return None
    shot = find_shot(rules, taken, tricks_won)
    return shot.shooter if shot else None


def _shot_changes(shot: Shot, method: MoonScoring, bonus: Sequence[int]) -> tuple[int, ...]:
    """The shot's points, to everyone else or off the shooter; the bonus card counts as usual."""
    changes = []
    for seat, b in enumerate(bonus):
        if method is MoonScoring.SUBTRACT_FROM_SHOOTER:
            base = -shot.points if seat == shot.shooter else 0
        else:
            base = 0 if seat == shot.shooter else shot.points
        changes.append(base + b)
    return tuple(changes)


def _settle(
    rules: RuleOptions,
    scores: Sequence[int],
    points: tuple[int, ...],
    changes: tuple[int, ...],
    shot: Shot | None,
    method: MoonScoring | None,
    last_hand: bool = False,
) -> HandScore:
    totals = [s + c for s, c in zip(scores, changes, strict=True)]
    resets = tuple(i for i, t in enumerate(totals) if t == rules.score_limit and _resets(rules))
    for i in resets:
        totals[i] = rules.score_limit // 2 if rules.exact_limit_reset is ExactLimitReset.HALF else 0
    final = tuple(totals)
    over, winners = game_result(rules, final, last_hand)
    return HandScore(points, shot, method, changes, resets, final, over, winners)


def _resets(rules: RuleOptions) -> bool:
    return rules.exact_limit_reset is not ExactLimitReset.NONE


def game_result(
    rules: RuleOptions, totals: Sequence[int], last_hand: bool = False
) -> tuple[bool, tuple[int, ...]]:
    """Whether the game is over after a hand with these totals, and who wins (lowest score).
    After the hand limit's last hand it is, ties shared even with ``play_on``."""
    low = min(totals)
    winners = tuple(i for i, t in enumerate(totals) if t == low)
    if last_hand:
        return True, winners
    if max(totals) < rules.score_limit:
        return False, winners
    if len(winners) > 1 and rules.tie_break is TieBreak.PLAY_ON:
        return False, winners
    return True, winners
