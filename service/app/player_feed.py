"""One stream per player (issue 20): what concerns a registered player across all its games.

Three notices, each naming the game, the player's seat and the game's version:

- ``gameStart``: a game the player sits in was dealt its first hand (a seek was paired, or the
  last seat of a game it joined was taken);
- ``yourTurn``: a decision of the player's seat began (its pass, a play, the moon choice);
- ``gameFinish``: the game ended (with the winners and the totals).

The game service calls :meth:`PlayerFeed.appended` after every append; the notices go to the
players' streams (``service/store/player_events.py``). A reader that (re)connects first gets
``snapshot``: the games in play and the turns waiting on the player now, so a notice lost by a
crash between an append and its notice is never lost to a player that is listening.
"""

from __future__ import annotations

import logging
from typing import Any

from domain.state import GameState, Phase
from domain.views import awaiting
from service.app.players import Player, PlayerService
from service.store.player_events import PlayerEvents

log = logging.getLogger(__name__)

GAME_START, YOUR_TURN, GAME_FINISH = "gameStart", "yourTurn", "gameFinish"
NOT_STARTED = (Phase.NEW, Phase.WAITING, Phase.EXPIRED)


def decision(state: GameState, seat: int) -> tuple[Any, ...] | None:
    """What identifies the seat's pending decision (None: none): the hand, the phase, and in
    play the cards played so far, so the same decision is announced once."""
    hand = state.hand
    if hand is None or seat not in awaiting(state):
        return None
    played = len(hand.tricks) * state.players + len(hand.trick)
    return (hand.number, state.phase, played if state.phase is Phase.PLAYING else 0)


def notices(
    game_id: str, version: int, before: GameState, after: GameState
) -> list[tuple[str, str, dict[str, Any]]]:
    """The notices an append taking the game from ``before`` to ``after`` (at ``version``)
    owes the registered players seated in it: ``(player id, type, data)``."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for seat, info in enumerate(after.seats):
        player_id = info.player_id
        if player_id is None:
            continue
        base = {"game_id": game_id, "seat": seat, "version": version}
        if before.phase in NOT_STARTED and after.phase not in NOT_STARTED:
            out.append((player_id, GAME_START, base))
        if after.phase is Phase.FINISHED and before.phase is not Phase.FINISHED:
            scores = {
                "winners": list(after.winners),
                "totals": list(after.scores),
                "abandoned_by": after.abandoned_by,  # the seat that left, if one did
            }
            out.append((player_id, GAME_FINISH, {**base, **scores}))
        elif info.bot is None:
            now = decision(after, seat)
            if now is not None and now != decision(before, seat):
                out.append((player_id, YOUR_TURN, base))
    return out


class PlayerFeed:
    def __init__(self, events: PlayerEvents, players: PlayerService) -> None:
        self.events = events
        self.players = players

    def appended(self, game_id: str, version: int, before: GameState, after: GameState) -> None:
        """Notify the players of a game an append changed (never fails the append)."""
        if not any(seat.player_id for seat in after.seats):
            return
        try:
            self.events.add(notices(game_id, version, before, after))
        except Exception:  # a notice lost is made good by a reader's snapshot
            log.exception("game %s: players' notices not sent", game_id)

    def snapshot(self, player: Player, limit: int = 50) -> list[tuple[str, dict[str, Any]]]:
        """The player's games in play now, and the decisions waiting on it."""
        out: list[tuple[str, dict[str, Any]]] = []
        for game in self.players.my_games(player, limit):
            state = game.state
            if state.phase in NOT_STARTED or state.phase is Phase.FINISHED:
                continue
            base = {"game_id": state.game_id, "seat": game.seat, "version": game.snap.version}
            out.append((GAME_START, base))
            if game.seat in awaiting(state) and state.seats[game.seat].bot is None:
                out.append((YOUR_TURN, base))
        return out
