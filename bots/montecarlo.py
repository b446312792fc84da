"""``montecarlo``: sample the unseen cards, play every candidate out, keep the best on average.

For each decision it deals the cards it cannot see in ways that agree with what its seat knows
(``bots.sampling``), plays each distinct legal card in each sampled deal, finishes the hand with
every seat playing ``heuristic`` on the compact simulation (``bots.simulation``), and scores the
outcome as its own points minus the others' average (so a moon counts for what it does to the
standings). The same deals serve every candidate, so differences between candidates are not
drowned in deal-to-deal noise; the heuristic's own choice stands unless another card does better
by a margin.

The budget is work by default, so a seed always gives the same choice: at most ``plays``
simulated plays per decision, split over the candidates, within ``min_samples``..``max_samples``
deals. Or it is time: ``ms`` milliseconds per decision, read on a clock the caller hands the bot
(this module never reads the time itself: bots are pure), so that strategies can be compared at
equal time; then deals go on until the time is spent (``min_samples`` at least, ``max_samples``
at most if given) and a seed fixes the choice only with the same clock readings.

Two more levers, measured in issue 23 (bench/README.md, "Bot strength") and off by default: the
deals are sampled as the others' plays say their hands lie, read as the heuristic would have
played (``infer``, ``bots.inference``); and the pass is weighed (``pass_deals``): the heuristic's
pass against the other passes of its most dangerous cards, each played out as a whole hand over
sampled deals (``best_pass``). ``montecarlo:plays=7000:pass_deals=40:infer=1`` is the strongest
against heuristic players (-0.55 +- 0.35 points a hand), at 2.5x the CPU a decision; the
inferences are only true of heuristic players (about 0.3 points worse against montecarlo ones,
over too few deals to be sure), and a server's bots mostly play people, so the default stays
as it was (in the ISMCTS arena: +2.05 points a hand for the default, +2.60 for that spec).
"""

from __future__ import annotations

import dataclasses
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

from domain.cards import Card
from domain.passing import pass_target
from domain.rules import MoonScoring, PassDirection, RuleOptions
from domain.views import SeatView

from .base import best_moon_choice, register
from .cardbits import QS, SUIT_MASK, bits, card_of, mask_of
from .heuristic import _pass_danger, choose_card, pass_cards, stray_card
from .inference import excluded_cards
from .knowledge import Knowledge, knowledge_of
from .pass_inference import PassClue, pass_clue
from .sampling import sample_state
from .simulation import PlayState, TableRules, legal_mask, outcome, play, table_rules

Clock = Callable[[], float]  # seconds, e.g. time.process_time: only differences are read

# Deals per decision at most: 60 under a play budget, none but the time under a time budget.
PLAY_BUDGET_MAX_SAMPLES = 60


