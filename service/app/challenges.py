"""Challenges (issue 44): a registered player offers a game to another, named; the other
accepts or declines, the challenger may cancel, and an unanswered one expires.

Accepting creates a private game (unlisted, ``service/store/invitations.py``) in one append with
both players seated, in seats dealt at random when the challenge was made (nobody picks), and
bots in the other seats. Its id follows from the challenge's, so creating it again creates
nothing twice: a crash between the answer and the game leaves an accepted challenge whose game
the next read by either player creates. Tokens: the acceptor gets its seat's token in the
answer; the challenger takes its own with ``POST /games/{id}/seats/{seat}/resume`` (its key),
as a matched seeker does: no token is ever stored, so none can leak from a read.

Notices: a challenge sent is told to the challenged player's own stream (``challenge``), and
an answer (accepted, declined, cancelled) to both players' (``challengeAnswered``), through
``notify`` (``PlayerEvents.add``: service/store/player_events.py), so a web page or a client
listening on ``GET /players/me/events`` hears of it at once. A notice is a pointer: the
challenge itself is read with ``GET /challenges``. A notice lost (Redis failing after the
answer) fails nothing; an expiry is told by no notice (a reader judges ``expires``).

Time is an input (``now``): the expiry is judged against it, and Redis forgets the record
``KEEP_SECONDS`` after the expiry (service/store/challenges.py).
"""

from __future__ import annotations

import contextlib
import logging
import random
import secrets
import time
from collections.abc import Callable
from typing import Any

from bots import bot_names
from bots.levels import DEFAULT_LEVEL
from domain.clock import iso
from domain.names import name_key
from domain.rules import RuleOptions
from service.app import auth
from service.app.deal_plan import DealPlan
from service.app.errors import (
    ChallengeAnswered,
    ChallengedPlayerNotFound,
    ChallengeExpired,
    ChallengeNotFound,
    ChallengeNotYours,
    GameAlreadyExists,
    InvalidChallenge,
    TooManyChallenges,
)
from service.app.game_service import GameService, game_id_for_key
from service.app.players import Player, PlayerService
from service.store.challenges import Challenge, ChallengeStore

log = logging.getLogger(__name__)

CHALLENGE, CHALLENGE_ANSWERED = "challenge", "challengeAnswered"  # the players' notices
Notices = list[tuple[str, str, dict[str, Any]]]  # (player id, type, data), as PlayerEvents.add

# The bot in the seats no challenged person takes: a person's table's level (bots/levels.py).
FILL_BOT = DEFAULT_LEVEL
LISTED = 100  # the most challenges one read lists


