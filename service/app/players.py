"""Registered players (issue 20): a name held across the service, an API key, their games.

A player registers a name and gets an API key (``hp_`` and 256 random bits from ``secrets``),
shown once: only its SHA-256 is stored (``auth.credential_of``, as for seat tokens), and a key
is found by its hash. Rotating gives a new key and the old one stops at once; revoking leaves
none (a player then has no way in: register anew is not possible under the same name, by
design of a first slice; see docs/api.md).

A join with a player's key binds the seat to the player: the seat takes the registered name
and ``PlayerJoined.player_id``. A guest (a join without a key) may not take a registered name.
A player resumes a seat elsewhere with their key: a fresh seat token, and the old one stops
working (``SeatResumed``: the domain checks the seat is the player's).

Look-alikes (issue 32): a name registered now is in UTS #39's identifier profile, and a name
sharing a confusable skeleton with a registered player's (``domain.names.account_skeletons``:
"Вob" with a Cyrillic В, "Bob" with a Greek Β; "Mạllory" with a dot below, "Maӏӏory" with
palochkas, after a documented folding) is taken, for registering and for a guest's join alike: one
MGET of the account store's skeleton index (``NameConfusable``, 409 ``name-confusable``).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from bots import bot_names
from domain.commands import ResumeSeat
from domain.errors import InvalidName, NameConfusable
from domain.names import (
    InvalidNameText,
    account_skeletons,
    display_name,
    identifier_name,
    name_key,
    resembles,
    same_name,
)
from domain.state import GameState
from service.app import auth
from service.app.errors import NameReserved, PlayerNameTaken
from service.app.game import StoredGame
from service.app.game_service import RESERVED_NAMES, GameService, Idempotency, Outcome
from service.app.state_cache import Snapshot
from service.store.accounts import (
    AccountStore,
    NameClaimed,
    NameLookalike,
    PlayerGone,
    StoredPlayer,
)
from service.store.keys import utc_now_iso

log = logging.getLogger(__name__)

KEY_PREFIX = "hp_"  # recognisable in logs and by secret scanners
KEY_BYTES = 32  # 256 bits


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str
    name: str
    created: str
    key_hash: str


@dataclass(frozen=True, slots=True)
class PlayerGame:
    """One of a player's games, as it is now, and the player's seat in it."""

    snap: Snapshot[StoredGame]
    seat: int

    @property
    def state(self) -> GameState:
        return self.snap.state.state


def is_player_key(token: str) -> bool:
    """A bearer token shaped like a player's key (a seat token never starts so)."""
    return token.startswith(KEY_PREFIX)


def new_key() -> tuple[str, str]:
    """A fresh ``(key, hash)``: give the key to the player once, store the hash."""
    key = KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)
    return key, auth.credential_of(key)


