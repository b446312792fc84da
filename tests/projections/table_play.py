"""Games played with the pure domain, each seat by a policy of its own, for the fair-play tests:
a bot of the project (``heuristic``, ``random``) or ``highest``, the farm's colluder of issue
42, which plays its highest legal card (and passes like ``random``)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from bots import get_bot
from domain import (
    ChooseMoonScoring,
    Command,
    CreateGame,
    Deal,
    Event,
    GameState,
    JoinGame,
    PassCards,
    Phase,
    PlayCard,
    RuleOptions,
    decide_and_evolve,
    event_to_dict,
    event_type,
    seat_view,
)
from domain.state import INITIAL_STATE
from service.store.envelope import NewEvent
from tests.projections.games import GamePlan

HIGHEST = "highest"


def play(
    game_id: str,
    rules: RuleOptions,
    policies: Sequence[str],
    seed: int,
    player_ids: Sequence[str] | None = None,
) -> tuple[list[Event], GameState]:
    """Every event of a whole game whose seat s is played by ``policies[s]``."""
    batches, state = _play(game_id, rules, policies, seed, player_ids)
    return [event for batch in batches for event in batch], state


def plan(
    game_id: str,
    rules: RuleOptions,
    policies: Sequence[str],
    seed: int,
    player_ids: Sequence[str],
) -> GamePlan:
    """The same game as :func:`play`, as the commands' appends a server would make."""
    batches, _ = _play(game_id, rules, policies, seed, player_ids)
    return GamePlan(
        game_id,
        [
            [NewEvent(event_type(e), type(e).schema_version, event_to_dict(e)) for e in b]
            for b in batches
        ],
    )


def _play(
    game_id: str,
    rules: RuleOptions,
    policies: Sequence[str],
    seed: int,
    player_ids: Sequence[str] | None,
) -> tuple[list[list[Event]], GameState]:
    rng = random.Random(seed)
    ids = list(player_ids) if player_ids is not None else [f"p{s}" for s in range(len(policies))]
    batches: list[list[Event]] = []

    def step(state: GameState, command: Command) -> GameState:
        events, state = decide_and_evolve(command, state)
        batches.append(list(events))
        return state

    state = step(INITIAL_STATE, CreateGame(game_id, rules, (None,) * len(policies)))
    for seat, player in enumerate(ids):
        state = step(state, JoinGame(player, seat, player_id=player))
    bots = {name: get_bot(name) for name in {*policies, "random"} if name != HIGHEST}
    while state.phase is Phase.DEALING:
        state = step(state, Deal(seed=f"{game_id}/{rng.random()}"))
        while state.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
            state = step(state, _move(state, policies, bots, str(rng.random())))
    return batches, state


def _move(state: GameState, policies: Sequence[str], bots: dict, seed: str) -> Command:
    hand = state.hand
    if state.phase is Phase.PASSING:
        assert hand is not None
        seat = next(s for s, p in enumerate(hand.passed) if p is None)
        bot = bots.get(policies[seat], bots["random"])
        return PassCards(seat, bot.choose_pass(seat_view(state, seat), state.rules, seed))
    if state.phase is Phase.PLAYING:
        assert hand is not None and hand.turn is not None
        seat = hand.turn
        view = seat_view(state, seat)
        if policies[seat] == HIGHEST:
            return PlayCard(seat, max(view.legal_cards, key=lambda c: (c.rank, c.index)))
        return PlayCard(seat, bots[policies[seat]].choose_play(view, state.rules, seed))
    assert state.moon_shooter is not None
    seat = state.moon_shooter
    bot = bots.get(policies[seat], bots["random"])
    choice = bot.choose_moon_scoring(seat_view(state, seat), state.rules, seed)
    return ChooseMoonScoring(seat, choice)
