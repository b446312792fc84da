"""selfplay: complete random hands per second in the pure domain, one core, shuffle to score.

Project: whole games through ``decide``/``evolve`` (bench/randomplay.py): the seeded SHA-256
shuffle and deal, every seat's pass, 52 random legal plays (``legal_cards`` each time), the tricks,
the score, and a new game when one ends. Target: at least OpenSpiel's random hands/s in the same
run (and 2,000 hands/s).

OpenSpiel (when ``open_spiel`` is installed: ``pip install open_spiel``, a bench-only optional
dependency): its C++ Hearts (``pyspiel.load_game("hearts")``, one hand a game) played at random
from Python the same way: a uniformly random outcome at each chance node (the pass direction,
the deal card by card) and a uniformly random legal action at each decision (three single-card
pass actions per seat, then the plays). What a random hand costs through a compiled rules engine
driven from Python, the target.

Baseline, in the same run: a minimal hand-rolled random hand on ints with no rules engine (a
Mersenne shuffle, the pass cycle, 2C leads, follow suit if you can, the highest of the suit led
wins, hearts and QS counted). It is what Python needs at the least to play a hand at random, so
``ratio`` says how much of that floor the rules engine costs.

Also, for information: hands/s when the seats are played by ``bots.random`` through seat views
(as the service's bots are), which adds building a view per decision.
"""

from __future__ import annotations

import random
import time

from bench.common import Report, alternate, median, parser
from bench.randomplay import new_game, play_hand
from bots import bot_command
from bots.cardbits import bits
from bots.simulation import PlayState, legal_mask, outcome, play, table_rules
from domain.commands import Deal
from domain.decider import decide, evolve
from domain.passing import pass_target
from domain.rules import PRESETS, FirstLead, PassDirection, RuleOptions
from domain.state import GameState, Phase

TARGET_HANDS_PER_SECOND = 2000


class DomainTable:
    """Plays random hands back to back; a finished game is replaced by a new one."""

    def __init__(self, rules: RuleOptions, seed: int) -> None:
        self.rules = rules
        self.rng = random.Random(seed)
        self.games = 0
        self.hands = 0
        self.state = self._new_game()

    def _new_game(self) -> GameState:
        self.games += 1
        return new_game(f"bench-{self.games}", self.rules)

    def play(self, hands: int) -> float:
        """Play ``hands`` hands; the rate in hands per second."""
        start = time.process_time()
        for _ in range(hands):
            if self.state.phase is not Phase.DEALING:
                self.state = self._new_game()
            self.hands += 1
            self.state = play_hand(self.state, self.rng, f"seed-{self.hands}")
        return hands / (time.process_time() - start)


class BotTable(DomainTable):
    """The same, with each decision made by ``bots.random`` from the seat's view."""

    def __init__(self, rules: RuleOptions, seed: int) -> None:
        from bots import get_bot

        super().__init__(rules, seed)
        self.bot = get_bot("random")
        self.decisions = 0

    def play(self, hands: int) -> float:
        start = time.process_time()
        for _ in range(hands):
            if self.state.phase is not Phase.DEALING:
                self.state = self._new_game()
            self.hands += 1
            self.state = self._hand(self.state, f"seed-{self.hands}")
        return hands / (time.process_time() - start)

    def _seed(self) -> str:
        self.decisions += 1
        return f"bot-{self.decisions}"

    def _hand(self, state: GameState, seed: str) -> GameState:
        state = _apply(state, Deal(seed=seed))
        while state.phase is Phase.PASSING:
            assert state.hand is not None
            seat = next(s for s, p in enumerate(state.hand.passed) if p is None)
            state = _apply(state, bot_command(self.bot, state, seat, self._seed()))
        while state.phase is Phase.PLAYING:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            state = _apply(state, bot_command(self.bot, state, seat, self._seed()))
        if state.phase is Phase.MOON_CHOICE:
            seat = state.moon_shooter
            assert seat is not None
            state = _apply(state, bot_command(self.bot, state, seat, "moon"))
        return state