@dataclass(frozen=True, slots=True)
class Budget:
    plays: int = 3500  # simulated plays per decision, over every sample and candidate
    min_samples: int = 6
    max_samples: int | None = None  # None: PLAY_BUDGET_MAX_SAMPLES, or no cap with ``ms``
    # Milliseconds per decision on the bot's clock: sampling stops once they are spent (after
    # ``min_samples`` deals) and ``plays`` no longer counts. None: the budget is ``plays``.
    ms: float | None = None
    margin: float = 0.25  # points per hand another card must beat the heuristic's choice by
    # Stop sampling once no card is within this many standard errors of beating the heuristic's
    # card by the margin (see _settled); 0 or less: always play ``samples`` deals.
    settle_z: float = 1.5
    # What a play-out is worth: own points less this times the others' average. 1: the
    # standings (a moon shot by me counts for what it does to the others); 0: own points only.
    others_weight: float = 1.0
    # The pass: 0, the heuristic's; else deals at most to weigh the heuristic's pass against
    # the other passes of its most dangerous cards (whole hands played out, see best_pass).
    pass_deals: int = 0
    pass_margin: float = 0.5  # points per hand another pass must beat the heuristic's by
    # 1: deal the unseen cards as the others' plays say they lie, read as the heuristic's
    # (bots.inference); 0: only the voids and the passed cards.
    infer: int = 0
    # Weigh each sampled deal by how likely the others' plays so far are in it, read as the
    # heuristic's (issue 41): every play of another seat that differs from the heuristic's
    # choice in that deal multiplies the deal's weight by this (0 < weigh < 1); 0: every
    # deal counts alike. A soft ``infer``: a deal the plays contradict counts less, not never.
    weigh: float = 0.0
    # The others in the play-outs go for the moon holding up to this many more cards that could
    # lose a trick than the heuristic would (issue 41): players that search, as the server's
    # montecarlo does, shoot far more often than the heuristic. 0: they play the heuristic.
    bold: int = 0
    # Weigh each sampled deal by what the cards passed to us say (issue 41, bots.pass_inference):
    # a deal in which the seat that passed them, passing as the heuristic, would have passed
    # others counts this much (0 < pass_weigh < 1); 0: every deal counts alike.
    pass_weigh: float = 0.0
    # The others in the play-outs leave the heuristic's card this often (0 <= stray < 1) for
    # the card a searching player most often plays instead (``heuristic.stray_card``; issue
    # 41): a search that does not assume the others play the heuristic. 0: they always do.
    stray: float = 0.0
    # A strayed lead: the heuristic's next cheapest (0), or its k-th next with odds in
    # proportion to this to the k (0 < stray_spread <= 1).
    stray_spread: float = 0.0

    def __post_init__(self) -> None:
        if self.ms is not None and not self.ms > 0:
            raise ValueError(f"ms must be positive, not {self.ms}")
        if self.bold < 0:
            raise ValueError(f"bold must be 0 or more, not {self.bold}")
        if self.plays < 1 or self.min_samples < 2:
            raise ValueError("plays must be at least 1 and min_samples at least 2")
        if self.max_samples is not None and self.max_samples < self.min_samples:
            raise ValueError("max_samples must be at least min_samples")
        if not 0 <= self.weigh < 1:
            raise ValueError(f"weigh must be in [0, 1), not {self.weigh}")
        if not 0 <= self.stray < 1:
            raise ValueError(f"stray must be in [0, 1), not {self.stray}")
        if not 0 <= self.stray_spread <= 1:
            raise ValueError(f"stray_spread must be in [0, 1], not {self.stray_spread}")
        if not 0 <= self.pass_weigh < 1:
            raise ValueError(f"pass_weigh must be in [0, 1), not {self.pass_weigh}")


DEFAULT_BUDGET = Budget()


class MonteCarloBot:
    name = "montecarlo"

    def __init__(self, budget: Budget = DEFAULT_BUDGET, clock: Clock | None = None) -> None:
        if budget.ms is not None and clock is None:
            raise ValueError("a budget in milliseconds needs a clock")
        self.budget = budget
        self.clock = clock

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        picks = pass_cards(mask_of(view.legal_cards), table_rules(rules), view.cards_to_pass)
        if self.budget.pass_deals > 0:
            picks = best_pass(view, rules, picks, random.Random(seed), self.budget)
        return tuple(card_of(c) for c in picks)

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        if len(view.legal_cards) == 1:
            return view.legal_cards[0]
        k = knowledge_of(view, rules)
        if self.budget.infer:
            k = dataclasses.replace(k, excluded=excluded_cards(view, rules))
        legal = mask_of(view.legal_cards)
        history = plays_of(view) if self.budget.weigh > 0 else None
        clue = pass_clue(view, rules) if self.budget.pass_weigh > 0 else None
        rng = random.Random(seed)
        return card_of(best_card(k, legal, rng, self.budget, self.clock, history, clue))

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        return best_moon_choice(view, rules)


register("montecarlo")(MonteCarloBot)


