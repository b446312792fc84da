"""What the application layer refuses, as exceptions that speak no HTTP.

Each class has a stable ``code`` (the problem type's last segment); only the HTTP layer turns
them into RFC 9457 problems (one table, ``SERVICE_STATUS`` in its problems module), choosing the
status and headers. A rule broken inside the game is a
``domain.errors.RuleViolation`` instead, raised by the decider and passed through untouched.
"""

from __future__ import annotations

from domain.errors import RuleViolation


class ServiceError(Exception):
    """A request the application refuses; ``code`` is stable, ``detail`` is for people."""

    code = "service-error"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class GameNotFound(ServiceError):
    code = "game-not-found"

    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game {game_id!r}")
        self.game_id = game_id


class GameAlreadyExists(ServiceError):
    code = "game-already-created"

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} already exists")
        self.game_id = game_id


class CorruptGame(ServiceError):
    """The game's stored log cannot be folded (an event missing, altered or unreadable).

    Only the audit reads such a log to the end; every other use of the game is refused.
    """

    code = "corrupt-game"

    def __init__(self, game_id: str, reason: str) -> None:
        super().__init__(f"game {game_id!r} has a damaged log ({reason}): see its audit")
        self.game_id = game_id
        self.reason = reason


class StaleVersion(ServiceError):
    """If-Match named a version the game is no longer (or not yet) at."""

    code = "precondition-failed"

    def __init__(self, wanted: int, current: int | None) -> None:
        now = f" it is at version {current}" if current is not None else " it has moved on"
        super().__init__(f"If-Match asked for version {wanted};{now}: reload the game and retry")
        self.wanted = wanted
        self.current = current


class TooManyConflicts(ServiceError):
    """Other appends kept winning the race; the client should retry shortly."""

    code = "too-many-conflicts"
    retry_after_seconds = 1

    def __init__(self) -> None:
        super().__init__("the game kept changing under this command; retry")


class TooManyStreams(ServiceError):
    """One client holds as many live event streams as it may (``sse_max_streams_per_client``)."""

    code = "too-many-streams"

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(
            f"this client already holds {limit} open event streams here: close one first"
        )
        self.retry_after_seconds = retry_after


class StreamsFull(ServiceError):
    """The worker holds as many live event streams as it may (``sse_max_streams``)."""

    code = "streams-full"

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(f"this server holds {limit} open event streams already; retry later")
        self.retry_after_seconds = retry_after


class BotGamesFull(ServiceError):
    """As many games of bots only are in play as the server allows (``max_bot_games``): a
    capacity of the whole server, not this client's rate, hence 503 and not 429."""

    code = "bot-games-full"

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(
            f"this server plays {limit} games of bots only at once already (the most it "
            "allows); seat a person, or retry later"
        )
        self.retry_after_seconds = retry_after


class InvalidEventId(ServiceError):
    """``Last-Event-ID`` or ``after`` is not an id the stream hands out (service/api/event_ids.py):
    a game's event seq (0 to 2^63-1), a player notice's ``<n>-<m>`` (each part 0 to 2^64-1)."""

    code = "invalid-event-id"

    def __init__(self, name: str, raw: str, expected: str) -> None:
        shown = raw if len(raw) <= 45 else raw[:45] + "..."
        super().__init__(f"{name} must be {expected}, not {shown!r}")


class WritesUnavailable(ServiceError):
    """The event store refuses writes for now (out of memory, a read-only replica, a failed
    save); nothing was written, so the same request may be retried later as it is."""

    code = "unavailable"
    retry_after_seconds = 5

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"the event store refuses writes for now ({reason}); nothing was written: retry later"
        )
        self.reason = reason


class HandNotFound(ServiceError):
    code = "hand-not-found"

    def __init__(self, game_id: str, number: int) -> None:
        super().__init__(f"game {game_id} has no hand {number}")