class Challenges:
    def __init__(
        self,
        store: ChallengeStore,
        games: GameService,
        players: PlayerService,
        *,
        ttl_seconds: int = 600,
        open_per_player: int = 5,
        now: Callable[[], float] | None = None,
        notify: Callable[[Notices], None] | None = None,
    ) -> None:
        self.store = store
        self.games = games
        self.players = players
        self.ttl_seconds = ttl_seconds
        self.open_per_player = open_per_player
        # Looked up at each call (not bound now): a clock swapped in later is the one used.
        self.now = now or (lambda: time.time())
        self.notify = notify

    def create(self, challenger: Player, to: str, rules: dict[str, Any] | None) -> Challenge:
        """Challenge the registered player named ``to`` to a game of ``rules``."""
        options = RuleOptions.from_dict(rules)  # InvalidRules for a table that makes no sense
        if to in bot_names():
            raise InvalidChallenge(f"{to!r} is a bot, not a player: create a game with it")
        holder = self.players.accounts.holder_of(name_key(to))
        stored = self.players.accounts.get(holder) if holder is not None else None
        if stored is None:
            raise ChallengedPlayerNotFound(f"no registered player is named {to!r}")
        if stored.player_id == challenger.player_id:
            raise InvalidChallenge("a challenge is to another player, not to yourself")
        # The two players' seats, dealt at random now (from the random id, as matchmaking
        # shuffles by its claim's): neither chooses where it sits.
        challenge_id = f"ch_{secrets.token_hex(12)}"
        seats: list[str | None] = [FILL_BOT] * options.players
        for player_id, seat in zip(
            (challenger.player_id, stored.player_id),
            random.Random(challenge_id).sample(range(options.players), 2),
            strict=True,
        ):
            seats[seat] = player_id
        now = self.now()
        challenge = Challenge(
            id=challenge_id,
            challenger_id=challenger.player_id,
            challenger=challenger.name,
            challenged_id=stored.player_id,
            challenged=stored.name,
            rules=dict(rules or {}),
            seats=tuple(seats),
            created=now,
            expires=now + self.ttl_seconds,
        )
        if not self.store.add(challenge, self.open_per_player, now):
            raise TooManyChallenges(
                f"{self.open_per_player} of your challenges wait for an answer already: "
                "cancel one, or wait"
            )
        notice = {
            "challenge_id": challenge.id,
            "challenger": challenge.challenger,
            "expires": iso(challenge.expires),
        }
        self._tell([(challenge.challenged_id, CHALLENGE, notice)])
        return challenge

    def of_player(self, player: Player) -> list[Challenge]:
        return self.store.of_player(player.player_id, self.now(), LISTED)

    def get(self, player: Player, challenge_id: str) -> Challenge:
        """A challenge to or from ``player``; an accepted one's game exists once this returns."""
        challenge = self._party(player, challenge_id)
        if challenge.state == "accepted":
            self._create_game(challenge)
        return challenge

    def accept(self, player: Player, challenge_id: str) -> Challenge:
        """The challenged player accepts: the game is created, both of them seated."""
        challenge = self._answer(player, challenge_id, "accepted", by_challenger=False)
        self._create_game(challenge)
        return challenge

    def decline(self, player: Player, challenge_id: str) -> Challenge:
        return self._answer(player, challenge_id, "declined", by_challenger=False)

    def cancel(self, player: Player, challenge_id: str) -> Challenge:
        return self._answer(player, challenge_id, "cancelled", by_challenger=True)

    def state_of(self, challenge: Challenge) -> str:
        return challenge.state_at(self.now())

    # -- the rest -----------------------------------------------------------------------------

    def _party(self, player: Player, challenge_id: str) -> Challenge:
        challenge = self.store.get(challenge_id) if challenge_id.startswith("ch_") else None
        if challenge is None or player.player_id not in (
            challenge.challenger_id,
            challenge.challenged_id,
        ):
            raise ChallengeNotFound(challenge_id)
        return challenge

    def _answer(
        self, player: Player, challenge_id: str, state: str, *, by_challenger: bool
    ) -> Challenge:
        challenge = self._party(player, challenge_id)
        answerer = challenge.challenger_id if by_challenger else challenge.challenged_id
        if player.player_id != answerer:
            who = "its challenger" if by_challenger else "the challenged player"
            raise ChallengeNotYours(f"only {who} may do this to challenge {challenge_id!r}")
        game_id = game_id_for_key(f"challenge:{challenge.id}") if state == "accepted" else None
        ended = self.store.end(challenge, state, self.now(), game_id)
        if ended == "expired":
            raise ChallengeExpired(f"challenge {challenge_id!r} expired unanswered")
        if ended == "missing":
            raise ChallengeNotFound(challenge_id)
        if ended != "ok":
            raise ChallengeAnswered(f"challenge {challenge_id!r} was {ended} already")
        answered = self._party(player, challenge_id)
        notice = {
            "challenge_id": answered.id,
            "challenger": answered.challenger,  # so each reader knows whether it sent it
            "state": state,
            "game_id": answered.game_id,
        }
        self._tell(
            [
                (who, CHALLENGE_ANSWERED, notice)
                for who in (answered.challenger_id, answered.challenged_id)
            ]
        )
        return answered

    def _tell(self, notices: Notices) -> None:
        """The players' notices (never fails the call: the challenge is the truth)."""
        if self.notify is None:
            return
        try:
            self.notify(notices)
        except Exception:
            log.exception("challenge notices not sent: %s", [kind for _, kind, _ in notices])

    def _create_game(self, challenge: Challenge) -> None:
        """The accepted challenge's private game, both players seated in the first append
        (again: nothing twice)."""
        game_id = challenge.game_id
        if game_id is None or self.games.cache.get(game_id).version:
            return
        names = {challenge.challenger_id: challenge.challenger}
        names[challenge.challenged_id] = challenge.challenged
        players = {
            seat: (who, names[who]) for seat, who in enumerate(challenge.seats) if who in names
        }
        bots = [None if who in names else who for who in challenge.seats]
        for player_id, _ in players.values():
            self.players.accounts.add_game(player_id, game_id)
        with contextlib.suppress(GameAlreadyExists):  # created meanwhile by another read
            self.games.create(
                game_id,
                rules=challenge.rules,
                seats=bots,
                plan=DealPlan(),
                idempotency=None,
                players=players,
                # Unlisted: nobody else has a seat to take; the code is thrown away.
                join_code=auth.join_code(game_id, None),
            )