def _apply(state: GameState, command: object) -> GameState:
    for event in decide(command, state):  # type: ignore[arg-type]
        state = evolve(state, event)
    return state


# -- the baseline ---------------------------------------------------------------------------------

_QS = 2 * 13 + 10  # cards are ints: suit * 13 + rank - 2, suits C D S H


def baseline_hand(rng: random.Random, number: int) -> list[int]:
    """One random hand on ints, as little work as a legal-looking hand can take; the points."""
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [deck[seat::4] for seat in range(4)]
    shift = (1, 3, 2, 0)[number % 4]  # left, right, across, hold
    if shift:
        passes = [rng.sample(hand, 3) for hand in hands]
        for seat, cards in enumerate(passes):
            for card in cards:
                hands[seat].remove(card)
        for seat, cards in enumerate(passes):
            hands[(seat + shift) % 4].extend(cards)
    leader = next(seat for seat, hand in enumerate(hands) if 0 in hand)
    taken = [0, 0, 0, 0]
    for trick in range(13):
        seat = leader
        card = 0 if trick == 0 else rng.choice(hands[seat])
        hands[seat].remove(card)
        led = card // 13
        best, winner = card, seat
        points = (led == 3) + 13 * (card == _QS)
        for _ in range(3):
            seat = (seat + 1) % 4
            same = [c for c in hands[seat] if c // 13 == led]
            card = rng.choice(same or hands[seat])
            hands[seat].remove(card)
            if card // 13 == led and card > best:
                best, winner = card, seat
            points += (card // 13 == 3) + 13 * (card == _QS)
        taken[winner] += points
        leader = winner
    if 26 in taken:
        taken = [0 if t == 26 else 26 for t in taken]
    return taken


class BaselineTable:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.hands = 0

    def play(self, hands: int) -> float:
        start = time.process_time()
        for _ in range(hands):
            self.hands += 1
            baseline_hand(self.rng, self.hands)
        return hands / (time.process_time() - start)


class OpenSpielTable:
    """Random hands of OpenSpiel's C++ Hearts, driven from Python like the project's."""

    def __init__(self, seed: int) -> None:
        import pyspiel  # type: ignore[import-not-found]

        self.game = pyspiel.load_game("hearts")
        self.rng = random.Random(seed)
        self.hands = 0

    def play(self, hands: int) -> float:
        choice = self.rng.choice
        start = time.process_time()
        for _ in range(hands):
            self.hands += 1
            state = self.game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(choice(state.chance_outcomes())[0])
                else:
                    state.apply_action(choice(state.legal_actions()))
        return hands / (time.process_time() - start)


class ModelTable:
    """Random hands on the bots' play-out model (bots/simulation.py: card masks, mutable, the
    domain's own legal-play rule): what the montecarlo bot and the analysis play thousands of a
    decision. No events, commands or seeded deal: a Mersenne shuffle, the pass by masks, 52
    random legal plays, the outcome. For information beside the domain's rate: the issue 23
    target asks the domain to be fast so that these get cheaper, and these run without it."""

    def __init__(self, rules: RuleOptions, seed: int) -> None:
        self.rules = rules
        self.tables = table_rules(rules)
        self.rng = random.Random(seed)
        self.hands = 0

    @staticmethod
    def fits(rules: RuleOptions) -> bool:
        """The hands this table deals: four players, a whole deck, no kitty, 2C leads."""
        return (
            rules.players == 4
            and not rules.kitty
            and rules.removed_cards is None
            and rules.first_lead is FirstLead.LOWEST_CLUB
        )

    def play(self, hands: int) -> float:
        start = time.process_time()
        for _ in range(hands):
            self.hands += 1
            self._hand(self.hands)
        return hands / (time.process_time() - start)

    def _hand(self, number: int) -> None:
        rng = self.rng
        deck = list(range(52))
        rng.shuffle(deck)
        masks = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
        direction = self.rules.pass_direction(number)
        if direction in (PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS):
            count = self.rules.cards_to_pass(direction)
            passed = [sum(1 << c for c in rng.sample(list(bits(m)), count)) for m in masks]
            kept = [m & ~p for m, p in zip(masks, passed, strict=True)]
            for s in range(4):
                kept[pass_target(direction, s, 4)] |= passed[s]
            masks = kept
        st = PlayState(self.tables, masks, turn=next(s for s in range(4) if masks[s] & 1))
        for _ in range(52):
            seat = st.turn
            play(st, seat, rng.choice(list(bits(legal_mask(st, seat)))))
        outcome(st)


def open_spiel_table(seed: int) -> OpenSpielTable | None:
    try:
        return OpenSpielTable(seed)
    except ImportError:
        return None


def _compiled() -> bool:
    import domain.decider

    return not (domain.decider.__file__ or "").endswith(".py")


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--hands", type=int, default=300, help="project hands per round")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--bot-hands", type=int, default=20, help="hands per round via bots (0: skip)")
    p.add_argument("--preset", default="standard", choices=sorted(PRESETS))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget", type=float, default=90.0, help="stop after this many seconds")
    p.add_argument(
        "--no-open-spiel", dest="open_spiel", action="store_false", help="skip OpenSpiel"
    )
    args = p.parse_args(argv)

    rules = PRESETS[args.preset]
    domain = DomainTable(rules, args.seed)
    baseline = BaselineTable(args.seed)
    runs = {
        "domain": lambda: domain.play(args.hands),
        "baseline": lambda: baseline.play(args.hands * 10),
    }
    spiel = open_spiel_table(args.seed) if args.open_spiel else None
    if spiel is not None:
        runs["open_spiel"] = lambda: spiel.play(args.hands)
    if args.bot_hands:
        bots = BotTable(rules, args.seed)
        runs["bots"] = lambda: bots.play(args.bot_hands)
    model = ModelTable(rules, args.seed) if ModelTable.fits(rules) else None
    if model is not None:
        runs["model"] = lambda: model.play(args.hands)
    domain.play(max(1, args.hands // 10))  # warm up: imports, caches
    rates = alternate(runs, args.rounds, args.budget)

    project = median(rates["domain"])
    floor = median(rates["baseline"])
    report = Report("selfplay")
    report.add("preset", args.preset)
    # Which rules engine ran: the .py modules, or extension modules built from them in place
    # (bench/README.md, "selfplay": a Cython build of domain/ was measured, not shipped).
    report.add("domain_modules", "compiled" if _compiled() else "pure Python")
    report.add("hands_per_second", project, "hands/s")
    report.add("ms_per_hand", 1000 / project, "ms")
    report.add("hands_per_second_best_round", max(rates["domain"]), "hands/s")
    report.add("baseline_hands_per_second", floor, "hands/s")
    report.add("ratio_to_baseline", project / floor)
    if spiel is not None:
        theirs = median(rates["open_spiel"])
        report.add("open_spiel_hands_per_second", theirs, "hands/s")
        report.add("ratio_to_open_spiel", project / theirs)
        report.target("ratio_to_open_spiel", project >= theirs, ">= OpenSpiel's hands/s")
    else:
        report.note("OpenSpiel not installed (pip install open_spiel): no OpenSpiel baseline")
    if args.bot_hands:
        report.add("via_bots_hands_per_second", median(rates["bots"]), "hands/s")
    if model is not None:
        # Not the target's figure: the bots' play-out model, which plays without the domain.
        report.add("playout_model_hands_per_second", median(rates["model"]), "hands/s")
        if spiel is not None:
            report.add("playout_model_ratio_to_open_spiel", median(rates["model"]) / theirs)
    report.add("rounds", len(rates["domain"]))
    report.add("hands_played", domain.hands)
    report.add("games_played", domain.games)
    report.target("hands_per_second", project >= TARGET_HANDS_PER_SECOND, ">= 2,000 hands/s")
    report.note("median of rounds; baseline: random hand on ints, no rules engine")
    report.note("rates in this process's CPU time: on a shared machine a wall clock counts waits")
    report.emit(args.json)


if __name__ == "__main__":
    main()