class EventNotFound(ServiceError):
    code = "event-not-found"

    def __init__(self, game_id: str, version: int, at: int) -> None:
        super().__init__(f"game {game_id} has {version} events, not {at}")


class GameInProgress(ServiceError):
    """Exported once finished: until then the export would show hidden cards."""

    code = "game-in-progress"

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} is not finished yet")


class HandInProgress(ServiceError):
    """Analysed once scored: an analysis of a hand in play would be a cheating aid."""

    code = "hand-in-progress"

    def __init__(self, game_id: str, number: int) -> None:
        super().__init__(f"hand {number} of game {game_id} is not finished yet")


class AnalysisNotStarted(ServiceError):
    """Nobody asked for this hand's analysis yet (POST it first), or it failed and was dropped."""

    code = "analysis-not-started"

    def __init__(self, game_id: str, number: int) -> None:
        super().__init__(f"hand {number} of game {game_id} has no analysis: POST to start one")


class AnalysesBusy(ServiceError):
    """This worker's queue of analyses is full; retry shortly."""

    code = "analyses-busy"
    retry_after_seconds = 10

    def __init__(self, limit: int) -> None:
        super().__init__(f"this server has {limit} analyses waiting already; retry later")


class LongWorkBusy(ServiceError):
    """This worker's long-work queue is full, or the client has as many long requests in
    flight here as it may (issue 42); retry after Retry-After."""

    code = "long-work-busy"

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after_seconds = retry_after


class IdempotencyKeyReused(ServiceError):
    """The Idempotency-Key was used for another request (or created a game whose record is gone)."""

    code = "idempotency-key-reused"


class ReceiptUnreadable(ServiceError):
    """A retried join's record holds a token that does not open (the record was altered): the
    first response cannot be given again, and a second join would take another seat."""

    code = "idempotency-receipt-unreadable"

    def __init__(self) -> None:
        super().__init__(
            "the record of this Idempotency-Key's first request is damaged: its token cannot be "
            "returned again"
        )


class JoinCodeInvalid(ServiceError):
    """A private table's seat asked for without its join code, or with a wrong one."""

    code = "join-code-invalid"

    def __init__(self, given: bool) -> None:
        super().__init__(
            "this join code is not the table's: ask its creator for the invitation link again"
            if given
            else "this table is private: join it by its invitation link (its join code)"
        )


class GuessableIdempotencyKey(ServiceError):
    """A join's Idempotency-Key gives its token back to whoever repeats it, so it must be
    unguessable (128 random bits: 22+ base64url characters or a UUIDv4); nothing was done."""

    code = "idempotency-key-guessable"

    def __init__(self) -> None:
        super().__init__(
            "a join's Idempotency-Key must be unguessable: at least 22 random base64url "
            "characters (128 bits, e.g. secrets.token_urlsafe(16)) or a UUIDv4, since whoever "
            "repeats it gets the seat's token back"
        )


class GuessableSeed(ServiceError):
    """A creator's seed is public in effect once a hand is scored: the hand's dealt cards let
    anyone test guesses of the seed offline and deal every hand to come. So it must be
    unguessable by the rule a join's Idempotency-Key follows; nothing was created."""

    code = "seed-guessable"

    def __init__(self) -> None:
        super().__init__(
            "a chosen seed must be unguessable: at least 22 random base64url characters "
            "(128 bits, e.g. secrets.token_urlsafe(16)), 32 random hex digits or a UUIDv4, since "
            "a scored hand's cards let anyone test guesses of it and deal the hands to come; "
            "reuse such a seed for reproducible games, or give explicit deals"
        )


class NameReserved(ServiceError):
    """A player asked for a bot's name: statistics are kept by name, and bots go by theirs."""

    code = "name-reserved"


class PlayerNameTaken(ServiceError):
    """The name (compared as RFC 8266 compares nicknames) is a registered player's: nobody else
    may register it or take it at a table as a guest."""

    code = "player-name-taken"


