"""Games for the projection tests: played with the pure domain by seeded random bots.

Each game is a list of commands' events (one list per command, as the service appends them), so
appending them through the store gives the log a real server would write.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from bots import get_bot
from domain import (
    ChooseMoonScoring,
    Command,
    CreateGame,
    Deal,
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
from service.store.event_store import RedisEventStore

NAMES = ("ann", "bob", "cy", "dee", "eve", "fay")


@dataclass(frozen=True)
class GamePlan:
    game_id: str
    batches: list[list[NewEvent]]  # one list per command, in order


def _apply(state: GameState, command: Command, batches: list[list[NewEvent]]) -> GameState:
    events, state = decide_and_evolve(command, state)
    batches.append(
        [NewEvent(event_type(e), type(e).schema_version, event_to_dict(e)) for e in events]
    )
    return state


def play_game(
    game_id: str,
    rules: RuleOptions,
    rng: random.Random,
    *,
    names: Sequence[str | None] | None = None,
    max_hands: int | None = None,
    player_ids: Sequence[str | None] | None = None,
) -> GamePlan:
    """A game where ``names[s]`` joins seat s (None: a ``random`` bot seat), played by bots;
    ``player_ids[s]``: the seat is joined as that registered player (with its key).

    Stops after ``max_hands`` hands (the game then stays unfinished), else at the game's end.
    """
    if names is None:
        # A name sits at most once at a table; bot seats (None) may repeat.
        people = rng.sample(NAMES, rules.players)
        names = [name if rng.random() < 0.7 else None for name in people]
    seats = tuple("random" if n is None else None for n in names)
    batches: list[list[NewEvent]] = []
    state = _apply(INITIAL_STATE, CreateGame(game_id, rules, seats), batches)
    for seat, name in enumerate(names):
        if name is not None:
            player_id = player_ids[seat] if player_ids is not None else None
            state = _apply(state, JoinGame(name, seat, player_id=player_id), batches)
    bot = get_bot("random")
    hands = 0
    while state.phase is Phase.DEALING and (max_hands is None or hands < max_hands):
        state = _apply(state, Deal(seed=f"{game_id}/{rng.random()}"), batches)
        hands += 1
        while state.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
            state = _apply(state, _bot_move(state, bot, rng), batches)
    return GamePlan(game_id, batches)


def _bot_move(state: GameState, bot, rng: random.Random) -> Command:
    seed = str(rng.random())
    if state.phase is Phase.PASSING:
        assert state.hand is not None
        seat = next(s for s, p in enumerate(state.hand.passed) if p is None)
        view = seat_view(state, seat)
        return PassCards(seat, bot.choose_pass(view, state.rules, seed))
    if state.phase is Phase.PLAYING:
        assert state.hand is not None and state.hand.turn is not None
        seat = state.hand.turn
        return PlayCard(seat, bot.choose_play(seat_view(state, seat), state.rules, seed))
    assert state.moon_shooter is not None
    seat = state.moon_shooter
    choice = bot.choose_moon_scoring(seat_view(state, seat), state.rules, seed)
    return ChooseMoonScoring(seat, choice)


def append_all(store: RedisEventStore, plans: Sequence[GamePlan], rng: random.Random) -> None:
    """Append every game's commands, interleaving games at random (each game in its order)."""
    cursors = {p.game_id: 0 for p in plans}
    versions = {p.game_id: 0 for p in plans}
    live = [p for p in plans if p.batches]
    while live:
        plan = rng.choice(live)
        i = cursors[plan.game_id]
        append_batch(store, plan, i, versions)
        cursors[plan.game_id] = i + 1
        if i + 1 == len(plan.batches):
            live.remove(plan)


def append_batch(store: RedisEventStore, plan: GamePlan, i: int, versions: dict[str, int]) -> None:
    batch = plan.batches[i]
    if not batch:
        return
    result = store.append(plan.game_id, versions[plan.game_id], batch, f"{plan.game_id}/cmd{i}")
    versions[plan.game_id] = result.version