class PlayerService:
    def __init__(self, accounts: AccountStore, games: GameService) -> None:
        self.accounts = accounts
        self.games = games
        # Called with the player id after its key changed (e.g. wake its open streams, which
        # then find their key no longer valid: service/api/seeks.py); never fails the change.
        self.on_rekeyed: list[Callable[[str], None]] = []

    # -- the account --------------------------------------------------------------------------

    def register(self, raw_name: str) -> tuple[Player, str]:
        """A new player under ``raw_name`` (normalized); returns it and its key, shown once."""
        name = _checked_name(raw_name)
        player_id = "p" + secrets.token_hex(10)
        key, key_hash = new_key()
        created = utc_now_iso()
        try:
            self.accounts.register(
                player_id, name, name_key(name), key_hash, created, account_skeletons(name)
            )
        except NameClaimed:
            raise PlayerNameTaken(f"{name!r} is a registered player's name") from None
        except NameLookalike:
            raise _lookalike(name) from None
        return Player(player_id, name, created, key_hash), key

    def authenticate(self, key: str | None) -> Player:
        """The player whose key this is; Unauthorized if none (no key, revoked, rotated)."""
        if key is None:
            raise auth.Unauthorized("this request needs 'Authorization: Bearer <player key>'")
        stored = self.accounts.by_key_hash(auth.credential_of(key)) if is_player_key(key) else None
        if stored is None:
            raise auth.Unauthorized("the key is not a player's (or was rotated or revoked)")
        return Player(stored.player_id, stored.name, stored.created, stored.key_hash)

    def still_valid(self, player: Player) -> bool:
        """Whether the key ``player`` authenticated with still works (not rotated or revoked
        since): what an open stream asks now and then, in Redis, so every worker sees it."""
        return bool(player.key_hash) and self.accounts.key_hash(player.player_id) == player.key_hash

    def rotate(self, player: Player) -> str:
        """A new key for the player; the one it authenticated with stops working."""
        key, key_hash = new_key()
        self._rekey(player, key_hash)
        return key

    def revoke(self, player: Player) -> None:
        self._rekey(player, "")

    def _rekey(self, player: Player, new_hash: str) -> None:
        try:
            self.accounts.rekey(player.player_id, player.key_hash, new_hash)
        except PlayerGone:
            # Another request rotated or revoked this key first: it is no longer valid.
            raise auth.Unauthorized("the key was rotated or revoked meanwhile") from None
        for rekeyed in self.on_rekeyed:
            try:
                rekeyed(player.player_id)
            except Exception:  # the streams still look at their key every keep-alive
                log.exception("player %s: streams not told of the new key", player.player_id)

    # -- joining, listing, resuming ---------------------------------------------------------

    def join(
        self,
        game_id: str,
        *,
        key: str | None,
        name: str | None,
        seat: int | None,
        idempotency: Idempotency | None,
        join_code: str | None = None,
    ) -> Outcome:
        """Join as the player whose key this is, or (no key) as a guest under ``name``; a
        private table's seat needs its ``join_code``."""
        self.games.check_join_code(game_id, join_code)
        if key is None:
            if name is None:
                raise InvalidName("a guest's join needs a name (or join with a player's key)")
            self._check_guest_name(name)
            return self.games.join(
                game_id, name=name, seat=seat, idempotency=idempotency, player_id=None
            )
        player = self.authenticate(key)
        if name is not None and not _same_text_name(name, player.name):
            raise InvalidName(f"your registered name is {player.name!r}: send it or leave it out")
        self.games.snapshot(game_id)  # GameNotFound before the index names the game
        # The index first: a crash between the two leaves a game the listing skips (no seat of
        # this player in it), never a seat missing from the player's games.
        self.accounts.add_game(player.player_id, game_id)
        return self.games.join(
            game_id,
            name=player.name,
            seat=seat,
            idempotency=idempotency,
            player_id=player.player_id,
        )

    def _check_guest_name(self, name: str) -> None:
        try:
            shown = display_name(name)
        except InvalidNameText:
            return  # the rules refuse it as they do any bad name (422 invalid-name)
        holder, alike = self.accounts.holders(name_key(shown), account_skeletons(shown))
        if holder is not None:
            raise PlayerNameTaken(f"{name.strip()!r} is a registered player's: join with its key")
        if alike is not None:
            raise _lookalike(shown)

    def my_games(self, player: Player, limit: int) -> list[PlayerGame]:
        """The player's games, the latest joined first, with its seat in each."""
        found = []
        for game_id in self.accounts.games(player.player_id, limit):
            snap = self.games.cache.get(game_id)
            seat = _seat_of_player(snap.state.state.seats if snap.version else (), player)
            if seat is not None:  # else a join that did not happen (see join)
                found.append(PlayerGame(snap, seat))
        return found

    def resume(self, game_id: str, seat: int, key: str | None) -> Outcome:
        """A fresh token for the player's seat; the seat's old token stops working."""
        player = self.authenticate(key)
        snap = self.games.snapshot(game_id)
        token, credential = auth.new_token()
        outcome = self.games.command(
            game_id, seat, lambda state: ResumeSeat(seat, player.player_id, credential), snap=snap
        )
        return Outcome(
            outcome.game_id,
            outcome.version,
            outcome.table,
            outcome.events,
            outcome.hand_before,
            seat=seat,
            token=token,
        )


def _lookalike(name: str) -> NameConfusable:
    # Which player it looks like is left out: the detail names nothing but what was sent.
    return NameConfusable(
        f"{name!r} looks like a registered player's name (Unicode confusables, UTS #39): "
        "choose another"
    )


def _checked_name(raw: str) -> str:
    try:
        name = identifier_name(raw)  # what a new game's join allows (domain/names.py)
    except InvalidNameText as error:
        raise InvalidName(str(error)) from None
    if any(resembles(name, bot) for bot in bot_names()):
        raise NameReserved(f"{name!r} is a bot's name: choose another")
    if any(resembles(name, word) for word in RESERVED_NAMES):
        raise NameReserved(f"{name!r} is reserved: /players/me is one's own account")
    return name


def _same_text_name(given: str, registered: str) -> bool:
    try:
        return same_name(display_name(given), registered)
    except InvalidNameText:
        return False


def _seat_of_player(seats: Sequence, player: Player) -> int | None:
    return next((i for i, s in enumerate(seats) if s.player_id == player.player_id), None)


# -- the operator's checks (hearts players ...) ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Collision:
    """Accounts whose names share a UTS #39 skeleton: they look alike. Nobody is merged or
    renamed; an operator decides what, if anything, to do."""

    skeleton: str
    players: tuple[StoredPlayer, ...]  # oldest first


def collisions(players: Iterable[StoredPlayer]) -> list[Collision]:
    """The groups of accounts that look alike, each group once (by its oldest account)."""
    by_skeleton: dict[str, list[StoredPlayer]] = {}
    for player in players:
        for skeleton in account_skeletons(player.name):
            by_skeleton.setdefault(skeleton, []).append(player)
    seen: set[tuple[str, ...]] = set()
    found = []
    for skeleton, group in sorted(by_skeleton.items()):
        ids = tuple(sorted({p.player_id for p in group}))
        if len(ids) > 1 and ids not in seen:
            seen.add(ids)
            unique = {p.player_id: p for p in group}.values()
            found.append(Collision(skeleton, tuple(sorted(unique, key=_age))))
    return found


def index_names(accounts: AccountStore) -> int:
    """Index every account's skeletons (accounts registered before they were kept), oldest
    first so the oldest keeps a skeleton two share; returns how many accounts were indexed."""
    players = sorted(accounts.all_players(), key=_age)
    for player in players:
        accounts.index_skeletons(player.player_id, account_skeletons(player.name))
    return len(players)


def _age(player: StoredPlayer) -> tuple[str, str]:
    return player.created, player.player_id