class InvalidCursor(ServiceError):
    code = "invalid-cursor"

    def __init__(self) -> None:
        super().__init__("the cursor is not one this API gave")


class InvalidDeal(ServiceError):
    """An explicit deal given at creation breaks a rule; ``code`` is the rule's."""

    def __init__(self, number: int, violation: RuleViolation) -> None:
        super().__init__(f"deal {number}: {violation.message}")
        self.code = violation.code
        self.number = number


# -- the transparency log (service/app/transparency.py, docs/verify.md) --------------------------


class InvalidHead(ServiceError):
    """A head that is not one this server signed for this game (malformed, another key, another
    game)."""

    code = "invalid-head"


class HeadNotExtended(ServiceError):
    """The game's log does not extend a head the server signed: it was rewritten or cut."""

    code = "head-not-extended"

    def __init__(self, detail: str, *, seq: int, expected: str, found: str | None) -> None:
        super().__init__(detail)
        self.seq = seq
        self.expected = expected
        self.found = found


class NotInLog(ServiceError):
    """The game is not in the public log (not finished, or not appended yet)."""

    code = "game-not-in-log"


class TileNotFound(ServiceError):
    """Not a tile of the public log (c2sp.org/tlog-tiles): a malformed path, or a tile the
    tree does not have yet."""

    code = "tile-not-found"


class BadTreeSize(ServiceError):
    """A tree size the public log does not have (or two in the wrong order)."""

    code = "bad-tree-size"


class InvalidCosignature(ServiceError):
    """A posted cosignature that is not a known witness's valid one on this log's checkpoint."""

    code = "invalid-cosignature"


class SeekNotFound(ServiceError):
    """No seek of the calling player has this id (another player's seek is not told apart)."""

    code = "seek-not-found"

    def __init__(self, seek_id: str) -> None:
        super().__init__(f"you have no seek {seek_id!r}")


class AlreadySeeking(ServiceError):
    """The player already waits for a table of this kind: one seek per kind of table."""

    code = "already-seeking"


class TooManySeeks(ServiceError):
    """So many seeks from the client's address wait already (``HEARTS_SEEKS_PER_ADDRESS``):
    a pool filled by one client's seeks nobody can accept would cost every sweep."""

    code = "too-many-seeks"


class InvalidSeek(ServiceError):
    """A seek that names no table this service deals (an unknown preset or time control, a
    rating range upside down, no clock: a matched game is rated)."""

    code = "invalid-seek"


class DealsArranged(ServiceError):
    """The game's creator chose its deals (a seed or explicit deals): a contribution to the
    shuffle would not count, so none is taken."""

    code = "deals-arranged"


class ChallengeNotFound(ServiceError):
    """No challenge to or from the calling player has this id (another's is not told apart)."""

    code = "challenge-not-found"

    def __init__(self, challenge_id: str) -> None:
        super().__init__(f"you have no challenge {challenge_id!r}")


class ChallengeNotYours(ServiceError):
    """The challenge is yours, but this answer is the other player's: only the challenged
    player accepts or declines, only the challenger cancels."""

    code = "challenge-not-yours"


class ChallengeExpired(ServiceError):
    """The challenge was not answered in time (``HEARTS_CHALLENGE_TTL``): it can no longer be
    accepted, declined or cancelled."""

    code = "challenge-expired"


class ChallengeAnswered(ServiceError):
    """The challenge was accepted, declined or cancelled already: it is answered once."""

    code = "challenge-answered"


class TooManyChallenges(ServiceError):
    """So many of the player's challenges wait for an answer (``HEARTS_CHALLENGES_OPEN``):
    cancel one, or wait for it to be answered or to expire."""

    code = "too-many-challenges"


class InvalidChallenge(ServiceError):
    """A challenge that makes no sense: to yourself, or to a bot's or reserved name."""

    code = "invalid-challenge"


class ChallengedPlayerNotFound(ServiceError):
    """No registered player holds the name a challenge is sent to."""

    code = "player-not-found"