def best_card(
    k: Knowledge,
    legal: int,
    rng: random.Random,
    budget: Budget,
    clock: Clock | None = None,
    history: list[tuple[int, int]] | None = None,
    clue: PassClue | None = None,
) -> int:
    """The card to play. ``clock`` is read only under a budget in milliseconds; ``history``
    (every play of the hand so far, in order) weighs the deals under ``budget.weigh``, ``clue``
    (what the pass received says) under ``budget.pass_weigh``."""
    me = k.seat
    default = choose_card(k.state, me, legal)
    candidates = distinct_cards(legal, k.state.hands[me], k.unseen, k.state.rules.bonus)
    if len(candidates) == 1:
        return default
    # The heuristic's card stands for its class of equivalent cards.
    candidates = [default if _same_class(c, default, candidates) else c for c in candidates]
    deadline = None
    if budget.ms is None:
        to_play = sum(k.sizes)
        samples = budget.plays // (len(candidates) * max(to_play, 1))
        cap = PLAY_BUDGET_MAX_SAMPLES if budget.max_samples is None else budget.max_samples
        samples = max(budget.min_samples, min(cap, samples))
    else:
        if clock is None:
            raise ValueError("a budget in milliseconds needs a clock")
        deadline = clock() + budget.ms / 1000
        samples = budget.max_samples if budget.max_samples is not None else sys.maxsize
    totals = [0.0] * len(candidates)
    d = candidates.index(default)
    # Per candidate, the sums of its value less the default's per deal, and of their squares:
    # what the early stop below reads.
    gaps = [0.0] * len(candidates)
    squares = [0.0] * len(candidates)
    weighed = budget.weigh > 0 and bool(history) and not k.state.rules.kitty
    weight_sum = 0.0
    for done in range(1, samples + 1):
        world = sample_state(k, rng)
        weight = likelihood(world, history or [], me, budget.weigh) if weighed else 1.0
        if clue is not None and not clue.agrees(world.hands[clue.passer]):
            weight *= budget.pass_weigh
        # Every candidate's play-out strays at the same odds: the deal's own draws.
        strays = rng.getrandbits(32) if budget.stray > 0 else 0
        values = [
            _value(
                _play_out(world.copy(), me, card, budget, strays),
                me,
                budget.others_weight,
            )
            for card in candidates
        ]
        _add_deal(values, values[d], totals, gaps, squares, weight)
        weight_sum += weight
        if (
            budget.settle_z > 0
            and done >= max(budget.min_samples, 2)
            and _settled(gaps, squares, done, budget)
        ):
            break
        if deadline is not None and done >= budget.min_samples and clock() >= deadline:
            break
    base = totals[d]
    best = min(range(len(candidates)), key=lambda j: totals[j])
    if totals[best] < base - budget.margin * weight_sum:
        return candidates[best]
    return default


def plays_of(view: SeatView) -> list[tuple[int, int]]:
    """Every play of the hand so far, in order: (seat, card)."""
    pub = view.public
    out = [(s, c.index) for t in pub.tricks for s, c in t.plays]
    return out + [(s, c.index) for s, c in pub.current_trick]


def likelihood(world: PlayState, history: list[tuple[int, int]], me: int, miss: float) -> float:
    """How likely the others' plays so far are in ``world`` (a sampled deal, now), read as the
    heuristic's: ``miss`` to the power of the plays where the heuristic, holding that seat's
    cards of this deal, would have played another card.

    The hand is replayed from its first play with every seat's cards of the deal (its cards now
    and the ones it played since), the heuristic asked at each of the others' plays. A deal
    that puts the queen of spades with a seat that threw a low club instead of it, say, counts
    ``miss`` times as much as one that does not; a seat that leaves the heuristic's card in every
    deal lowers every deal alike, so a player unlike the heuristic changes little.
    """
    if not history:
        return 1.0
    hands = list(world.hands)
    for seat, c in history:
        hands[seat] |= 1 << c
    st = PlayState(world.rules, hands, turn=history[0][0], scores=world.scores)
    weight = 1.0
    for seat, c in history:
        if seat != me and choose_card(st, seat, legal_mask(st, seat)) != c:
            weight *= miss
        play(st, seat, c)
    return weight


