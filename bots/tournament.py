"""Self-play: games between strategies, in process, driven through the domain's decider.

Each bot is handed ``seat_view(state, seat)`` and nothing else, and every move it returns goes
through ``decide``, so an illegal move fails loudly (``IllegalMove``) instead of being played.

A tournament plays duplicate deals: game ``g`` is played once per seat rotation, every rotation
dealt the same cards from the same seeds (hand ``h`` of game ``g`` is dealt from
``hand_seed("<seed>/<g>", h)``, by default ``"<seed>/<g>/<h>"``), so each strategy plays every
seat's cards. Points are compared deal by
deal: the confidence intervals treat each duplicate deal (one hand's cards, over every rotation
that reached that hand) as one independent observation.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from domain.commands import Command, CreateGame, Deal
from domain.decider import decide, fold, is_terminal
from domain.errors import RuleViolation
from domain.events import Event, GameEnded, HandScored
from domain.rules import RuleOptions
from domain.state import INITIAL_STATE, GameState, Phase

from .base import Bot
from .commands import bot_command
from .specs import make_bot


class IllegalMove(RuntimeError):
    """A bot chose a move the rules refuse."""

    def __init__(self, strategy: str, command: Command, violation: RuleViolation) -> None:
        super().__init__(f"{strategy} made an illegal move {command}: {violation}")
        self.strategy = strategy
        self.command = command
        self.violation = violation


@dataclass(frozen=True, slots=True)
class HandResult:
    hand_number: int
    score_changes: tuple[int, ...]
    shooter: int | None


@dataclass(slots=True)
class GameResult:
    game_id: str
    strategies: tuple[str, ...]  # per seat
    deal_seed: str = ""
    hands: list[HandResult] = field(default_factory=list)
    winners: tuple[int, ...] = ()
    finished: bool = False
    decisions: list[int] = field(default_factory=list)  # per seat
    decision_seconds: list[float] = field(default_factory=list)  # per seat
    slowest_decision: list[float] = field(default_factory=list)  # per seat
    events: list[Event] = field(default_factory=list)  # kept only when asked for
    event_count: int = 0


Clock = Callable[[], float]
HandSeed = Callable[[str, int], str]  # (game's deal seed, hand number) -> the hand's seed


def plain_hand_seed(deal_seed: str, hand_number: int) -> str:
    return f"{deal_seed}/{hand_number}"


def play_game(
    game_id: str,
    rules: RuleOptions,
    strategies: Sequence[str],
    deal_seed: str,
    *,
    bots: dict[str, Bot] | None = None,
    max_hands: int | None = None,
    keep_events: bool = False,
    clock: Clock = time.process_time,
    hand_seed: HandSeed = plain_hand_seed,
) -> GameResult:
    """Play one game to its end (or ``max_hands`` hands) with a strategy per seat.

    Decisions are timed with ``clock``, by default this process's CPU time: what a decision
    costs on one core, whatever else the machine is running.
    """
    n = rules.players
    bots = dict(bots or {})
    for name in strategies:
        if name not in bots:
            bots[name] = make_bot(name, clock)  # a time budget on the decisions' clock
    result = GameResult(
        game_id,
        tuple(strategies),
        deal_seed,
        decisions=[0] * n,
        decision_seconds=[0.0] * n,
        slowest_decision=[0.0] * n,
    )
    state = INITIAL_STATE
    state = _apply(state, CreateGame(game_id, rules, tuple(strategies)), result, keep_events, "")
    count = 0
    while not is_terminal(state):
        hand_number = state.hand_number
        if state.phase is Phase.DEALING:
            if max_hands is not None and hand_number >= max_hands:
                break
            command: Command = Deal(seed=hand_seed(deal_seed, hand_number + 1))
            state = _apply(state, command, result, keep_events, "dealer")
            continue
        seat = _seat_to_act(state)
        name = strategies[seat]
        seed = f"{game_id}/{hand_number}/{seat}/{count}"
        count += 1
        started = clock()
        command = bot_command(bots[name], state, seat, seed)
        spent = clock() - started
        result.decisions[seat] += 1
        result.decision_seconds[seat] += spent
        result.slowest_decision[seat] = max(result.slowest_decision[seat], spent)
        state = _apply(state, command, result, keep_events, name)
    result.winners = state.winners
    result.finished = is_terminal(state)
    return result


def _seat_to_act(state: GameState) -> int:
    hand = state.hand
    assert hand is not None
    if state.phase is Phase.PASSING:
        return next(s for s, p in enumerate(hand.passed) if p is None)
    if state.phase is Phase.PLAYING:
        assert hand.turn is not None
        return hand.turn
    assert state.moon_shooter is not None
    return state.moon_shooter


def _apply(
    state: GameState, command: Command, result: GameResult, keep: bool, actor: str
) -> GameState:
    try:
        events = decide(command, state)
    except RuleViolation as violation:
        raise IllegalMove(actor, command, violation) from violation
    for ev in events:
        if isinstance(ev, HandScored):
            result.hands.append(HandResult(ev.hand_number, ev.score_changes, ev.shooter))
        elif isinstance(ev, GameEnded):
            result.winners = ev.winners
    result.event_count += len(events)
    if keep:
        result.events.extend(events)
    return fold(events, state)


# -- tournaments ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Interval:
    mean: float
    half_width: float  # of the 95% confidence interval
    n: int  # independent observations (duplicate deals)

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def interval(values: Sequence[float]) -> Interval:
    """Mean and a normal-approximation 95% confidence interval."""
    k = len(values)
    if k == 0:
        return Interval(math.nan, math.nan, 0)
    mean = sum(values) / k
    if k == 1:
        return Interval(mean, math.inf, 1)
    var = sum((v - mean) ** 2 for v in values) / (k - 1)
    return Interval(mean, 1.96 * math.sqrt(var / k), k)


@dataclass(frozen=True, slots=True)
class StrategyStats:
    name: str
    seats: int  # seats of the lineup it fills
    hands: int  # hands played, counted per seat
    points: Interval  # points per hand (score changes, moons included), by duplicate deal
    games: int  # games finished (not cut short by max_hands), counted per seat
    wins: float  # a shared win counts 1/(number of winners)
    moons: int  # moons (and suns) shot
    decisions: int
    decision_seconds: float
    slowest_decision: float

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else math.nan

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.decision_seconds if self.decision_seconds else math.inf

    @property
    def ms_per_decision(self) -> float:
        return 1000 * self.decision_seconds / self.decisions if self.decisions else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "strategy": self.name,
            "seats": self.seats,
            "hands": self.hands,
            "points_per_hand": self.points.mean,
            "points_ci95": [self.points.low, self.points.high],
            "duplicate_deals": self.points.n,
            "games": self.games,
            "win_rate": self.win_rate,
            "moons": self.moons,
            "decisions": self.decisions,
            "decisions_per_second": self.decisions_per_second,
            "ms_per_decision": self.ms_per_decision,
            "slowest_decision_ms": 1000 * self.slowest_decision,
        }


@dataclass(frozen=True, slots=True)
class Comparison:
    """``name`` minus ``baseline`` in points per hand, paired deal by deal (negative: better)."""

    name: str
    baseline: str
    difference: Interval

    def to_dict(self) -> dict[str, object]:
        d = self.difference
        return {
            "strategy": self.name,
            "baseline": self.baseline,
            "difference": d.mean,
            "ci95": [d.low, d.high],
            "duplicate_deals": d.n,
        }


@dataclass(slots=True)
class TournamentResult:
    lineup: tuple[str, ...]
    games: list[GameResult] = field(default_factory=list)

    def strategies(self) -> list[str]:
        return list(dict.fromkeys(self.lineup))

    def per_deal(self) -> dict[str, dict[tuple[int, int], float]]:
        """Per strategy: its mean points per hand on each duplicate deal (game, hand)."""
        sums: dict[str, dict[tuple[int, int], list[float]]] = defaultdict(
            lambda: defaultdict(lambda: [0.0, 0])
        )
        for index, game in enumerate(self.games):
            g = index // len(self.lineup)
            for h in game.hands:
                for seat, change in enumerate(h.score_changes):
                    acc = sums[game.strategies[seat]][(g, h.hand_number)]
                    acc[0] += change
                    acc[1] += 1
        return {
            name: {deal: total / count for deal, (total, count) in deals.items()}
            for name, deals in sums.items()
        }

    def stats(self) -> list[StrategyStats]:
        deals = self.per_deal()
        out = []
        for name in self.strategies():
            hands = games = decisions = moons = 0
            wins = seconds = slowest = 0.0
            for game in self.games:
                seats = [s for s, x in enumerate(game.strategies) if x == name]
                if not seats:
                    continue
                hands += len(game.hands) * len(seats)
                if game.finished and game.winners:
                    games += len(seats)
                    wins += sum(1 for s in seats if s in game.winners) / len(game.winners)
                moons += sum(1 for h in game.hands if h.shooter in seats)
                decisions += sum(game.decisions[s] for s in seats)
                seconds += sum(game.decision_seconds[s] for s in seats)
                slowest = max([slowest] + [game.slowest_decision[s] for s in seats])
            out.append(
                StrategyStats(
                    name=name,
                    seats=self.lineup.count(name),
                    hands=hands,
                    points=interval(list(deals.get(name, {}).values())),
                    games=games,
                    wins=wins,
                    moons=moons,
                    decisions=decisions,
                    decision_seconds=seconds,
                    slowest_decision=slowest,
                )
            )
        return out

    def comparisons(self) -> list[Comparison]:
        """Every other strategy against the first of the lineup, deal by deal."""
        names = self.strategies()
        if len(names) < 2:
            return []
        deals = self.per_deal()
        first = deals[names[0]]
        out = []
        for other in names[1:]:
            theirs = deals[other]
            diffs = [first[d] - theirs[d] for d in first if d in theirs]
            out.append(Comparison(names[0], other, interval(diffs)))
        return out


Progress = Callable[[int, int, int, int], None]  # games done, games in all, events, hands


def run_tournament(
    lineup: Sequence[str],
    rules: RuleOptions,
    games: int,
    seed: str,
    *,
    bots: dict[str, Bot] | None = None,
    max_hands: int | None = None,
    keep_events: bool = False,
    on_game: Callable[[GameResult], None] | None = None,
    progress: Progress | None = None,
    hand_seed: HandSeed = plain_hand_seed,
) -> TournamentResult:
    """``games`` duplicate games: each played once per rotation of ``lineup`` round the table."""
    n = rules.players
    if len(lineup) != n:
        raise ValueError(f"{n} players need {n} strategies, not {len(lineup)}")
    bots = dict(bots or {})
    for name in lineup:
        if name not in bots:
            bots[name] = make_bot(name, time.process_time)  # play_game's clock
    result = TournamentResult(tuple(lineup))
    total = games * n
    events = hands = 0
    for g in range(games):
        for r in range(n):
            strategies = [lineup[(s - r) % n] for s in range(n)]
            game = play_game(
                f"sim-{seed}-{g}-{r}",
                rules,
                strategies,
                f"{seed}/{g}",
                bots=bots,
                max_hands=max_hands,
                keep_events=keep_events,
                hand_seed=hand_seed,
            )
            if on_game is not None:
                on_game(game)
            if keep_events and on_game is not None:
                game.events = []  # handed over: do not hold every game's events in memory
            result.games.append(game)
            events += game.event_count
            hands += len(game.hands)
            if progress is not None:
                progress(len(result.games), total, events, hands)
    return result
