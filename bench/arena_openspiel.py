"""OpenSpiel's side of the arena: the matching rules, a seat's view as an OpenSpiel state, ISMCTS.

Rules. OpenSpiel's Hearts is set to our standard game (``OPENSPIEL_PARAMS``) and our games are
created with every option that concerns a hand spelled out (``our_rules``), so neither side's
defaults can drift apart unnoticed: 2C leads, hearts may not be led until a heart has been played
(the queen does not break them; a hand of only hearts may lead them; hearts and the queen alone
must lead the queen), any card may be discarded on the first trick, a moon gives the shooter 0
and every other seat 26 (OpenSpiel's only way), no bonus card, three cards passed. OpenSpiel's
returns are ``26 - points``; :func:`replay_record` checks both engines on every finished hand.

A seat's view as a state. ISMCTS needs a full OpenSpiel state whose information state for its
seat is the seat's, but the view (like any client's) holds only what the seat may see. So
:func:`state_for_view` builds *a* world consistent with the view: the seat's own cards, passes
and received cards as they are, every card played by the seat that played it, the rest of the
cards dealt at random; the seat is OpenSpiel's player 0 (its docstring says why). ISMCTS reads
only its seat's information in that world: its search (``ISMCTSBot::RunSearch``,
open_spiel/algorithms/is_mcts.cc) reads the root's legal actions (the seat's own cards) and
information state string, and draws every simulation's world with the root's
``ResampleFromInfostate`` (``max_world_samples=-1``: a fresh world each simulation). Hearts'
``ResampleFromInfostate`` (open_spiel/games/hearts/hearts.cc) reads the seat's own deal and
passes, the cards passed to it once play has begun, and who played which card, and checks that
the world it makes shows the same information state. ``tests/bench/test_arena.py`` checks it
on whole hands: two different fills of the hidden cards, and the true deal, give the same
resampled worlds for the same random numbers.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import pyspiel  # type: ignore[import-not-found]

from domain.cards import DECK

# OpenSpiel's Hearts parameters for our standard game (its defaults differ in two: it forbids
# points on the first trick and lets the queen break hearts).
OPENSPIEL_PARAMS: dict[str, bool] = {
    "pass_cards": True,
    "no_pts_on_first_trick": False,
    "can_lead_any_club": False,
    "jd_bonus": False,
    "avoid_all_tricks_bonus": False,
    "must_break_hearts": True,
    "qs_breaks_hearts": False,
    "can_lead_hearts_instead_of_qs": False,
}

# Our options that decide a hand, as OpenSpiel plays it (our defaults, written out).
MATCHING_OPTIONS: dict[str, Any] = {
    "players": 4,
    "removed_cards": None,
    "kitty": False,
    "cards_passed": 3,
    "optional_passing": False,
    "first_lead": "lowest_club",
    "hearts_lead": "when_broken",
    "queen_breaks_hearts": False,
    "hearts_and_queen_may_lead_hearts": False,
    "no_points_on_first_trick": False,
    "must_play_queen_when_safe": False,
    "bonus_card": None,
    "shoot_the_sun": False,
    "moon_scoring": "add_to_others",
    "penalty_suit": "hearts",
}

# OpenSpiel's pass-direction chance outcomes; seat s passes to s + outcome, as ours does.
PASS_OUTCOMES = {"hold": 0, "left": 1, "across": 2, "right": 3}
DIRECTIONS = ("left", "right", "across", "hold")  # our standard cycle's order
TOTAL_POINTS = 26  # OpenSpiel's returns are this minus a seat's points
_RANKS = "23456789TJQKA"
_SUITS = "CDHS"  # OpenSpiel's suit order: action = rank * 4 + suit
CARDS = tuple(str(c) for c in DECK)


class ArenaMismatch(RuntimeError):
    """The two engines disagree (legal cards, whose turn, or the points of a hand)."""


def our_rules(direction: str) -> dict[str, Any]:
    """Our game's options for a one-hand game passing ``direction``."""
    return {**MATCHING_OPTIONS, "pass_cycle": [direction], "score_limit": 1}


def load_game() -> Any:
    return pyspiel.load_game("hearts", dict(OPENSPIEL_PARAMS))


def action_of(card: str) -> int:
    return _RANKS.index(card[0]) * 4 + _SUITS.index(card[1])