def _add_deal(
    values: list[float],
    base: float,
    totals: list[float],
    gaps: list[float],
    squares: list[float],
    weight: float = 1.0,
) -> None:
    """One sampled deal's values of the candidates added in: totals (each deal's value times its
    ``weight``), and the sums of each one's gap to ``base`` (the default candidate's value in
    that deal) and of its square, for the paired test of :func:`_settled` (unweighted: the stop
    asks whether the deals agree, the choice reads the weights)."""
    for j, v in enumerate(values):
        totals[j] += weight * v
        gap = v - base
        gaps[j] += gap
        squares[j] += gap * gap


def _settled(
    gaps: list[float], squares: list[float], done: int, budget: Budget, margin: float | None = None
) -> bool:
    """Whether more deals would hardly change the choice: the heuristic's card stands, since no
    other card is within ``settle_z`` standard errors of beating it by the margin (paired, deal
    by deal).

    Most decisions settle after ``min_samples`` deals (every card scores alike, or the
    heuristic's card is clearly best); the budget goes to the close ones.
    """
    margin = budget.margin if margin is None else margin
    for gap, square in zip(gaps, squares, strict=True):
        mean = gap / done
        squared_error = max(square / done - mean * mean, 0.0) / (done - 1)  # of the mean
        if mean - budget.settle_z * squared_error**0.5 <= -margin:
            return False
    return True


