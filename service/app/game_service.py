"""The application service: load a game, decide a command, append its events, let bots play.

Loading folds the game's stream through a ``StateCache`` that always reads the events after the
cached version, so a state is never served stale. A command is decided against the state just
loaded and appended with that version as the expected one; if another append got there first
(``ConcurrencyConflict``) the game is loaded and the command decided again, a bounded number of
times. Whenever the game reaches the DEALING phase, the service adds the deal to the same append
(the domain has no randomness). After each command, bots play a few moves within a small budget
(none after a create) and the game is handed over to the background runner for the rest
(``service/app/bot_runner.py``): a request never plays a whole game of bots.

Idempotency: a request with an ``Idempotency-Key`` stores a receipt in the same atomic append as
its events (the store's idempotency record, kept ``idempotency_ttl`` seconds). A retry with the
same key and body finds the receipt and rebuilds the first response from the log, appending
nothing; another body under the same key is refused (``IdempotencyKeyReused``).

A write is three steps (``_execute``): the idempotency guard (an earlier identical request answers
again), the retry-on-conflict loop (decide on the game, append at its version, again if another
append won), and the post-append step (bots play within the request's budget, the game is handed
over if bots must play on, the response's events are gathered). Refusals
are the application's exceptions (service/app/errors.py) or the domain's RuleViolation; only
the HTTP layer turns them into problems.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bots import bot_names, get_bot
from domain.cards import Card
from domain.clock import iso, moment, next_deadline
from domain.commands import Command, CreateGame, Deal, JoinGame
from domain.dealing import check_explicit_deal
from domain.decider import decide, fold
from domain.errors import RuleViolation
from domain.events import PlayerJoined
from domain.names import name_key, resembles, same_name
from domain.rules import RuleOptions
from domain.state import GameState, Phase
from service import metrics
from service.app import auth, game_log
from service.app.bot_runner import BackgroundBots, BotRunner, bots_only
from service.app.deal_plan import DealPlan, Hands, SeedCommitted, fresh_salt, plan_event
from service.app.errors import (
    BotGamesFull,
    CorruptGame,
    GameAlreadyExists,
    GameNotFound,
    GuessableIdempotencyKey,
    GuessableSeed,
    IdempotencyKeyReused,
    InvalidCursor,
    InvalidDeal,
    JoinCodeInvalid,
    NameReserved,
    ReceiptUnreadable,
    StaleVersion,
    TooManyConflicts,
    WritesUnavailable,
)
from service.app.game import StoredGame, fold_records, game_cache, new_event
from service.app.state_cache import Snapshot, StateCache
from service.store.append import AppendResult, IdempotencyRecord
from service.store.bot_games import BotGames
from service.store.bot_queue import BotQueue
from service.store.envelope import NewEvent, RecordedEvent
from service.store.errors import ChainMismatch, ConcurrencyConflict, CorruptStore, WritesRefused
from service.store.event_store import RedisEventStore
from service.store.invitations import Invitations

log = logging.getLogger(__name__)

_OVER = (Phase.FINISHED, Phase.EXPIRED)  # a game in either is played no more


# -- requests and outcomes ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Idempotency:
    """An Idempotency-Key as the service uses it: the key, a hashed scope and a fingerprint."""

    key: str
    scope: str
    fingerprint: str


def idempotency_for(
    key: str, game_id: str, actor: str, method: str, path: str, body: bytes
) -> Idempotency:
    """Scope: game + key + who asks (a token's hash, or "anonymous"); fingerprint: the request."""
    scope = hashlib.sha256(f"{game_id}\0{key}\0{actor}".encode()).hexdigest()
    digest = hashlib.sha256(f"{method.upper()}\0{path}\0".encode() + body).hexdigest()
    return Idempotency(key, scope, digest)


def game_id_for_key(key: str) -> str:
    """The id a game created with this Idempotency-Key gets, so a retry finds its record."""
    return "g" + hashlib.sha256(f"create\0{key}".encode()).hexdigest()[:20]


def new_game_id() -> str:
    return "g" + secrets.token_hex(10)


# The form of every id the service gives a game (new_game_id, game_id_for_key): the web table
# opens only these, so a tool that names a new game's id must keep to it.
GAME_ID = re.compile(r"g[0-9a-f]{20}")


def is_game_id(value: str) -> bool:
    return GAME_ID.fullmatch(value) is not None


@dataclass(frozen=True)
class Outcome:
    """What a request did: the game at ``version``, and the events from its command up to
    ``version`` in order (its own, the deal, the bots' moves, and anything appended between)."""

    game_id: str
    version: int
    table: StoredGame
    events: tuple[RecordedEvent, ...]
    hand_before: int  # the hand number current before the first of ``events``
    seat: int | None = None
    token: str | None = None
    replayed: bool = False

    @property
    def state(self) -> GameState:
        return self.table.state


@dataclass(frozen=True, slots=True)
class Decided:
    """A command decided on a game: the records to append, the game after them, and the seat
    that acted (for a join: the seat taken)."""

    records: list[NewEvent]
    table: StoredGame
    seat: int | None
    # Decided on a cached game that may be behind: losing its race is no conflict with another
    # command, so it is not counted as one.
    maybe_behind: bool = False


# Decides a request's command on the game as an attempt found it (raises RuleViolation, or
# returns None to go on to the next attempt: the game it was given may be behind).
Decider = Callable[[Snapshot[StoredGame]], Decided | None]


@dataclass(frozen=True, slots=True)
class Appended:
    """One attempt that won: the game it decided on, the append, and the game just after it."""

    before: Snapshot[StoredGame]
    result: AppendResult
    after: Snapshot[StoredGame]
    seat: int | None


# -- the service --------------------------------------------------------------------------------


# Names nobody may take: GET /players/{name} (a player's figures) could not name them, as
# /players/me is the calling player's own account.
RESERVED_NAMES = ("me",)


class GameService:
    def __init__(
        self,
        store: RedisEventStore,
        *,
        conflict_retries: int = 8,
        idempotency_ttl: int = 24 * 60 * 60,
        bot_moves_per_request: int = 8,
        bot_request_ms: float = 25.0,
        bot_lease_seconds: float = 10.0,
        bot_poll_seconds: float = 1.0,
        bot_away_pace: float = 2.0,
        bot_think: float = 0.0,
        cache_games: int = 1024,
        fresh_seed: Callable[[], str] = lambda: secrets.token_hex(16),
        fresh_salt: Callable[[], str] = fresh_salt,
        max_bot_games: int = 0,
        bot_game_seconds: float = 1800.0,
    ) -> None:
        self.store = store
        self.invitations = Invitations(store)  # private tables: unlisted, joined by a code
        # Games with no person seated, in play at once (0: no cap), each counted at most this
        # long (service/store/bot_games.py: what a crash leaves behind drops out).
        self.max_bot_games = max_bot_games
        self.bot_game_ms = int(bot_game_seconds * 1000)
        self.bot_games = BotGames(store.redis, store.prefix)
        self.retries = conflict_retries
        self.idempotency_ttl = idempotency_ttl
        self.bot_moves_per_request = bot_moves_per_request
        self.bot_request_seconds = bot_request_ms / 1000
        self.fresh_seed = fresh_seed
        self.fresh_salt = fresh_salt
        self.cache: StateCache[StoredGame] = game_cache(store, max_games=cache_games)
        # The bot moves a request makes itself (its budget), and the background runner that
        # makes the rest (its thread is started by create_app, if at all). A request gives way
        # at its first conflict: another writer has the game (a person, or the background
        # runner), and the moves after it are that writer's. So a response reports one unbroken
        # run of its own command's events, which is what an idempotent replay rebuilds from the
        # log (outcome_of); playing on past the conflict, a response held the other writer's
        # events and its replay did not.
        self.bots = BotRunner(
            self.cache.get,
            self.append_decided,
            conflict_limit=0,
            moves_per_run=bot_moves_per_request,
        )
        self.background = BackgroundBots(
            BotRunner(
                self.cache.get,
                self.append_decided,
                conflict_limit=conflict_retries * 4,
                moves_per_run=1_000_000,  # bounded by the turn's time instead
            ),
            BotQueue(store.redis, store.prefix),
            lease_seconds=bot_lease_seconds,
            poll_seconds=bot_poll_seconds,
            away_pace_seconds=bot_away_pace,
            think_seconds=bot_think,
        )
        self._handed_over: dict[str, float] = {}  # game -> when this process last handed it
        # Called after every append with (game id, version, state before, state after).
        self.on_appended: list[Callable[[str, int, GameState, GameState], None]] = []
        # Games whose cost a budget of their own bounds (a tournament's tables: its creation is
        # limited per account, its size by its rules): a hand-over to bots there is neither
        # counted among the stranger's games of bots only nor paced (issue 42 vs issue 40).
        self.budgeted_elsewhere: Callable[[str], bool] = lambda _game_id: False

    # -- reading --------------------------------------------------------------------------

    def cached(self, game_id: str) -> Snapshot[StoredGame] | None:
        """The game as this process last saw it, without asking Redis: it may be behind.

        Only to decide a command that is then appended with this version expected (the append
        checks it), or to find a seat's token: a seat's credential changes only by a resume
        (``SeatResumed``), so a token found here is trusted only if that append wins, and
        ``command`` checks it again on the game as it is otherwise.
        """
        return self.cache.peek(game_id)

    def snapshot(self, game_id: str) -> Snapshot[StoredGame]:
        """The game at its current version; GameNotFound if there is no such game."""
        snap = self.cache.get(game_id)
        if snap.version == 0:
            raise GameNotFound(game_id)
        return snap

    def load(self, game_id: str, *, carry_on: bool = True) -> Snapshot[StoredGame]:
        """The game now; if a bot must act, the game is handed over to the background runner
        (again: a crash may have lost it), and the bots play after this answer."""
        snap = self.snapshot(game_id)
        if carry_on and self.bots.must_act(snap.state.state):
            self.hand_over(game_id, again=True)
        return snap

    def hand_over(self, game_id: str, *, again: bool = False, delay: float = 0.0) -> None:
        """Queue the game for the background runner (due in ``delay`` seconds). ``again``: a
        reader found it waiting on a bot; once per poll interval per process is enough (the
        queue keeps it meanwhile)."""
        now = time.monotonic()
        if again:
            last = self._handed_over.get(game_id)
            if last is not None and now - last < self.background.poll_seconds:
                return
            if len(self._handed_over) > 10_000:
                self._handed_over.clear()
        self._handed_over[game_id] = now
        self.background.hand_over(game_id, delay)

    def seat_of_token(self, snap: Snapshot[StoredGame], token: str | None) -> int:
        if token is None:
            raise auth.Unauthorized("this request needs 'Authorization: Bearer <token>'")
        seat = auth.seat_of(snap.state.state.seats, token)
        if seat is None:
            raise auth.Unauthorized("the token is not valid for any seat of this game")
        return seat

    def list_games(
        self,
        *,
        status: str | None,
        player: str | None,
        limit: int,
        cursor: str | None,
        scan_budget: int = 500,
        arranged: bool | None = None,
        imported: bool | None = None,
        idle_after: float | None = None,
    ) -> tuple[list[Snapshot[StoredGame]], str | None, list[tuple[str, str]]]:
        """Games oldest first, filtered by phase, player name, arranged and imported; at most
        ``limit``; then the next cursor, and the games of the page that could not be read (id,
        why: a damaged archived object, a corrupt log), whatever the filters, so one damaged
        game does not hide the others (issue 42). An imported game is never listed under a
        player's name (see ``_matches``).
        ``idle_after``: leave out games in play with no event for this many seconds (no one
        moved: their players left).

        Filtering folds each listed game (from the cache); a request scans at most
        ``scan_budget`` games, so a page may hold fewer than ``limit`` games and still have a
        next cursor.
        """
        found: list[Snapshot[StoredGame]] = []
        damaged: list[tuple[str, str]] = []
        scanned = 0
        while len(found) < limit and scanned < scan_budget:
            # Never ask for more than can still be used: the store's cursor then always points
            # just after the last game looked at.
            try:
                page = self.store.list_games(cursor, limit=limit - len(found))
            except ValueError:
                raise InvalidCursor() from None
            matched: list[tuple[str, Snapshot[StoredGame]]] = []
            # Private tables are in no listing (their players have them by their links).
            hidden = self.invitations.private_among(page.game_ids)
            for game_id in page.game_ids:
                scanned += 1  # a private game counts against the budget too
                if game_id in hidden:
                    continue
                try:
                    snap = self.cache.get(game_id)
                except (CorruptGame, CorruptStore) as error:
                    damaged.append((game_id, str(error)))
                    continue
                if snap.version and _matches(snap.state, status, player, arranged, imported):
                    matched.append((game_id, snap))
            idle = self._idle([g for g, s in matched if _in_play(s.state)], idle_after)
            found += [snap for game_id, snap in matched if game_id not in idle]
            cursor = page.next_cursor
            if cursor is None:
                break
        return found, cursor, damaged

    def _idle(self, game_ids: list[str], idle_after: float | None) -> set[str]:
        """Those of ``game_ids`` whose last event is older than ``idle_after`` seconds."""
        if idle_after is None or not game_ids:
            return set()
        now = moment(self.store.now())
        last = self.store.last_appended(game_ids)
        return {game_id for game_id, at in last.items() if now - moment(at) > idle_after}

    def outcome_of(self, game_id: str, receipt: dict[str, Any], key: str) -> Outcome:
        """Rebuild the response of an earlier request from its receipt and the log, once the
        events it reports are on ``min_replicas`` replicas (else NotReplicated)."""
        start, command_id = int(receipt["from"]), str(receipt["command_id"])
        events = game_log.stored(self.store, game_id)
        end = start
        for event in events[start:]:
            if event.command_id != command_id and not event.command_id.startswith(command_id + "+"):
                break
            end = event.seq
        # Held to the same durability as the first answer (HEARTS_MIN_REPLICAS): these events,
        # read above, are on enough replicas, or NotReplicated (503) again (issue 18).
        self.store.await_replicas(game_id, end)
        before = fold_records(StoredGame(), events[:start])
        after = fold_records(before, events[start:end])
        token = None
        if receipt.get("token") is not None:
            try:
                token = auth.open_token(receipt["token"], key, receipt["scope"])
            except (auth.BrokenSeal, ValueError):  # ValueError: not even base64 or UTF-8
                raise ReceiptUnreadable() from None
        return Outcome(
            game_id,
            end,
            after,
            tuple(events[start:end]),
            before.state.hand_number,
            seat=receipt.get("seat"),
            token=token,
            replayed=True,
        )

    # -- writing --------------------------------------------------------------------------

    def create(
        self,
        game_id: str,
        *,
        rules: dict[str, Any] | None,
        seats: Sequence[str | None] | None,
        plan: DealPlan,
        idempotency: Idempotency | None,
        players: Mapping[int, tuple[str, str]] | None = None,
        join_code: str | None = None,
    ) -> Outcome:
        """Create the game; ``players`` (seat -> (player id, name)): registered players seated
        in the same append, so no moment exists at which another could take their seats (the
        matchmaker's tables: issue 32). They take their seat's token with a resume.

        ``join_code``: a private table, unlisted, whose seats are taken with this code
        (``auth.join_code``; only its hash is kept, service/store/invitations.py)."""
        for bot in seats or ():
            if bot is not None:
                get_bot(bot)  # bots.UnknownBot names the strategy the server lacks
        options = RuleOptions.from_dict(rules)
        command = CreateGame(game_id, options, tuple(seats) if seats is not None else None)
        _check_deals(options, plan)
        if plan.seed is not None and not auth.unguessable_key(plan.seed):
            raise GuessableSeed()

        def decide_create(at: Snapshot[StoredGame]) -> Decided:
            table = at.state
            events = decide(command, table.state)
            records = [new_event(e) for e in events]
            created = StoredGame(fold(events, table.state), plan)
            if not plan.empty:
                records.append(plan_event(plan))
            else:  # the first hand's seed, committed before anyone may contribute to it
                created, committed = self._commit(created, 1)
                records.append(committed)
            for seat, (player_id, name) in sorted((players or {}).items()):
                # A credential nobody holds a token for: the player resumes with its key.
                joined = decide(JoinGame(name, seat, auth.new_token()[1], player_id), created.state)
                records += [new_event(e) for e in joined]
                created = created.after(joined)
            return Decided(records, created, None)

        def lost_race() -> None:
            if idempotency is not None:
                # The key created this game earlier and its record has expired.
                raise IdempotencyKeyReused(
                    "this Idempotency-Key already created a game; use a fresh key"
                )
            raise GameAlreadyExists(game_id)

        keyed = idempotency.key if idempotency is not None else None
        if join_code is not None and keyed is not None and not auth.unguessable_key(keyed):
            # The code is derived from the key: a guessable key would give it away.
            raise GuessableIdempotencyKey()
        claimed = self._claim_bot_game(game_id, seats)
        hidden = False
        # A new game is decided once, on the empty game: losing the race means it exists.
        # Its bots (a game of bots only) play in the background, never in this request.
        try:
            # Marked private before it exists: no listing may catch it public in between.
            hidden = join_code is not None and self.invitations.claim(
                game_id, auth.credential_of(join_code)
            )
            outcome = self._execute(
                game_id,
                decide_create,
                idempotency,
                snapshots=[Snapshot(0, "", StoredGame())],
                lost_race=lost_race,
                bot_moves=False,
            )
        except BaseException:
            if claimed:  # not created: it does not count
                self.bot_games.release(game_id)
            if hidden:  # not created (or another request's game): not ours to mark
                self.invitations.release(game_id)
            raise
        if claimed and outcome.replayed and self.cache.get(game_id).state.state.phase in _OVER:
            self.bot_games.release(game_id)  # a retry of a create whose game has ended since
        return outcome

    def wait_earlier(self, game_id: str, seconds: float) -> None:
        """A waiting game's wait counts from ``seconds`` earlier: it expires that much sooner
        (an anonymous creator's: service/app/expiry.py ``anonymous_head_start``)."""
        if seconds > 0:
            self.store.wait_earlier(game_id, seconds)

    def _claim_bot_game(self, game_id: str, seats: Sequence[str | None] | None) -> bool:
        """Count a game of bots only (every seat a bot) among those in play, or BotGamesFull
        if the cap is reached; False for any other game."""
        if not self.max_bot_games or not seats or any(bot is None for bot in seats):
            return False
        claim = self.bot_games.claim(game_id, self.max_bot_games, self.bot_game_ms)
        if not claim.claimed:
            raise BotGamesFull(self.max_bot_games, _full_retry(claim.wait_ms))
        return True

    def _claim_handed_over(self, game_id: str, records: list[NewEvent]) -> bool:
        """Count a game that an append makes one of bots only; BotGamesFull if the cap is
        reached and a person asked for it (a hand-over). A turn clock's time-out is the
        service's, not a request to refuse: it counts even past the cap (its bots play at a
        person's pace, ``table_pace``)."""
        if not self.max_bot_games:
            return False
        timed_out = any(r.type == "SeatTimedOut" for r in records)
        claim = self.bot_games.claim(game_id, self.max_bot_games, self.bot_game_ms, force=timed_out)
        if not claim.claimed:
            raise BotGamesFull(self.max_bot_games, _full_retry(claim.wait_ms))
        return True

    def check_join_code(self, game_id: str, code: str | None) -> None:
        """JoinCodeInvalid unless the game is listed or ``code`` is its join code."""
        stored = self.invitations.credential(game_id)
        if stored is None:
            return
        if code is None or not self.invitations.matches(game_id, auth.credential_of(code)):
            raise JoinCodeInvalid(given=code is not None)

    def join(
        self,
        game_id: str,
        *,
        name: str,
        seat: int | None,
        idempotency: Idempotency | None,
        player_id: str | None = None,
    ) -> Outcome:
        """Take a seat as ``name``: a guest's, or (``player_id``) the registered player's whose
        key the caller presented (service/app/players.py checks both)."""
        # A guest's look-alike of one too ("rаndom", a Cyrillic а): a registered player's name
        # was checked when registered, under the rules of the day.
        like = same_name if player_id is not None else resembles
        if isinstance(name, str) and any(like(name, bot) for bot in bot_names()):
            # Statistics are kept by name, and bots appear under their strategy's name.
            raise NameReserved(f"{name.strip()!r} is a bot's name: choose another")
        if isinstance(name, str) and any(like(name, word) for word in RESERVED_NAMES):
            raise NameReserved(f"{name.strip()!r} is reserved: /players/me is one's own account")
        if idempotency is not None and not auth.unguessable_key(idempotency.key):
            # Its receipt gives the token back to whoever repeats the key and body: only an
            # unguessable key keeps that to the caller who made it.
            raise GuessableIdempotencyKey()
        token, credential = auth.new_token()

        def decide_join(at: Snapshot[StoredGame]) -> Decided:
            table = at.state
            events = decide(JoinGame(name, seat, credential, player_id), table.state)
            taken = next(e.seat for e in events if isinstance(e, PlayerJoined))
            return Decided([new_event(e) for e in events], table.after(events), taken)

        receipt: dict[str, Any] = {}
        if idempotency is not None:
            sealed = auth.seal_token(token, idempotency.key, idempotency.scope)
            receipt = {"token": sealed, "scope": idempotency.scope}
        outcome = self._execute(
            game_id,
            decide_join,
            idempotency,
            snapshots=self._attempts(game_id),
            receipt=receipt,
        )
        if outcome.replayed:
            return outcome
        return replace(outcome, token=token)

    def command(
        self,
        game_id: str,
        seat: int,
        make: Callable[[GameState], Command],
        *,
        if_match: int | None = None,
        idempotency: Idempotency | None = None,
        snap: Snapshot[StoredGame] | None = None,
        checked: bool = True,
        token: str | None = None,
    ) -> Outcome:
        """Decide ``make(state)`` for ``seat`` (already authenticated) and append it.

        ``token``: the seat token the request came with, checked again on each game an attempt
        decides on: a seat's token can be replaced (``SeatResumed``), so a token found on a
        game that was behind is only trusted if the append at that game's version wins.

        ``snap``: the game as this request already has it, to decide on first instead of
        loading it again; the append checks that it is still current. ``checked=False`` says
        it may be behind (``cached``): then a rule violation or a stale If-Match found on it is
        only reported after loading the game.
        """

        # The first attempt decides on ``snap`` if given; unchecked, it may be behind.
        maybe_behind = snap is not None and not checked

        def decide_command(at: Snapshot[StoredGame]) -> Decided | None:
            nonlocal maybe_behind
            behind, maybe_behind = maybe_behind, False
            if if_match is not None and at.version != if_match:
                if behind:
                    return None  # compare with the game as it is
                raise StaleVersion(if_match, at.version)
            table = at.state
            if token is not None and auth.seat_of(table.state.seats, token) != seat:
                raise auth.Unauthorized("the token is no longer valid for this seat")
            try:
                events = decide(make(table.state), table.state)
            except RuleViolation:
                if behind:
                    return None  # decide again on the game as it is
                raise
            return Decided([new_event(e) for e in events], table.after(events), seat, behind)

        def lost_race() -> None:
            if if_match is not None:
                raise StaleVersion(if_match, None)

        return self._execute(
            game_id,
            decide_command,
            idempotency,
            snapshots=self._attempts(game_id, snap, checked),
            lost_race=lost_race,
        )

    def append_decided(
        self,
        game_id: str,
        snap: Snapshot[StoredGame],
        records: list[NewEvent],
        table: StoredGame,
        command_id: str,
        idempotency: IdempotencyRecord | None = None,
        *,
        at: str | None = None,
    ) -> tuple[AppendResult, Snapshot[StoredGame] | None]:
        """Add the deal if the game now waits for one, append, cache the new state.

        Returns the store's result and the game just after this append (None if the
        idempotency record replayed an earlier request instead). Raises ConcurrencyConflict
        (nothing appended) if the game moved on meanwhile. ``at``: the append's time
        (default the store's now); a game's turn clock is ticked with it, and its first
        deadline goes into the store's index in the same append.
        """
        records, table = self._with_deal(records, table)
        at = at or self.store.now()
        table = table.appended(snap.state, records, at)
        # A game that becomes one of bots only by a hand-over counts as one from then on
        # (issue 42: else three bots and a guest who hands over are an uncapped game of bots).
        was, becomes = bots_only(snap.state.state), bots_only(table.state)
        claimed = (
            not was
            and becomes
            and not self.budgeted_elsewhere(game_id)
            and self._claim_handed_over(game_id, records)
        )
        result: AppendResult | None = None
        try:
            result = self.store.append(
                game_id,
                snap.version,
                records,
                command_id,
                time=at,
                idempotency=idempotency,
                prev_hash=snap.last_hash if snap.version else None,
                waiting=_waiting_change(snap.state.state.phase, table.state.phase),
                deadline=_deadline_change(snap.state, table),
                silent=_silence_change(snap.state.state, table.state),
            )
        except ChainMismatch:
            # The cached hash disagrees with Redis (rewritten by hand?): fold afresh next time.
            self.cache.forget(game_id)
            raise ConcurrencyConflict(snap.version, snap.version, game_id) from None
        except WritesRefused as exc:  # nothing written: the request may be retried as it is
            log.error("game %s: %s", game_id, exc)
            raise WritesUnavailable(exc.reason) from exc
        finally:
            if claimed and result is None:  # not appended (a conflict, Redis lost): no count
                self.bot_games.release(game_id)
        if result.replayed:
            return result, None
        metrics.events_appended(len(result.events))
        ended = table.state.phase in _OVER and snap.state.state.phase not in _OVER
        if (ended or (was and not becomes)) and self.max_bot_games:
            # A game of bots only no longer counts: it ended, or a person took a seat back.
            self.bot_games.release(game_id)
        after = Snapshot(result.version, result.events[-1].hash, table)
        self.cache.remember(game_id, after)
        for notify in self.on_appended:  # e.g. the players' own streams (player_feed.py)
            notify(game_id, result.version, snap.state.state, table.state)
        return result, after

    def _with_deal(
        self, records: list[NewEvent], table: StoredGame
    ) -> tuple[list[NewEvent], StoredGame]:
        state = table.state
        if state.phase is not Phase.DEALING:
            return records, table
        number = state.hand_number + 1
        committed = table.committed
        if table.plan.empty and committed is not None and committed.hand_number == number:
            # The seed committed before the players' contributions (issue 21).
            deal = Deal(committed.seed, salt=committed.salt)
        else:  # an arranged game, or one begun before seeds were committed ahead
            deal = table.plan.deal_for(number, self.fresh_seed, self.fresh_salt())
        events = decide(deal, state)
        table = table.after(events)
        records = records + [new_event(e) for e in events]
        if table.plan.empty:  # the next hand's seed, before any contribution to it
            table, ahead = self._commit(table, number + 1)
            records.append(ahead)
        return records, table

    def _commit(self, table: StoredGame, hand_number: int) -> tuple[StoredGame, NewEvent]:
        """A fresh seed for ``hand_number``, committed: the game holding it, and its record."""
        committed = SeedCommitted.fresh(hand_number, self.fresh_seed(), self.fresh_salt())
        return replace(table, committed=committed), committed.record()

    # -- the three steps of a write -------------------------------------------------------

    def _execute(
        self,
        game_id: str,
        decider: Decider,
        idempotency: Idempotency | None,
        *,
        snapshots: Iterable[Snapshot[StoredGame]],
        lost_race: Callable[[], None] = lambda: None,
        receipt: dict[str, Any] | None = None,
        bot_moves: bool = True,
    ) -> Outcome:
        """Guard, decide-and-append (retrying), then let bots play: see the module's docstring.

        ``snapshots``: the game each attempt decides on, at most one per attempt.
        ``lost_race``: called when an append loses to another; it raises to give up.
        ``receipt``: extra fields of the idempotency receipt (a join's sealed token).
        ``bot_moves``: False: no bot moves in this request, all in the background.
        """
        if idempotency is not None:
            earlier = self._replay(game_id, idempotency)
            if earlier is not None:
                return earlier
        command_id = uuid.uuid4().hex
        appended = self._append_retrying(
            game_id, decider, command_id, idempotency, snapshots, lost_race, receipt or {}
        )
        if isinstance(appended, Outcome):
            return appended  # an identical request's record won the append: its response
        return self._after_append(game_id, command_id, appended, bot_moves)

    def _append_retrying(
        self,
        game_id: str,
        decider: Decider,
        command_id: str,
        idempotency: Idempotency | None,
        snapshots: Iterable[Snapshot[StoredGame]],
        lost_race: Callable[[], None],
        receipt: dict[str, Any],
    ) -> Appended | Outcome:
        """Decide on each snapshot in turn and append at its version until an append wins."""
        for snap in snapshots:
            decided = decider(snap)
            if decided is None:
                continue
            record = None
            if idempotency is not None:
                record = self._receipt_record(
                    idempotency, snap.version, command_id, decided.seat, receipt
                )
            try:
                result, after = self.append_decided(
                    game_id, snap, decided.records, decided.table, command_id, record
                )
            except ConcurrencyConflict:
                if not decided.maybe_behind:
                    metrics.conflict_retried()
                lost_race()
                continue
            if after is None:
                assert idempotency is not None  # only a receipt can replay an append
                return self.outcome_of(
                    game_id, json.loads(result.response or "{}"), idempotency.key
                )
            return Appended(snap, result, after, decided.seat)
        raise TooManyConflicts()

    def _after_append(
        self, game_id: str, command_id: str, appended: Appended, bot_moves: bool = True
    ) -> Outcome:
        """Bots play on from the game this append left, within the request's budget; the rest
        is handed over to the background runner; then the response is gathered."""
        result = appended.result
        events = list(result.events)
        # The response is at this append's version unless bots play on (a later append by
        # another request is that request's to report, as if it came later).
        final = appended.after
        if self.bots.must_act(final.state.state):
            # Bots that wait before each move (a person's table, or bots standing in for
            # everyone): all in the background, the first one too.
            pace = self.background.pace(final.state.state)
            if bot_moves and not pace:
                deadline = time.monotonic() + self.bot_request_seconds
                # Appended one after another from this append's version, up to the first
                # conflict (self.bots gives way there): the run stays unbroken, as redaction
                # needs (to know each event's hand), and the view is at its end.
                bot_events, final = self.bots.run(game_id, command_id, final, deadline=deadline)
                events += bot_events
            if self.bots.must_act(final.state.state):
                self.hand_over(game_id, delay=pace)
        return Outcome(
            game_id,
            final.version,
            final.state,
            tuple(events),
            appended.before.state.state.hand_number,
            seat=appended.seat,
        )

    def _attempts(
        self, game_id: str, first: Snapshot[StoredGame] | None = None, checked: bool = True
    ) -> Iterator[Snapshot[StoredGame]]:
        """The game as each attempt should decide on it: ``first`` if given, then loaded.

        An unchecked ``first`` (maybe behind) is an extra attempt: losing it is no race with
        another command.
        """
        attempts = self.retries + 1
        if first is not None:
            attempts -= checked
            if first.version == 0:
                raise GameNotFound(game_id)
            yield first
        for _ in range(attempts):
            yield self.snapshot(game_id)

    def _receipt_record(
        self,
        idempotency: Idempotency,
        version: int,
        command_id: str,
        seat: int | None,
        extra: dict[str, Any],
    ) -> IdempotencyRecord:
        receipt = {"from": version, "command_id": command_id, "seat": seat, **extra}
        return IdempotencyRecord(
            idempotency.scope,
            idempotency.fingerprint,
            json.dumps(receipt, sort_keys=True),
            self.idempotency_ttl,
        )

    def _replay(self, game_id: str, idempotency: Idempotency) -> Outcome | None:
        stored = self.store.get_idempotent(game_id, idempotency.scope)
        if stored is None:
            return None
        fingerprint, response = stored
        if fingerprint != idempotency.fingerprint:
            raise IdempotencyKeyReused("this Idempotency-Key was used for a different request")
        return self.outcome_of(game_id, json.loads(response), idempotency.key)


def _check_deals(rules: RuleOptions, plan: DealPlan) -> None:
    for k, deal in enumerate(plan.deals, start=1):
        try:
            check_explicit_deal(rules, deal, None)
        except RuleViolation as error:
            raise InvalidDeal(k, error) from None


def _waiting_change(before: Phase, after: Phase) -> bool | None:
    """How an append moving a game from ``before`` to ``after`` changes the store's index of
    games waiting for players (the expiry sweep's candidates): True enters, False leaves."""
    if (before is Phase.WAITING) == (after is Phase.WAITING):
        return None
    return after is Phase.WAITING


IN_PLAY = (Phase.DEALING, Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE)


def _silence_change(before: GameState, after: GameState) -> bool | None:
    """How an append changes the store's index of silent games (the abandonment sweep's
    candidates, service/app/abandonment.py): a game in play without a turn clock is heard from
    now (True); one that leaves play leaves it (False); others are not in it (None)."""
    if after.phase in IN_PLAY and not after.rules.seconds_per_decision:
        return True
    return False if before.phase in IN_PLAY else None


def _deadline_change(before: StoredGame, after: StoredGame) -> str | bool | None:
    """How an append changes the store's index of deadlines (the timekeeper's candidates): the
    game's first deadline after it (ISO-8601 UTC), False if none runs any more, None for a game
    without a clock."""
    if after.clock is None and before.clock is None:
        return None
    due = next_deadline(after.clock, after.state)
    return False if due is None else iso(due)


def _in_play(table: StoredGame) -> bool:
    return table.state.phase not in (Phase.WAITING, Phase.FINISHED, Phase.EXPIRED)


def _matches(
    table: StoredGame,
    status: str | None,
    player: str | None,
    arranged: bool | None,
    imported: bool | None = None,
) -> bool:
    state = table.state
    if status is not None and state.phase.value != status:
        return False
    if arranged is not None and arranged == table.plan.empty:
        return False
    if imported is not None and imported != table.imported:
        return False
    if player is None:
        return True
    if table.imported:
        # Imports stay guests (issue 32): anyone may edit an export's names and recompute its
        # chain, so an imported game's seats are never anybody's games here, whatever they say.
        return False
    key = name_key(player)
    return any(seat.name is not None and name_key(seat.name) == key for seat in state.seats)


def parse_deals(deals: Sequence[Sequence[Sequence[str]]]) -> tuple[Hands, ...]:
    """Explicit deals from their JSON form; InvalidCard names the first bad card."""
    return tuple(tuple(tuple(Card(c) for c in hand) for hand in deal) for deal in deals)


def _full_retry(wait_ms: int) -> int:
    """Retry-After of a full cap of games of bots: a game of bots lasts minutes, so the next
    place is likely free well before the oldest's lifetime ends: at most a minute."""
    return max(1, min(60, -(-wait_ms // 1000)))
