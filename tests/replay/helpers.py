"""Games played through the domain straight into an event store, for tests that need no API."""

from __future__ import annotations

import uuid

from bots import get_bot
from domain import commands as c
from domain.decider import decide, fold
from domain.events import event_to_dict, event_type
from domain.rules import RuleOptions
from domain.state import INITIAL_STATE, GameState, Phase
from domain.views import awaiting, seat_view
from service.store.envelope import NewEvent
from service.store.event_store import RedisEventStore


def new_events(events) -> list[NewEvent]:
    return [NewEvent(event_type(ev), type(ev).schema_version, event_to_dict(ev)) for ev in events]


def run(store: RedisEventStore, game_id: str, state: GameState, command) -> GameState:
    """Decide ``command``, append what it emits, return the new state."""
    emitted = decide(command, state)
    version = store.version(game_id)
    store.append(game_id, version, new_events(emitted), f"cmd-{uuid.uuid4().hex[:8]}")
    return fold(emitted, state)


def next_command(state: GameState, seed: str):
    """What the table does next: a deal, or a random bot's move for the first seat due."""
    if state.phase is Phase.DEALING:
        return c.Deal(seed=f"{seed}/hand-{state.hand_number + 1}")
    bot = get_bot("random")
    seat = awaiting(state)[0]
    view = seat_view(state, seat)
    key = f"{seed}/{state.hand_number}/{seat}/{len(state.hand.tricks) if state.hand else 0}"
    key += f"/{len(state.hand.trick) if state.hand else 0}"
    if state.phase is Phase.PASSING:
        return c.PassCards(seat, bot.choose_pass(view, state.rules, key))
    if state.phase is Phase.PLAYING:
        return c.PlayCard(seat, bot.choose_play(view, state.rules, key))
    if state.phase is Phase.MOON_CHOICE:
        return c.ChooseMoonScoring(seat, bot.choose_moon_scoring(view, state.rules, key))
    raise AssertionError(f"nothing to do in {state.phase}")


def play_game(
    store: RedisEventStore,
    game_id: str,
    *,
    rules: RuleOptions | None = None,
    seed: str = "test",
    stop_after: int | None = None,
) -> GameState:
    """Create a game of four joined players, deal, and play it with random moves.

    Stops when the game is finished, or once the log has at least ``stop_after`` events.
    """
    rules = rules or RuleOptions(score_limit=40)
    state = run(store, game_id, INITIAL_STATE, c.CreateGame(game_id, rules, (None,) * 4))
    for seat, name in enumerate(["ann", "bob", "cat", "dan"]):
        state = run(store, game_id, state, c.JoinGame(name, seat, f"cred-{name}"))
    while state.phase is not Phase.FINISHED:
        if stop_after is not None and store.version(game_id) >= stop_after:
            break
        state = run(store, game_id, state, next_command(state, seed))
    return state
