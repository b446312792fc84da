"""digest: one SHA-256 over what the rules engine answers, to show a speed-up changed nothing.

Random games under many random option sets (seeded, so every run plays the same moves while the
answers stay the same): every event (its JSON form), every seat's view and the public view after
each command, the legal cards of the seat to act, and the error (code and message) of illegal
commands tried at each turn (a held card that is not legal, a card not held, the wrong seat, a
pass of the wrong size). Run it before and after a change: equal digests, same behaviour.

    python -m bench.digest            # 60 option sets, 2 games each
    python -m bench.digest --sets 200
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from typing import Any

from domain.cards import DECK
from domain.commands import ChooseMoonScoring, Command, CreateGame, Deal, PassCards, PlayCard
from domain.decider import decide, evolve
from domain.errors import RuleViolation
from domain.events import event_to_dict, event_type
from domain.legal import legal_plays
from domain.rules import MoonScoring, RuleOptions
from domain.state import INITIAL_STATE, GameState, Phase
from domain.views import public_view, seat_view
from tests.rule_strategies import random_rule_options

MOON_CHOICES = (MoonScoring.ADD_TO_OTHERS, MoonScoring.SUBTRACT_FROM_SHOOTER)


def random_options(rng: random.Random) -> RuleOptions:
    """A valid option set, every option of ``domain.rules.OPTIONS`` drawn (seeded): the same
    drawing as the property tests' (tests/rule_strategies.py), so a new option is in the digest."""
    return random_rule_options(rng, score_limit=(5, 40))


class Digest:
    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.items = 0

    def add(self, kind: str, value: Any) -> None:
        self.sha.update(json.dumps([kind, value], sort_keys=True, default=str).encode())
        self.sha.update(b"\n")
        self.items += 1


def _run(state: GameState, command: Command, d: Digest) -> GameState:
    events = decide(command, state)
    for event in events:
        d.add("event", [event_type(event), event_to_dict(event)])
        state = evolve(state, event)
    d.add("public", public_view(state).to_dict())
    for seat in range(state.players):
        d.add("seat", seat_view(state, seat).to_dict())
    return state


def _try(state: GameState, command: Command, d: Digest) -> None:
    try:
        events = decide(command, state)
    except RuleViolation as violation:
        d.add("error", [violation.code, str(violation)])
    else:
        d.add("legal", [event_to_dict(e) for e in events])


def play_game(rules: RuleOptions, rng: random.Random, game_id: str, d: Digest) -> None:
    state = _run(INITIAL_STATE, CreateGame(game_id, rules, ("random",) * rules.players), d)
    hands = 0
    while state.phase is not Phase.FINISHED and hands < 12:
        hands += 1
        state = _run(state, Deal(seed=f"{game_id}/{hands}"), d)
        while state.phase is Phase.PASSING:
            hand = state.hand
            assert hand is not None
            seat = next(s for s, p in enumerate(hand.passed) if p is None)
            need = rules.cards_to_pass(hand.pass_direction)
            held = sorted(hand.hands[seat], key=lambda c: c.index)
            _try(state, PassCards(seat, tuple(held[: need + 1])), d)
            cards = tuple(rng.sample(held, need))
            if rules.optional_passing and rng.random() < 0.3:
                cards = ()
            state = _run(state, PassCards(seat, cards), d)
        while state.phase is Phase.PLAYING:
            hand = state.hand
            assert hand is not None and hand.turn is not None
            seat = hand.turn
            legal = sorted(legal_plays(rules, hand, seat), key=lambda c: c.index)
            d.add("legal_plays", [str(c) for c in legal])
            held = sorted(hand.hands[seat], key=lambda c: c.index)
            illegal = [c for c in held if c not in legal]
            if illegal:
                _try(state, PlayCard(seat, rng.choice(illegal)), d)
            absent = [c for c in DECK if c not in hand.hands[seat]]
            _try(state, PlayCard(seat, rng.choice(absent)), d)
            _try(state, PlayCard((seat + 1) % rules.players, legal[0]), d)
            state = _run(state, PlayCard(seat, rng.choice(legal)), d)
        if state.phase is Phase.MOON_CHOICE:
            assert state.moon_shooter is not None
            choice = rng.choice(MOON_CHOICES)
            state = _run(state, ChooseMoonScoring(state.moon_shooter, choice), d)


def digest(sets: int, games: int, seed: int) -> Digest:
    rng = random.Random(seed)
    d = Digest()
    for i in range(sets):
        rules = random_options(rng)
        d.add("rules", rules.to_dict())
        for g in range(games):
            play_game(rules, rng, f"digest-{i}-{g}", d)
    return d


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", type=int, default=60, help="random option sets")
    p.add_argument("--games", type=int, default=2, help="games per option set")
    p.add_argument("--seed", type=int, default=13)
    args = p.parse_args(argv)
    d = digest(args.sets, args.games, args.seed)
    print(f"digest: {d.sha.hexdigest()} ({d.items} items, {args.sets} option sets)")


if __name__ == "__main__":
    main()
