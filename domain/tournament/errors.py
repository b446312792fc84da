"""Every way a tournament command can be refused, one class each, with a stable code (the
HTTP layer answers each as the problem type of its code, like ``domain.errors``)."""

from __future__ import annotations

from domain.errors import RuleViolation


class TournamentInvalid(RuleViolation):
    """The tournament's settings are out of range (rounds, boards, players, rules)."""

    code = "tournament-invalid"
    kind = "invalid"


class TournamentNotFound(RuleViolation):
    """No tournament has this id."""

    code = "tournament-not-found"
    kind = "not-found"


class TournamentAlreadyCreated(RuleViolation):
    """A tournament with this id exists already."""

    code = "tournament-exists"


class TournamentClosed(RuleViolation):
    """Entries are closed: the tournament has started, finished or been cancelled."""

    code = "tournament-closed"


class TournamentFull(RuleViolation):
    """The tournament has as many players as it takes."""

    code = "tournament-full"


class AlreadyEntered(RuleViolation):
    """This player has entered the tournament already."""

    code = "already-entered"


class NotEntered(RuleViolation):
    """This player has not entered the tournament (or has withdrawn)."""

    code = "not-entered"


class NotOrganiser(RuleViolation):
    """Only the player who created the tournament may start or cancel it."""

    code = "not-organiser"
    kind = "forbidden"


class TooFewPlayers(RuleViolation):
    """The tournament cannot start with fewer players than its minimum."""

    code = "too-few-players"


class TournamentStepRefused(RuleViolation):
    """A step of the tournament's progress that does not fit its log (a round that is not the
    current one, a table already linked or recorded): the step was taken already."""

    code = "tournament-step-refused"


TOURNAMENT_VIOLATIONS: tuple[type[RuleViolation], ...] = (
    TournamentInvalid,
    TournamentNotFound,
    TournamentAlreadyCreated,
    TournamentClosed,
    TournamentFull,
    AlreadyEntered,
    NotEntered,
    NotOrganiser,
    TooFewPlayers,
    TournamentStepRefused,
)
