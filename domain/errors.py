"""Every way a command can break the rules, one class each, with a stable code.

The HTTP layer maps ``code`` to a problem type; it never reads messages. ``decide`` raises one of
these and emits nothing when a command is illegal.
"""

from __future__ import annotations

from typing import ClassVar


class RuleViolation(Exception):
    """A command the rules do not allow. ``code`` is stable; ``str(error)`` explains it."""

    code: ClassVar[str] = "rule-violation"
    # Which HTTP family the error belongs to: a move against the rules of play (conflict with the
    # game's state) or a malformed request (unprocessable).
    kind: ClassVar[str] = "conflict"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidRules(RuleViolation):
    code = "invalid-rules"
    kind = "invalid"


class InvalidCommand(RuleViolation):
    code = "invalid-command"
    kind = "invalid"


class GameAlreadyCreated(RuleViolation):
    code = "game-already-created"


class GameNotCreated(RuleViolation):
    code = "game-not-found"
    kind = "not-found"


class WrongPhase(RuleViolation):
    code = "wrong-phase"


class SeatOutOfRange(RuleViolation):
    code = "seat-out-of-range"
    kind = "invalid"


class SeatTaken(RuleViolation):
    code = "seat-taken"


class NameTaken(RuleViolation):
    """Another player at this table has this name, compared as domain/names.py compares."""

    code = "name-taken"


class NameConfusable(RuleViolation):
    """The name looks like another player's (a Unicode confusable, UTS #39: "Вob" with a
    Cyrillic В looks like "Bob"): a registered player's, or one at this table. Choose another."""

    code = "name-confusable"


class InvalidName(RuleViolation):
    """The name is empty, too long, or holds a character a nickname may not (RFC 8266 PRECIS:
    control, invisible or bidi-override characters, lone surrogates), or (games since issue 32)
    one outside the Unicode identifier profile (UTS #39: blanks such as U+2800, symbols, emoji)."""

    code = "invalid-name"
    kind = "invalid"


class NoPlayerToTakeOver(RuleViolation):
    code = "no-player-to-take-over"


class NotYourSeat(RuleViolation):
    """Only the registered player who joined a seat may resume it."""

    code = "not-your-seat"
    kind = "forbidden"


class GameFull(RuleViolation):
    code = "game-full"


class GameExpired(RuleViolation):
    """The game's open seats were not taken in time: it closed without being played."""

    code = "game-expired"


class GameOver(RuleViolation):
    """The game has ended (played to its end, or however a later rule ends one): no command
    changes it any more."""

    code = "game-over"


class NotYourTurn(RuleViolation):
    code = "not-your-turn"


class CardNotInHand(RuleViolation):
    code = "card-not-in-hand"


class WrongNumberOfCards(RuleViolation):
    code = "wrong-number-of-cards"
    kind = "invalid"


class DuplicateCards(RuleViolation):
    code = "duplicate-cards"
    kind = "invalid"


class AlreadyPassed(RuleViolation):
    code = "already-passed"


class PassingNotOptional(RuleViolation):
    code = "passing-not-optional"


class MustFollowSuit(RuleViolation):
    code = "must-follow-suit"


class MustLeadLowestClub(RuleViolation):
    code = "must-lead-lowest-club"


class HeartsNotBroken(RuleViolation):
    code = "hearts-not-broken"


class NoPointsOnFirstTrick(RuleViolation):
    code = "no-points-on-first-trick"


class MustPlayQueen(RuleViolation):
    code = "must-play-queen"


class NotTheShooter(RuleViolation):
    code = "not-the-shooter"


class InvalidDeal(RuleViolation):
    code = "invalid-deal"
    kind = "invalid"


class TimeNotUp(RuleViolation):
    """A timeout asked for before the seat's deadline (or of a seat with nothing to decide)."""

    code = "time-not-up"


class NotAway(RuleViolation):
    """``I'm back`` from a seat its own player is playing: no bot plays for it."""

    code = "not-away"


class AlreadyContributed(RuleViolation):
    """The seat has contributed to this hand's shuffle already: one contribution a hand."""

    code = "already-contributed"


ALL_VIOLATIONS: tuple[type[RuleViolation], ...] = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, RuleViolation)
)