def card_of_action(action: int) -> str:
    return _RANKS[action // 4] + _SUITS[action % 4]


# -- a seat's view as an OpenSpiel state -------------------------------------------------------


@dataclass(frozen=True)
class SeatInfo:
    """What a seat's view says, in the terms the world needs."""

    seat: int
    direction: str
    hand: tuple[str, ...]
    passed: tuple[str, ...] | None
    received: tuple[str, ...]
    plays: tuple[tuple[int, str], ...]  # every card played this hand, in order

    @classmethod
    def of(cls, view: dict[str, Any]) -> SeatInfo:
        plays = [(p["seat"], p["card"]) for t in view["tricks"] for p in t["cards"]]
        plays += [(p["seat"], p["card"]) for p in view["current_trick"]]
        passed = view["passed_cards"]
        return cls(
            seat=view["seat"],
            direction=view["pass_direction"],
            hand=tuple(view["hand"]),
            passed=None if passed is None else tuple(passed),
            received=tuple(view["received_cards"]),
            plays=tuple(plays),
        )


@dataclass
class World:
    """A deal, the passes made so far and the plays: an OpenSpiel history."""

    direction: str
    deal: list[list[str]]
    passes: list[list[str]] = field(default_factory=list)  # per seat, in seat order
    plays: list[tuple[int, str]] = field(default_factory=list)

    def state(self, game: Any, me: int = 0) -> Any:
        """The OpenSpiel state, seat ``me`` as its player 0 (every seat turned by -``me``)."""
        state = game.new_initial_state()
        state.apply_action(PASS_OUTCOMES[self.direction])
        hands = [sorted(self.deal[(p + me) % 4], key=action_of) for p in range(4)]
        for i in range(13):
            for player in range(4):  # OpenSpiel deals card k of the deal to player k % 4
                state.apply_action(action_of(hands[player][i]))
        for player in range(len(self.passes)):
            for card in self.passes[(player + me) % 4]:
                state.apply_action(action_of(card))
        for seat, card in self.plays:
            if state.current_player() != (seat - me) % 4:
                raise ArenaMismatch(f"OpenSpiel has player {state.current_player()} to play {card}")
            state.apply_action(action_of(card))
        return state


def world_for(info: SeatInfo, rng: random.Random) -> World:
    """A world consistent with what the seat knows; the cards it cannot see dealt at random."""
    if info.passed is None and info.direction != "hold":
        return _passing_world(info, rng)
    return _playing_world(info, rng)


def _passing_world(info: SeatInfo, rng: random.Random) -> World:
    # The seat is OpenSpiel's player 0 (``state_for_view``), the first to pass: no pass is made.
    me = info.seat
    rest = [c for c in CARDS if c not in set(info.hand)]
    rng.shuffle(rest)
    deal: list[list[str]] = []
    for seat in range(4):
        deal.append(list(info.hand) if seat == me else [rest.pop() for _ in range(13)])
    return World(info.direction, deal)


def _playing_world(info: SeatInfo, rng: random.Random) -> World:
    me, d = info.seat, PASS_OUTCOMES[info.direction]
    held: list[set[str]] = [set() for _ in range(4)]  # each seat's cards after the pass
    for seat, card in info.plays:
        held[seat].add(card)
    held[me] |= set(info.hand)
    if d:
        held[(me + d) % 4] |= set(info.passed or ())  # the cards this seat passed went there
    placed = set().union(*held)
    unseen = [c for c in CARDS if c not in placed]
    rng.shuffle(unseen)
    for seat in range(4):
        while len(held[seat]) < 13:
            held[seat].add(unseen.pop())
    if not d:
        return World(info.direction, [sorted(h) for h in held], [], list(info.plays))
    passes: list[list[str]] = [[] for _ in range(4)]
    passes[me] = list(info.passed or ())
    passes[(me - d) % 4] = list(info.received)
    for seat in range(4):
        if not passes[seat]:  # a pass this seat never saw: any three cards its receiver held
            passes[seat] = rng.sample(sorted(held[(seat + d) % 4]), 3)
    deal = [sorted((held[s] - set(passes[(s - d) % 4])) | set(passes[s])) for s in range(4)]
    return World(info.direction, deal, passes, list(info.plays))


def state_for_view(game: Any, view: dict[str, Any], rng: random.Random) -> Any:
    """An OpenSpiel state at the seat's decision, the seat as player 0; checked against the
    view's legal cards.

    Player 0 because OpenSpiel's ISMCTS crashes (a segmentation fault) searching a pass for a
    player whose passer has already passed in OpenSpiel's sequential passing: hearts'
    ``ResampleFromInfostate`` then hands the player the passer's *recorded* cards during the
    pass phase, which the resampled deal gave to someone else, and the search reaches a player
    with no card to play. Player 0 passes first, so that never arises. Hearts has no rule that
    depends on a seat's number (2C leads, play goes round), so turning the table changes
    nothing else.
    """
    info = SeatInfo.of(view)
    state = world_for(info, rng).state(game, me=info.seat)
    if state.current_player() != 0:
        raise ArenaMismatch(f"OpenSpiel has player {state.current_player()} to act, not 0")
    ours = set(view["legal_cards"])
    theirs = {card_of_action(a) for a in state.legal_actions()}
    if ours != theirs:
        raise ArenaMismatch(f"legal cards: ours {sorted(ours)}, OpenSpiel's {sorted(theirs)}")
    return state


# -- the agent ------------------------------------------------------------------------------------


@dataclass
class Timing:
    """CPU seconds spent deciding, per kind of decision."""

    cpu: dict[str, float] = field(default_factory=lambda: {"pass": 0.0, "play": 0.0})
    count: dict[str, int] = field(default_factory=lambda: {"pass": 0, "play": 0})

    def add(self, kind: str, seconds: float) -> None:
        self.cpu[kind] += seconds
        self.count[kind] += 1


class IsmctsAgent:
    """OpenSpiel's ISMCTS (C++) with random roll-outs, playing one seat from its view."""

    name = "ismcts"

    def __init__(self, sims: int, seed: int, uct_c: float, max_visit: bool = True) -> None:
        self.game = load_game()
        self.sims = sims
        self.uct_c = uct_c
        self.policy = (
            pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT
            if max_visit
            else pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT
        )
        self.rng = random.Random(seed)  # the hidden cards of the built worlds
        self.timing = Timing()
        self.searches = 0
        self.search_cpu = 0.0

    def new_hand(self, seed: int) -> None:
        """A fresh bot per hand, seeded from the hand: a run is reproducible."""
        # Kept on the agent: the bot holds the evaluator without keeping its Python object alive.
        self.evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        self.bot = pyspiel.ISMCTSBot(
            seed, self.evaluator, self.uct_c, self.sims, -1, self.policy, False, False
        )

    def decide(self, view: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The command for the seat's turn: (``pass`` or ``play``, its body). A pass is three
        searches (OpenSpiel passes a card an action), timed together as one decision."""
        state = state_for_view(self.game, view, self.rng)
        start = time.process_time()
        if view["phase"] == "passing":
            command = "pass", {"cards": [card_of_action(self._step(state)) for _ in range(3)]}
        elif view["phase"] == "playing":
            command = "play", {"card": card_of_action(self._step(state))}
        else:
            raise ArenaMismatch(f"ISMCTS has no move for phase {view['phase']}")
        self.timing.add(command[0], time.process_time() - start)
        return command

    def _step(self, state: Any) -> int:
        start = time.process_time()
        action = self.bot.step(state)
        self.search_cpu += time.process_time() - start
        self.searches += 1
        state.apply_action(action)  # the next pass card is chosen after this one
        return action


# -- both engines on a finished hand ---------------------------------------------------------------


def replay_record(game: Any, record: dict[str, Any]) -> list[int]:
    """Replay a finished hand's record (``GET /games/{id}/hands/1``) in OpenSpiel and in our
    domain, comparing the legal cards before every play; OpenSpiel's points per seat.
    ArenaMismatch on any disagreement, including the points."""
    from bench.arena_domain import DomainHand

    direction = record["pass_direction"]
    passes = [p["passed"] for p in sorted(record["passes"], key=lambda p: p["seat"])]
    plays = [(p["seat"], p["card"]) for t in record["tricks"] for p in t["cards"]]
    world = World(direction, record["dealt"], passes if direction != "hold" else [])
    state = world.state(game)
    ours = DomainHand(record["rules"], record["dealt"], passes if direction != "hold" else None)
    for seat, card in plays:
        theirs = {card_of_action(a) for a in state.legal_actions()}
        legal = ours.legal(seat)
        if theirs != legal or state.current_player() != seat:
            raise ArenaMismatch(
                f"before {seat} plays {card}: ours {sorted(legal)}, OpenSpiel's "
                f"{sorted(theirs)} (seat {state.current_player()})"
            )
        state.apply_action(action_of(card))
        ours.play(seat, card)
    if not state.is_terminal():
        raise ArenaMismatch("OpenSpiel's hand is not over after the recorded plays")
    points = [round(TOTAL_POINTS - r) for r in state.returns()]
    if points != list(record["score_changes"]) or points != ours.points():
        raise ArenaMismatch(
            f"points: OpenSpiel {points}, the server {record['score_changes']}, "
            f"our domain {ours.points()}"
        )
    return points


def check_cards() -> None:
    """OpenSpiel's card names are ours under ``action_of``."""
    state = load_game().new_initial_state()
    state.apply_action(1)
    for action in range(52):
        if state.action_to_string(0, action) != card_of_action(action):
            raise ArenaMismatch(f"action {action} is {state.action_to_string(0, action)}")
    if {card_of_action(a) for a in range(52)} != set(CARDS):
        raise ArenaMismatch("the decks differ")
