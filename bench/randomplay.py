"""Random legal play through the pure domain: ``decide``, then each event applied by ``evolve``'s
rules, as the service does. A hand is played on a draft (``domain.decider.draft``): the state is
changed in place event by event, as a fold does, instead of copied per event.

Each move is the random bot's strategy (a uniformly random card of ``legal_cards``, a random
pass of the hand), chosen here directly from the state rather than through a seat view, so the
figures are the rules engine's own cost. Choosing among cards in deck order keeps a run
reproducible from its seed.
"""

from __future__ import annotations

import random

from domain.cards import cards_of
from domain.commands import (
    ChooseMoonScoring,
    Command,
    CreateGame,
    Deal,
    JoinGame,
    PassCards,
    PlayCard,
)
from domain.decider import apply, decide, draft
from domain.events import Event
from domain.legal import legal_cards
from domain.rules import MoonScoring, RuleOptions
from domain.state import INITIAL_STATE, GameState, Phase

MOON_CHOICES = (MoonScoring.ADD_TO_OTHERS, MoonScoring.SUBTRACT_FROM_SHOOTER)


def execute(state: GameState, command: Command, log: list[Event] | None = None) -> None:
    """Decide the command and apply its events to the draft ``state`` (and keep them in ``log``)."""
    events = decide(command, state)
    for event in events:
        apply(state, event)
    if log is not None:
        log.extend(events)


def new_game(game_id: str, rules: RuleOptions, log: list[Event] | None = None) -> GameState:
    """A created game whose every seat has joined: ready for its first deal."""
    state = draft(INITIAL_STATE)
    execute(state, CreateGame(game_id, rules, (None,) * rules.players), log)
    for seat in range(rules.players):
        execute(state, JoinGame(f"player {seat}", seat, f"credential-{seat}"), log)
    return state


def play_hand(
    state: GameState, rng: random.Random, seed: str, log: list[Event] | None = None
) -> GameState:
    """Deal with ``seed`` and play the hand to its score (and the game's end, if it ends).
    ``state`` is a draft (``new_game``'s), changed in place and returned."""
    execute(state, Deal(seed=seed), log)
    if state.phase is Phase.PASSING:
        hand = state.hand
        assert hand is not None
        need = state.rules.cards_to_pass(hand.pass_direction)
        for seat in range(state.players):
            cards = tuple(rng.sample(cards_of(hand.held_by(seat)), need))
            execute(state, PassCards(seat, cards), log)
    while state.phase is Phase.PLAYING:
        hand = state.hand
        assert hand is not None and hand.turn is not None
        seat = hand.turn
        card = rng.choice(legal_cards(state.rules, hand, seat))
        execute(state, PlayCard(seat, card), log)
    if state.phase is Phase.MOON_CHOICE:
        assert state.moon_shooter is not None
        execute(state, ChooseMoonScoring(state.moon_shooter, rng.choice(MOON_CHOICES)), log)
    return state


def random_game(
    game_id: str, rules: RuleOptions, rng: random.Random, max_hands: int | None = None
) -> list[Event]:
    """The events of one game played at random to its end (or to ``max_hands`` hands)."""
    log: list[Event] = []
    state = new_game(game_id, rules, log)
    hands = 0
    while state.phase is Phase.DEALING and (max_hands is None or hands < max_hands):
        state = play_hand(state, rng, f"{game_id}/{hands + 1}", log)
        hands += 1
    return log
