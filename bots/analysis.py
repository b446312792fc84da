"""The analysis of a finished hand: what each option of each decision was worth to its seat.

For every decision of the hand (each seat's pass, each play, the moon choice) it gives the
expected outcome of each option for the seat that decided, computed only from what that seat
knew at that moment: the evaluation reads nothing but the seat's ``SeatView`` of the state just
before the decision (``domain.views.seat_view``, which the secrecy declaration governs), turned
into a ``Knowledge`` (its cards, what it passed and where to, the play so far, the voids it could
infer) and dealt out by ``bots.sampling``, exactly as the montecarlo bot does. Each sampled deal
is played to the end by every seat playing ``heuristic`` on the compact simulation, once per
option, so that options are compared on the same deals (montecarlo's play-out machinery).

What an option is worth: ``value``, the seat's points for the hand less the others' average
(montecarlo's measure: lower is better, and a moon counts for what it does to the table), with a
95% confidence interval (mean +- 1.96 standard errors over the deals); ``points``, the seat's
own expected points for the hand. The played option's ``loss`` is its value less the best
option's, averaged deal by deal (a paired difference, far less noisy than the two means), with
its own interval. A mark needs the loss to pass a threshold (``THRESHOLDS``) and its interval
to exclude zero, so that the noise of a small budget marks nothing.

Limits, said where they apply: the pass has C(13, 3) = 286 options, so only a few candidates
are played out (the heuristic's pass, passes one card away from it, the pass played); cards
that play alike (no unseen card between them in a suit) share one evaluation, the played card
standing for its class; the play-outs assume every seat plays ``heuristic`` from there on, so
the figures are what the options are worth against that play, not against perfect play. The
moon choice is exact (nothing is hidden once the hand is over): its value is the shooter's
score less the best other score after the hand.

Pure: no I/O, no clock unless a budget in milliseconds is asked for (then the caller hands the
clock in), and the same seed gives the same analysis.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from domain import commands as c
from domain import events as e
from domain.cards import Card
from domain.decider import decide_and_evolve, evolve
from domain.errors import RuleViolation
from domain.rules import MoonScoring, RuleOptions
from domain.state import INITIAL_STATE, GameState
from domain.views import SeatView, seat_view

from .cardbits import bits, card_of, cards_of, mask_of
from .heuristic import _pass_danger, choose_card, pass_cards
from .knowledge import Knowledge, knowledge_of
from .montecarlo import Clock, _same_class, distinct_cards
from .sampling import sample_state
from .simulation import PlayState, legal_mask, outcome, play, table_rules

# Bumped whenever the figures an analysis gives for the same hand, seed and budget change: part
# of the key a stored analysis is kept under.
ANALYSIS_VERSION = 1

Z95 = 1.96

# Loss thresholds, in value points (the seat's points less the others' average). Taking the
# queen of spades that another seat would have taken costs 13 + 13/3 = 17.3; a heart that could
# have gone elsewhere 1.3. So: a blunder loses more than half a queen, a mistake about two
# hearts' worth to a side (or a needless trick with a few points), an inaccuracy a heart or so.
THRESHOLDS: tuple[tuple[str, float], ...] = (
    ("blunder", 8.0),
    ("mistake", 3.0),
    ("inaccuracy", 1.0),
)

PASS_ALTERNATIVES = 3  # passes one card away from the heuristic's, besides the pure danger pass

Progress = Callable[[int, int], None]  # (decisions done, decisions in the hand)
Tick = Callable[[], None]  # called after each sampled deal


class HandNotFinished(ValueError):
    """The hand is not in the events, or not scored yet: only finished hands are analysed."""


@dataclass(frozen=True, slots=True)
class AnalysisBudget:
    samples: int = 200  # sampled deals per decision (every option is played out on each)
    # Milliseconds per decision on the caller's clock: deals go on until they are spent (at
    # least ``min_samples``, at most ``samples``). None: exactly ``samples`` deals, so that a
    # seed fixes the analysis.
    ms: float | None = None
    min_samples: int = 8

    def __post_init__(self) -> None:
        if self.samples < 2 or self.min_samples < 2:
            raise ValueError("samples and min_samples must be at least 2")
        if self.ms is not None and not self.ms > 0:
            raise ValueError(f"ms must be positive, not {self.ms}")

    def to_dict(self) -> dict[str, Any]:
        return {"samples": self.samples, "ms": self.ms, "min_samples": self.min_samples}


DEFAULT_BUDGET = AnalysisBudget()


@dataclass(frozen=True, slots=True)
class Option:
    option: str  # a card, a pass ("2C 5D QS", "" when declining), a moon scoring
    value: float  # mean of the seat's points less the others' average: lower is better
    half_width: float  # of the 95% interval of ``value``
    points: float  # mean of the seat's own points for the hand

    def to_dict(self) -> dict[str, Any]:
        return {
            "option": self.option,
            "value": round(self.value, 3),
            "interval": round(self.half_width, 3),
            "points": round(self.points, 3),
        }


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str  # "pass", "play", "moon"
    seat: int
    trick: int | None  # 1-based, for a play
    played: str
    options: tuple[Option, ...]  # best first
    best: str
    loss: float  # the played option's value less the best one's, deal by deal
    loss_half_width: float
    mark: str | None  # "inaccuracy", "mistake", "blunder"
    forced: bool  # a single option (or every option alike)
    samples: int
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "trick": self.trick,
            "played": self.played,
            "best": self.best,
            "loss": round(self.loss, 3),
            "loss_interval": round(self.loss_half_width, 3),
            "mark": self.mark,
            "forced": self.forced,
            "samples": self.samples,
            "note": self.note,
            "options": [o.to_dict() for o in self.options],
        }


@dataclass(frozen=True, slots=True)
class SeatAccuracy:
    seat: int
    decisions: int  # with a choice (not forced)
    forced: int
    inaccuracies: int
    mistakes: int
    blunders: int
    total_loss: float
    # Share of its choices left unmarked, in percent (100 when every decision was forced).
    accuracy: float

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["total_loss"] = round(self.total_loss, 3)
        out["accuracy"] = round(self.accuracy, 1)
        return out


@dataclass(frozen=True, slots=True)
class HandAnalysis:
    hand_number: int
    seed: str
    budget: AnalysisBudget
    decisions: tuple[Decision, ...]
    seats: tuple[SeatAccuracy, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "hand_number": self.hand_number,
            "version": ANALYSIS_VERSION,
            "seed": self.seed,
            "budget": self.budget.to_dict(),
            "thresholds": dict(THRESHOLDS),
            "decisions": [d.to_dict() for d in self.decisions],
            "seats": [s.to_dict() for s in self.seats],
        }


# -- the hand --------------------------------------------------------------------------------------


def analyse_hand(
    events: Iterable[e.Event],
    hand_number: int,
    seed: str = "analysis",
    budget: AnalysisBudget = DEFAULT_BUDGET,
    clock: Clock | None = None,
    progress: Progress | None = None,
    tick: Tick | None = None,
) -> HandAnalysis:
    """The analysis of hand ``hand_number`` of the game whose events (from the first, in order)
    are ``events``. HandNotFinished unless the hand is dealt and scored in them. ``progress``
    is called after each decision, ``tick`` after each sampled deal (a caller that shares its
    thread with others yields there)."""
    if budget.ms is not None and clock is None:
        raise ValueError("a budget in milliseconds needs a clock")
    before_deal, hand_events = _hand_events(events, hand_number)
    total = sum(
        1
        for ev in hand_events
        if isinstance(ev, e.CardPlayed | e.CardsPassed | e.MoonScoringChosen)
    )
    state = before_deal
    dealt_state = before_deal
    decisions: list[Decision] = []
    tricks = 0
    for ev in hand_events:
        index = len(decisions)
        rng = random.Random(f"{seed}/{hand_number}/{index}")
        decision: Decision | None = None
        if isinstance(ev, e.HandDealt):
            state = evolve(state, ev)
            dealt_state = state
            continue
        if isinstance(ev, e.CardsPassed):
            decision = evaluate_pass(before_deal, dealt_state, ev, rng, budget, clock, tick)
        elif isinstance(ev, e.CardPlayed):
            view = seat_view(state, ev.seat)
            decision = evaluate_play(
                view, state.rules, ev.card, tricks + 1, rng, budget, clock, tick
            )
        elif isinstance(ev, e.MoonScoringChosen):
            decision = evaluate_moon(state, ev)
        elif isinstance(ev, e.TrickTaken):
            tricks += 1
        state = evolve(state, ev)
        if decision is not None:
            decisions.append(decision)
            if progress is not None:
                progress(len(decisions), total)
    n = before_deal.players
    return HandAnalysis(hand_number, seed, budget, tuple(decisions), _accuracy(decisions, n))


def _hand_events(events: Iterable[e.Event], number: int) -> tuple[GameState, list[e.Event]]:
    """(the game just before hand ``number`` was dealt, the hand's events up to its score)."""
    state = INITIAL_STATE
    hand: list[e.Event] | None = None
    before = state
    for ev in events:
        if hand is None:
            if isinstance(ev, e.HandDealt) and ev.hand_number == number:
                before = state
                hand = [ev]
            else:
                state = evolve(state, ev)
            continue
        hand.append(ev)
        if isinstance(ev, e.HandScored):
            return before, hand
    raise HandNotFinished(f"hand {number} is not finished")


def _accuracy(decisions: Sequence[Decision], n: int) -> tuple[SeatAccuracy, ...]:
    out = []
    for seat in range(n):
        mine = [d for d in decisions if d.seat == seat]
        chosen = [d for d in mine if not d.forced]
        marks = [d.mark for d in chosen]
        good = sum(1 for d in chosen if d.mark is None)
        out.append(
            SeatAccuracy(
                seat=seat,
                decisions=len(chosen),
                forced=len(mine) - len(chosen),
                inaccuracies=marks.count("inaccuracy"),
                mistakes=marks.count("mistake"),
                blunders=marks.count("blunder"),
                total_loss=sum(d.loss for d in chosen),
                accuracy=100.0 * good / len(chosen) if chosen else 100.0,
            )
        )
    return tuple(out)


# -- one decision ----------------------------------------------------------------------------------


class _Tally:
    """Per option, the sums over deals of its value, points, and gap to a reference option."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.done = 0
        self.rows: list[list[tuple[float, float]]] = []  # per deal: (value, points) per option

    def add(self, row: list[tuple[float, float]]) -> None:
        self.rows.append(row)
        self.done += 1

    def mean(self, j: int, part: int = 0) -> float:
        return sum(r[j][part] for r in self.rows) / self.done

    def half_width(self, xs: list[float]) -> float:
        m = len(xs)
        if m < 2:
            return 0.0
        mean = sum(xs) / m
        var = sum((x - mean) ** 2 for x in xs) / (m - 1)
        return Z95 * (var / m) ** 0.5


def _decision(
    kind: str,
    seat: int,
    trick: int | None,
    labels: list[str],
    played: int,
    tally: _Tally,
    note: str | None = None,
) -> Decision:
    k = len(labels)
    options = [
        Option(
            labels[j],
            tally.mean(j),
            tally.half_width([r[j][0] for r in tally.rows]),
            tally.mean(j, 1),
        )
        for j in range(k)
    ]
    best = min(range(k), key=lambda j: (options[j].value, j != played))
    gaps = [r[played][0] - r[best][0] for r in tally.rows]
    loss = sum(gaps) / len(gaps)
    half = tally.half_width(gaps)
    mark = None
    if loss - half > 0:
        for name, threshold in THRESHOLDS:
            if loss >= threshold:
                mark = name
                break
    order = sorted(range(k), key=lambda j: (options[j].value, j))
    return Decision(
        kind=kind,
        seat=seat,
        trick=trick,
        played=labels[played],
        options=tuple(options[j] for j in order),
        best=labels[best],
        loss=loss,
        loss_half_width=half,
        mark=mark,
        forced=k == 1,
        samples=tally.done,
        note=note,
    )


def _sample_count(budget: AnalysisBudget, clock: Clock | None) -> tuple[int, float | None]:
    if budget.ms is None or clock is None:
        return budget.samples, None
    return budget.samples, clock() + budget.ms / 1000


def _run(
    budget: AnalysisBudget,
    clock: Clock | None,
    tally: _Tally,
    deal: Callable[[], list[tuple[float, float]]],
    tick: Tick | None = None,
) -> None:
    samples, deadline = _sample_count(budget, clock)
    for _ in range(samples):
        tally.add(deal())
        if tick is not None:
            tick()
        if (
            deadline is not None
            and clock is not None
            and tally.done >= budget.min_samples
            and clock() >= deadline
        ):
            break


def _score(st: PlayState, me: int) -> tuple[float, float]:
    changes, _ = outcome(st)
    n = len(changes)
    return changes[me] - (sum(changes) - changes[me]) / (n - 1), float(changes[me])


def _play_out(st: PlayState) -> PlayState:
    hands = st.hands
    while hands[st.turn]:
        seat = st.turn
        play(st, seat, choose_card(st, seat, legal_mask(st, seat)))
    return st


def evaluate_play(
    view: SeatView,
    rules: RuleOptions,
    played: Card,
    trick: int | None,
    rng: random.Random,
    budget: AnalysisBudget = DEFAULT_BUDGET,
    clock: Clock | None = None,
    tick: Tick | None = None,
) -> Decision:
    """Every legal card of ``view`` (its seat to play), worth what it is on deals of what that
    seat may not see; ``played`` is the card the seat chose."""
    me = view.seat
    legal = mask_of(view.legal_cards)
    if legal.bit_count() == 1:
        tally = _Tally(1)
        return _decision("play", me, trick, [str(played)], 0, _forced(tally))
    k: Knowledge = knowledge_of(view, rules)
    cards = distinct_cards(legal, k.state.hands[me], k.unseen, k.state.rules.bonus)
    mine = played.index
    # The card played stands for its class of cards that play alike.
    cards = [mine if _same_class(x, mine, cards) else x for x in cards]
    if len(cards) == 1:
        return _decision("play", me, trick, [str(played)], 0, _forced(_Tally(1)), "alike")
    tally = _Tally(len(cards))

    def deal() -> list[tuple[float, float]]:
        world = sample_state(k, rng)
        row = []
        for x in cards:
            st = world.copy()
            play(st, me, x)
            row.append(_score(_play_out(st), me))
        return row

    _run(budget, clock, tally, deal, tick)
    note = None
    if len(cards) < legal.bit_count():
        note = "cards that play alike share one evaluation"
    labels = [str(card_of(x)) for x in cards]
    return _decision("play", me, trick, labels, cards.index(mine), tally, note)


def _forced(tally: _Tally) -> _Tally:
    tally.add([(0.0, 0.0)])
    tally.add([(0.0, 0.0)])
    return tally


def evaluate_pass(
    before_deal: GameState,
    dealt: GameState,
    passed: e.CardsPassed,
    rng: random.Random,
    budget: AnalysisBudget = DEFAULT_BUDGET,
    clock: Clock | None = None,
    tick: Tick | None = None,
) -> Decision:
    """A few passes for the seat of ``passed``, from its hand as dealt (what it knew when it
    passed: the others pass face down): the heuristic's pass, passes one card away from it,
    the one played. Each sampled deal is dealt again, every other seat passes as the heuristic
    would, and the hand is played out."""
    me = passed.seat
    rules = dealt.rules
    view = seat_view(dealt, me)
    count = view.cards_to_pass
    hand = mask_of(view.hand)
    tr = table_rules(rules)
    mine = _sorted(passed.cards)
    candidates = _pass_candidates(hand, tr, count, mine)
    played = candidates.index(mine)
    k = knowledge_of(view, rules)
    tally = _Tally(len(candidates))
    deal_event = _dealt_event(dealt)
    note = (
        f"{len(candidates)} passes evaluated, not all: the heuristic's, passes one card away "
        "from it, the one played"
    )

    def deal() -> list[tuple[float, float]]:
        world = sample_state(k, rng)
        hands = tuple(
            tuple(cards_of(world.hands[s] if s != me else hand)) for s in range(tr.players)
        )
        kitty = tuple(cards_of(world.kitty)) if tr.kitty else deal_event.kitty
        sampled = dataclasses.replace(deal_event, hands=hands, kitty=kitty, seed="analysis")
        start = evolve(before_deal, sampled)
        row = []
        for cards in candidates:
            st = _after_passes(start, me, cards, hands, tr, count)
            row.append(_score(_play_out(st), me))
        return row

    _run(budget, clock, tally, deal, tick)
    labels = [" ".join(str(x) for x in p) for p in candidates]
    return _decision("pass", me, None, labels, played, tally, note)


def _sorted(cards: Iterable[Card]) -> tuple[Card, ...]:
    return tuple(sorted(cards, key=lambda x: x.index))


def _dealt_event(dealt: GameState) -> e.HandDealt:
    """The HandDealt that made ``dealt`` (the hands and the kitty are replaced anyway)."""
    h = dealt.hand
    assert h is not None
    return e.HandDealt(
        hand_number=h.number,
        dealer=h.dealer,
        pass_direction=h.pass_direction,
        hands=h.dealt,
        kitty=h.kitty,
        seed=h.seed,
        seed_commitment=h.seed_commitment,
        explicit=h.explicit,
        salt=h.salt,
    )


def _pass_candidates(
    hand: int, tr: Any, count: int, played: tuple[Card, ...]
) -> list[tuple[Card, ...]]:
    def norm(cards: Iterable[int]) -> tuple[Card, ...]:
        return _sorted(card_of(x) for x in cards)

    heuristic = pass_cards(hand, tr, count)
    danger = {x: _pass_danger(x, hand, tr) for x in bits(hand)}
    by_danger = sorted(danger, key=lambda x: (-danger[x], x))
    out = [norm(heuristic), norm(by_danger[:count])]
    if heuristic:
        weakest = min(heuristic, key=lambda x: (danger[x], -x))
        others = [x for x in by_danger if x not in heuristic][:PASS_ALTERNATIVES]
        for x in others:
            out.append(norm([y for y in heuristic if y != weakest] + [x]))
    out.append(played)
    unique: list[tuple[Card, ...]] = []
    for p in out:
        if p not in unique:
            unique.append(p)
    return unique


def _after_passes(
    start: GameState,
    me: int,
    mine: tuple[Card, ...],
    hands: tuple[tuple[Card, ...], ...],
    tr: Any,
    count: int,
) -> PlayState:
    state = start
    for s in range(tr.players):
        cards = (
            mine if s == me else tuple(card_of(x) for x in pass_cards(mask_of(hands[s]), tr, count))
        )
        _, state = decide_and_evolve(c.PassCards(s, cards), state)
    return _play_state(state)


def _play_state(state: GameState) -> PlayState:
    """The whole table as the compact model: every hand (the referee's, here a sampled one)."""
    h = state.hand
    assert h is not None and h.turn is not None
    k = knowledge_of(seat_view(state, h.turn), state.rules)
    st = k.state.copy()
    st.hands = [h.held_by(s) for s in range(state.players)]
    st.kitty = mask_of(h.kitty) if st.rules.kitty and not st.kitty_taken else 0
    return st


def evaluate_moon(state: GameState, chosen: e.MoonScoringChosen) -> Decision:
    """Each moon scoring, exactly: the shooter's score less the best other score after it."""
    me = chosen.seat
    choices = list(MoonScoring)
    tally = _Tally(len(choices))
    row = []
    for choice in choices:
        try:
            _, after = decide_and_evolve(c.ChooseMoonScoring(me, choice), state)
        except RuleViolation:  # not a choice a shooter makes (the table's own scorings)
            row.append((float("inf"), float("inf")))
            continue
        scores = after.scores
        best_other = min(x for s, x in enumerate(scores) if s != me)
        row.append((float(scores[me] - best_other), float(scores[me] - state.scores[me])))
    allowed = [j for j, r in enumerate(row) if r[0] != float("inf")]
    labels = [choices[j].value for j in allowed]
    tally.k = len(allowed)
    exact = [[row[j] for j in allowed]]
    tally.add(exact[0])
    tally.add(exact[0])
    played = allowed.index(choices.index(chosen.choice))
    return _decision("moon", me, None, labels, played, tally, "exact: nothing is hidden")