def distinct_cards(legal: int, hand: int, unseen: int, bonus: int) -> list[int]:
    """One card per class of legal cards that play alike.

    Two cards of a suit with no unseen card between them win and lose the same tricks; the
    queen of spades and the bonus card carry their own points, so each stays its own class.
    """
    out: list[int] = []
    prev = -1
    for c in bits(legal):
        if (
            prev >= 0
            and prev // 13 == c // 13
            and not unseen & SUIT_MASK[c // 13] & ((1 << c) - (2 << prev))
            and c not in (QS, bonus)
            and prev not in (QS, bonus)
            and not hand & ~legal & ((1 << c) - (2 << prev))
        ):
            prev = c
            continue
        out.append(c)
        prev = c
    return out


def _same_class(c: int, default: int, candidates: list[int]) -> bool:
    """Whether ``default`` falls in the class that ``c`` represents (classes run upward)."""
    if c == default:
        return True
    i = candidates.index(c)
    upper = candidates[i + 1] if i + 1 < len(candidates) else 52
    return c <= default < upper and default // 13 == c // 13


def _play_out(
    st: PlayState, me: int, card: int, budget: Budget = DEFAULT_BUDGET, seed: int = 0
) -> PlayState:
    """The hand finished from ``card``: every seat the heuristic, the others ``budget.bold``,
    and leaving its card for ``stray_card``'s at odds ``budget.stray`` (drawn from ``seed``)."""
    play(st, me, card)
    hands = st.hands
    bold, stray, spread = budget.bold, budget.stray, budget.stray_spread
    odds = random.Random(seed).random if stray > 0 else None
    while hands[st.turn]:
        seat = st.turn
        legal = legal_mask(st, seat)
        if seat == me:
            play(st, seat, choose_card(st, seat, legal))
            continue
        c = choose_card(st, seat, legal, bold)
        if odds is not None:
            draw = odds()
            if draw < stray:
                # Given that it strays, draw / stray is uniform in [0, 1): which card, too.
                alt = stray_card(st, seat, legal, c, bold, spread, draw / stray)
                if alt >= 0:
                    c = alt
        play(st, seat, c)
    return st


def _value(st: PlayState, me: int, others_weight: float = 1.0) -> float:
    changes, _ = outcome(st)
    n = len(changes)
    return changes[me] - others_weight * (sum(changes) - changes[me]) / (n - 1)


def best_pass(
    view: SeatView, rules: RuleOptions, default: list[int], rng: random.Random, budget: Budget
) -> list[int]:
    """The pass to make: the heuristic's (``default``) unless another pass of its most dangerous
    cards does better by ``pass_margin`` over sampled deals, each hand played out whole.

    A deal gives the other seats the cards this seat cannot see at random; they pass as the
    heuristic would; every candidate pass is played out on the same deals. Only directional
    passes without a kitty, with every seat holding a full hand, are weighed; otherwise (and
    for the one-card-choice cases) the heuristic's pass stands.
    """
    tr = table_rules(rules)
    n = tr.players
    count = view.cards_to_pass
    direction = view.public.pass_direction
    if (
        count <= 0
        or tr.kitty
        or rules.optional_passing
        or direction not in ("left", "right", "across")
        or view.public.dealer is None
    ):
        return default
    hand = mask_of(view.hand)
    if hand.bit_count() != tr.hand_size or len(view.legal_cards) != tr.hand_size:
        return default
    me = view.seat
    candidates = pass_candidates(hand, tr, count, default)
    if len(candidates) == 1:
        return default
    unseen = list(bits(tr.in_play & ~hand))
    if len(unseen) != tr.hand_size * (n - 1):
        return default
    others = [s for s in range(n) if s != me]
    targets = [pass_target(PassDirection(direction), s, n) for s in range(n)]
    scores = tuple(view.public.scores)
    lowest_club = (tr.in_play & SUIT_MASK[0]) & -(tr.in_play & SUIT_MASK[0])
    totals = [0.0] * len(candidates)
    gaps = [0.0] * len(candidates)
    squares = [0.0] * len(candidates)
    done = 0
    for _ in range(budget.pass_deals):
        rng.shuffle(unseen)
        dealt = [0] * n
        dealt[me] = hand
        for i, s in enumerate(others):
            for c in unseen[i * tr.hand_size : (i + 1) * tr.hand_size]:
                dealt[s] |= 1 << c
        passes = [0] * n
        for s in others:
            for c in pass_cards(dealt[s], tr, count):
                passes[s] |= 1 << c
        values = []
        for pick in candidates:
            passes[me] = pick
            hands = [dealt[s] & ~passes[s] for s in range(n)]
            for s in range(n):
                hands[targets[s]] |= passes[s]
            leader = (view.public.dealer + 1) % n
            if tr.lowest_club_leads and lowest_club:
                leader = next(s for s in range(n) if hands[s] & lowest_club)
            st = PlayState(tr, hands, turn=leader, scores=scores)
            while st.hands[st.turn]:
                seat = st.turn
                play(st, seat, choose_card(st, seat, legal_mask(st, seat)))
            values.append(_value(st, me, budget.others_weight))
        _add_deal(values, values[0], totals, gaps, squares)
        done += 1
        if (
            budget.settle_z > 0
            and done >= budget.min_samples
            and _settled(gaps, squares, done, budget, budget.pass_margin)
        ):
            break
    best = min(range(len(candidates)), key=lambda j: totals[j])
    if totals[best] < totals[0] - budget.pass_margin * done:
        return list(bits(candidates[best]))
    return default


def pass_candidates(hand: int, tr: TableRules, count: int, default: list[int]) -> list[int]:
    """Passes to weigh, as masks, the heuristic's first: every choice of ``count`` among its
    ``count + 2`` most dangerous cards (the heuristic's own ranking)."""
    first = 0
    for c in default:
        first |= 1 << c
    ranked = sorted(bits(hand), key=lambda c: (-_pass_danger(c, hand, tr), c))
    out = [first]
    for combo in combinations(ranked[: count + 2], count):
        mask = 0
        for c in combo:
            mask |= 1 << c
        if mask not in out:
            out.append(mask)
    return out
