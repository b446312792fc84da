"""Matchmaking (issue 20): registered players seek a table and are paired into a game.

A seek names the table (players 3-6, a rules preset, a time control), optionally the opponents'
ratings it accepts (conservative ratings, mu - 3 sigma; unrated players count as 0) and
"fill with bots after N seconds". Seeks wait in a pool per kind of table
(``service/store/seeks.py``). When a seek arrives, and at every sweep, a table is looked for
around a seek among those that fit it, read from the pool's rating indexes (a bounded number,
never the pool's oldest end: issue 32), each group mutually acceptable, no player twice, and is
claimed at once by one script that ends its seeks only if every one is still waiting: two
workers grouping the same seekers seat each of them once.

A claim is then carried out: the game is created under an id that follows from the claim
(so carrying it out again creates nothing twice), with the seats dealt out in a random order
(fair seating: nobody chooses where they sit), and each player sits in its seat with its
player id in that same first append: no seat of a matched game is ever open to a stranger. A
crash before it leaves a claim that the next look at one of its seeks finishes. The
players then take their seat's token with ``POST /games/{id}/seats/{seat}/resume`` (their key),
or follow their own stream (``GET /players/me/events``).

A seek ends after ``ttl`` seconds (expired) unless it is paired, filled with bots, or cancelled.
Time is an input: the sweep takes ``now``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bots.levels import DEFAULT_LEVEL
from domain.errors import GameFull, SeatTaken
from domain.rules import PRESETS, TIME_CONTROLS, RuleOptions
from service.app.deal_plan import DealPlan
from service.app.errors import (
    AlreadySeeking,
    GameAlreadyExists,
    InvalidSeek,
    SeekNotFound,
    TooManySeeks,
)
from service.app.game_service import GameService, game_id_for_key
from service.app.players import Player, PlayerService
from service.store.outage import Outage, unreachable
from service.store.seeks import Seek, SeekStore, pool_of

log = logging.getLogger(__name__)

# A matched game is rated, and a rated game always has a clock (issue 32): without one a losing
# player could leave it waiting forever. A seek's default, and "off" is refused.
SEEK_CLOCK = "relaxed"
# The bot that fills a table no person came to: the level a person's table offers first
# (bots/levels.py, the one place), so a matched person meets the bots the lobby offers.
FILL_BOT = DEFAULT_LEVEL
UNRATED = 0.0  # an unrated player's conservative rating (OpenSkill's default mu - 3 sigma)


@dataclass(frozen=True, slots=True)
class SeekRequest:
    players: int = 4
    preset: str = "standard"
    time_control: str = SEEK_CLOCK
    fill_after: float | None = None  # seconds
    rating_range: tuple[float, float] | None = None

    @property
    def pool(self) -> str:
        return pool_of(self.players, self.preset, self.time_control)

    def rules(self) -> dict[str, object]:
        return {"preset": self.preset, "players": self.players, "time_control": self.time_control}


def rules_of(pool: str) -> dict[str, object]:
    players, preset, time_control = pool.split("-")
    return SeekRequest(int(players), preset, time_control).rules()


def accepts(seek: Seek, other: Seek) -> bool:
    """Whether ``seek`` accepts ``other`` at its table (by its rating range)."""
    low = -math.inf if seek.low is None else seek.low
    high = math.inf if seek.high is None else seek.high
    return low <= other.rating <= high


def mutual(group: Sequence[Seek], other: Seek) -> bool:
    """Whether ``other`` may join ``group``: no player twice, each accepting the other."""
    if any(g.player_id == other.player_id or g.id == other.id for g in group):
        return False
    return all(accepts(g, other) and accepts(other, g) for g in group)


class Matchmaker:
    def __init__(
        self,
        seeks: SeekStore,
        games: GameService,
        players: PlayerService,
        rating: Callable[[str], float | None],
        *,
        ttl_seconds: int = 600,
        per_address: int = 8,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.seeks = seeks
        self.games = games
        self.players = players
        self.rating = rating
        self.ttl_seconds = ttl_seconds
        self.per_address = per_address  # waiting seeks per client address (its rate-limit key)
        self.now = now

    # -- a player's seeks ---------------------------------------------------------------------

    def post(self, player: Player, request: SeekRequest, address: str = "") -> Seek:
        """Wait for a table as ``request`` says; paired at once if the pool allows.
        ``address``: the client's (its rate-limit key); so many seeks from one at a time."""
        self._check(request)
        rating = self.rating(player.player_id)
        now = self.now()
        if address and self.seeks.from_address(address, now) >= self.per_address:
            raise TooManySeeks(
                f"{self.per_address} seeks from your address wait already: "
                "wait for one, or cancel it"
            )
        low, high = request.rating_range or (None, None)
        seek = Seek(
            id=f"sk_{request.pool}_{secrets.token_hex(10)}",
            pool=request.pool,
            player_id=player.player_id,
            name=player.name,
            rating=UNRATED if rating is None else rating,
            low=low,
            high=high,
            fill_after=request.fill_after,
            posted=now,
            expires=now + self.ttl_seconds,
            address=address,
        )
        if not self.seeks.add(seek, self.ttl_seconds):
            raise AlreadySeeking(f"you already seek a table of this kind ({request.pool})")
        self.match_around(seek)
        return self.seeks.get(seek.id) or seek

    def status(self, player: Player, seek_id: str) -> Seek:
        """The player's seek as it is now (a pairing left half done by a crash is finished)."""
        seek = self._own(player, seek_id)
        if seek.state == "matched" and seek.claim is not None:
            self._carry_out_or_later(seek.pool, seek.claim)
        return seek

    def waiting(self, player: Player) -> list[Seek]:
        """The player's seeks still waiting, oldest first: a page reloaded, or a client
        restarted, finds what it sought (and can cancel it) without having kept its id."""
        return self.seeks.of_player(player.player_id)

    def cancel(self, player: Player, seek_id: str) -> Seek:
        """Stop waiting (a seek already paired stays paired)."""
        seek = self._own(player, seek_id)
        self.seeks.end(seek.pool, [seek], "cancelled")
        return self._own(player, seek_id)

    # -- pairing ------------------------------------------------------------------------------

    def match_around(self, anchor: Seek) -> str | None:
        """A table for ``anchor`` among the seeks that fit it (read from the pool's rating
        indexes, a bounded number: never the pool's oldest end); the game, if one started.

        A table that became possible when a seek arrived has that seek in it, so a look around
        each new seek pairs everyone who can be paired; the sweep looks again around seeks
        drawn at random (a look lost to a crash or a race)."""
        size = int(anchor.pool.split("-")[0])
        for _ in range(5):  # a group lost to another worker: look again
            group = [anchor]
            for other in self.seeks.candidates(anchor):
                if len(group) == size:
                    break
                if mutual(group, other):
                    group.append(other)
            if len(group) < size:
                return None
            game_id = self._claim(anchor.pool, group, [])
            if game_id is not None:
                return game_id
            current = self.seeks.get(anchor.id)
            if current is None or current.state != "waiting":
                return None  # the anchor itself went (paired by the other worker)
        return None

    def match(self, pool: str) -> list[str]:
        """Look for tables around a bounded number of the pool's seeks, drawn at random."""
        started: list[str] = []
        for anchor in self.seeks.anchors(pool):
            current = self.seeks.get(anchor.id)
            if current is None or current.state != "waiting":
                continue  # seated by a look around an earlier anchor
            game_id = self.match_around(current)
            if game_id is not None:
                started.append(game_id)
        return started

    def sweep(self, now: float | None = None) -> dict[str, int]:
        """Every pool: pair, fill with bots the seeks whose time has come, expire the old ones.
        Each task reads a bounded number of seeks per pool, whatever the pool holds."""
        now = self.now() if now is None else now
        done = {"paired": 0, "filled": 0, "expired": 0}
        for pool in self.seeks.pools():
            done["paired"] += len(self.match(pool))
            for seek in self.seeks.expired(pool, now, self.ttl_seconds):
                done["expired"] += self.seeks.end(pool, [seek], "expired")
            for seek in self.seeks.due(pool, now):
                done["filled"] += self._fill(pool, seek) is not None
        return done

    def _fill(self, pool: str, anchor: Seek) -> str | None:
        """A table for ``anchor`` and whoever else waits and fits, bots in the other seats."""
        size = int(pool.split("-")[0])
        group = [anchor]
        for other in self.seeks.candidates(anchor):
            if len(group) == size - 1:
                break
            if mutual(group, other):
                group.append(other)
        return self._claim(pool, group, [FILL_BOT] * (size - len(group)))

    def _claim(self, pool: str, group: list[Seek], bots: list[str | None]) -> str | None:
        """Claim ``group`` (and seat ``bots`` beside it); the game, or None if lost."""
        claim = secrets.token_hex(12)
        game_id = game_id_for_key(f"match:{claim}")
        # Fair seating: the claim's random id shuffles who sits where.
        order: list[Seek | str | None] = [*group, *bots]
        random.Random(claim).shuffle(order)
        seats = {s.id: i for i, s in enumerate(order) if isinstance(s, Seek)}
        plan = [
            (s.player_id, s.name) if isinstance(s, Seek) else s for s in order
        ]  # per seat: a player, or a bot's name
        self.seeks.save_claim(pool, claim, game_id, plan, self.ttl_seconds)
        if not self.seeks.end(
            pool, group, "matched", claim=claim, game_id=game_id, seats=[seats[s.id] for s in group]
        ):
            return None
        self._carry_out_or_later(pool, claim)
        return game_id

    def _carry_out_or_later(self, pool: str, claim: str) -> None:
        """Carry the claim out now if possible; if not (Redis refusing writes, say), the seeks
        stay matched to its game and the next look at one of them (its status, the sweep)
        carries it out: nothing a seeker did wrong, so nothing to answer the seeker with."""
        try:
            self._carry_out(pool, claim)
        except Exception as error:
            if unreachable(error):  # the sweep says so once; the claim waits for Redis
                log.warning("claim %s of pool %s: carried out later (%s)", claim, pool, error)
            else:
                log.exception("claim %s of pool %s: carried out later", claim, pool)

    def _carry_out(self, pool: str, claim: str) -> None:
        """Create the claim's game with its players in their seats, in one append (again:
        nothing twice). Never a game with a matched seat open: a stranger could take it."""
        found = self.seeks.claim(pool, claim)
        if found is None:
            return
        game_id, plan = found
        seats = [None if isinstance(p, list) else p for p in plan]
        players = {seat: (p[0], p[1]) for seat, p in enumerate(plan) if isinstance(p, list)}
        if self.games.cache.get(game_id).version:  # created by an earlier look
            self._finish_open_seats(game_id, players)
            return
        for player_id, _ in players.values():
            self.players.accounts.add_game(player_id, game_id)
        with contextlib.suppress(GameAlreadyExists):  # created meanwhile by another look
            self.games.create(
                game_id,
                rules=rules_of(pool),
                seats=seats,
                plan=DealPlan(),
                idempotency=None,
                players=players,
            )

    def _finish_open_seats(self, game_id: str, players: dict[int, tuple[str, str]]) -> None:
        """A claim half carried out before seats were bound in the first append (its game
        created with the seats open, a crash before every join) is finished as it was begun;
        a game created since has none of its matched seats open."""
        state = self.games.snapshot(game_id).state.state
        for seat, (player_id, name) in players.items():
            if state.seats[seat].is_open:
                self.players.accounts.add_game(player_id, game_id)
                with contextlib.suppress(SeatTaken, GameFull):  # taken meanwhile
                    self.games.join(
                        game_id, name=name, seat=seat, idempotency=None, player_id=player_id
                    )

    # -- checks -------------------------------------------------------------------------------

    def _check(self, request: SeekRequest) -> None:
        if request.preset not in PRESETS:
            raise InvalidSeek(f"unknown preset {request.preset!r}; one of {sorted(PRESETS)}")
        if request.time_control not in TIME_CONTROLS:
            raise InvalidSeek(
                f"unknown time control {request.time_control!r}; one of {sorted(TIME_CONTROLS)}"
            )
        if not TIME_CONTROLS[request.time_control][0]:
            clocks = sorted(name for name, (per, _) in TIME_CONTROLS.items() if per)
            raise InvalidSeek(
                "a matched game is rated, and a rated game has a clock: not "
                f"{request.time_control!r}; one of {clocks}"
            )
        RuleOptions.from_dict(request.rules())  # InvalidRules for a table that makes no sense
        if request.rating_range is not None and request.rating_range[0] > request.rating_range[1]:
            raise InvalidSeek("a rating range runs from its lower bound to its upper")

    def _own(self, player: Player, seek_id: str) -> Seek:
        seek = self.seeks.get(seek_id)
        if seek is None or seek.player_id != player.player_id:
            raise SeekNotFound(seek_id)  # another's seek is not to be told apart from none
        return seek


def start_seek_sweeper(matchmaker: Matchmaker, interval: float = 1.0) -> threading.Event:
    """Sweep the pools every ``interval`` seconds in a daemon thread; set the event to stop."""
    stop = threading.Event()

    def run() -> None:
        outage = Outage(log, "seek sweep")
        while not stop.wait(interval):
            try:
                matchmaker.sweep()
                outage.ok()
            except Exception as error:
                outage.failed(error, f"; trying again every {interval:.1f} s")

    threading.Thread(target=run, name="hearts-seeks", daemon=True).start()
    return stop
