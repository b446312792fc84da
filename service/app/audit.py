"""The audit: re-verify a game's whole log, step by step, and report every discrepancy.

Four checks, each over the log as stored:

- ``chain``: the hash chain is intact (:func:`service.store.envelope.verify_chain`);
- ``commitment``: each hand's seed commitment is SHA-256 of the hand's salt and seed (format
  2), or of the seed alone for hands dealt before salts (format 1); the seed and salt are
  revealed when the hand ends, the commitment was public from the deal on;
- ``deal``: each deal re-derived from its seed equals the deal recorded (explicit deals excepted);
- ``domain``: every event is what the rules decide. The command behind each event a player (or
  the table) caused is rebuilt from that event (``Deal`` from ``HandDealt``, ``PlayCard`` from
  ``CardPlayed`` ...), ``decide`` runs on the state folded so far, and what it emits must be
  exactly the events logged next: every play legal, every trick winner and every score right.

A tamperer who edits events and re-hashes the chain passes ``chain`` but not ``domain``. Each
discrepancy names the seq of the event and the reason. Reasons never quote hidden cards (a hand,
a pass, a seed), so a report may be shown to anyone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from domain import commands as c
from domain import events as e
from domain.clock import Clock, decide_timeout, moment, tick
from domain.dealing import deal_from_seed, dealer_of
from domain.decider import decide, evolve
from domain.errors import RuleViolation
from domain.secrecy import SECRETS
from domain.shuffle import is_salt, mixed_seed, seed_commitment
from domain.state import INITIAL_STATE, GameState
from service.app import game_log
from service.app.deal_plan import DEAL_PLAN, SEED_COMMITTED, DealPlan, SeedCommitted, hand_seed
from service.app.safe_text import escape_controls
from service.cooperative import EVERY, paced, pause
from service.store.envelope import SEQ_GAP, RecordedEvent, verify_chain
from service.store.upcasting import UpcasterRegistry

CHECKS = ("chain", "commitment", "deal", "domain")
MAX_DISCREPANCIES = 200

# Events a command starts with; every other event is derived by the rules from one of these.
PRIMARY = (
    e.GameCreated,
    e.PlayerJoined,
    e.SeatResumed,
    e.SeatControlChanged,
    e.HandDealt,
    e.CardsPassed,
    e.CardPlayed,
    e.MoonScoringChosen,
    e.GameExpired,
    e.SeatTimedOut,
    e.GameAbandoned,
    e.SeedContributed,
)

# Fields a report never quotes: whatever domain.secrecy hides from anyone (cards, seeds,
# credentials), whatever the hand's state.
_HIDDEN = {cls: {s.field for s in secrets} for cls, secrets in SECRETS.items()}


@dataclass(frozen=True, slots=True)
class Discrepancy:
    seq: int  # the event found wrong (or where a missing event should be)
    check: str  # one of CHECKS, or "decode"
    reason: str
    related: tuple[int, ...] = ()  # other events involved (e.g. the plays a trick disagrees with)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "check": self.check,
            "reason": self.reason,
            "related": list(self.related),
        }

    def __str__(self) -> str:
        also = f" (see also seq {', '.join(map(str, self.related))})" if self.related else ""
        return f"seq {self.seq} [{self.check}]: {self.reason}{also}"


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    ok: bool
    checked: int  # events, hands or commands checked
    unit: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "checked": self.checked, "unit": self.unit}


@dataclass(frozen=True, slots=True)
class HandAudit:
    number: int
    seq: int  # of its HandDealt
    finished: bool  # the seed is public (the hand has been scored)
    explicit: bool
    commitment_ok: bool
    deal_ok: bool | None  # None for an explicit deal

    def to_dict(self) -> dict[str, Any]:
        return {
            "hand_number": self.number,
            "seq": self.seq,
            "finished": self.finished,
            "explicit": self.explicit,
            "commitment_ok": self.commitment_ok,
            "deal_ok": self.deal_ok,
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    game_id: str
    events: int
    last_seq: int
    checks: tuple[CheckResult, ...]
    hands: tuple[HandAudit, ...]
    discrepancies: tuple[Discrepancy, ...]
    truncated: bool = False  # more discrepancies than MAX_DISCREPANCIES were found

    @property
    def ok(self) -> bool:
        return not self.discrepancies

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "ok": self.ok,
            "events": self.events,
            "last_seq": self.last_seq,
            "checks": [x.to_dict() for x in self.checks],
            "hands": [h.to_dict() for h in self.hands],
            "discrepancies": [d.to_dict() for d in self.discrepancies],
            "truncated": self.truncated,
        }

    def to_text(self) -> str:
        lines = [f"audit of game {self.game_id}: {self.events} events, last seq {self.last_seq}"]
        for check in self.checks:
            mark = "ok  " if check.ok else "FAIL"
            lines.append(f"  {mark} {check.name:<10} {check.checked} {check.unit} checked")
        for hand in self.hands:
            deal = "explicit" if hand.deal_ok is None else ("ok" if hand.deal_ok else "WRONG")
            lines.append(
                f"  hand {hand.number} (seq {hand.seq}): commitment "
                f"{'ok' if hand.commitment_ok else 'WRONG'}, deal {deal}"
                + ("" if hand.finished else ", in play (seed not yet public)")
            )
        if self.ok:
            lines.append("no discrepancies: the log is intact and every event follows the rules")
        else:
            lines.append(f"{len(self.discrepancies)} discrepancies:")
            lines += [f"  {d}" for d in self.discrepancies]
            if self.truncated:
                lines.append(f"  ... (stopped after {MAX_DISCREPANCIES})")
        # A discrepancy may quote what a damaged or forged log holds: printed as text.
        return escape_controls("\n".join(lines), keep="\n")


@dataclass
class _Findings:
    items: list[Discrepancy] = field(default_factory=list)
    truncated: bool = False

    def add(self, seq: int, check: str, reason: str, related: Sequence[int] = ()) -> None:
        if len(self.items) >= MAX_DISCREPANCIES:
            self.truncated = True
            return
        self.items.append(Discrepancy(seq, check, reason, tuple(related)))


def audit_events(
    stored: Sequence[RecordedEvent],
    game_id: str | None = None,
    upcasters: UpcasterRegistry | None = None,
) -> AuditReport:
    """Audit one game's events *as stored* (not upcast: the chain covers the stored form)."""
    stored = list(stored)
    if game_id is None:
        game_id = stored[0].game_id if stored else ""
    found = _Findings()
    for problem in verify_chain(stored):
        # Never quote hashes: a hash over a hidden body (a pass: 286 possibilities) would let
        # anyone brute-force the hidden cards of a hand in play.
        detail = problem.detail if problem.reason == SEQ_GAP else ""
        found.add(problem.seq, "chain", f"{problem.reason}: {detail}" if detail else problem.reason)
    for r in stored:
        if r.game_id != game_id:
            found.add(r.seq, "chain", f"event of game {r.game_id!r} in the log of {game_id!r}")

    logged: list[tuple[RecordedEvent, e.Event]] = []
    plan: DealPlan | None = None
    committed: dict[int, tuple[int, SeedCommitted]] = {}
    for r in paced(stored):  # a long game: let the worker's other requests in (and below)
        try:
            record = game_log.decode(r, upcasters)
        except game_log.Undecodable as exc:  # report it, never crash the audit
            found.add(r.seq, "decode", str(exc))
            if r.type in (DEAL_PLAN, SEED_COMMITTED) or r.type not in e.EVENT_TYPES:
                continue  # not a domain event: the rules can be followed past it
            break  # the rules cannot be followed past an event nobody can read
        if isinstance(record, SeedCommitted):  # the server's seed for a hand, committed ahead
            committed.setdefault(record.hand_number, (r.seq, record))
        elif isinstance(record, DealPlan):  # the service's record of the seed and deals given
            plan = record
        else:
            logged.append((r, record))

    walk = _Walk(found, plan)
    walk.run(logged)
    _check_committed_ahead(found, logged, committed)
    hands = tuple(walk.hands)
    failed = {d.check for d in found.items}
    checks = (
        CheckResult("chain", "chain" not in failed, len(stored), "events"),
        CheckResult("commitment", "commitment" not in failed, len(hands), "hands"),
        CheckResult("deal", "deal" not in failed, sum(1 for h in hands if not h.explicit), "deals"),
        CheckResult("domain", not failed & {"domain", "decode"}, walk.commands, "commands"),
    )
    order = {name: i for i, name in enumerate(("decode", *CHECKS))}
    items = sorted(found.items, key=lambda d: (d.seq, order[d.check]))
    return AuditReport(
        game_id=game_id,
        events=len(stored),
        last_seq=stored[-1].seq if stored else 0,
        checks=checks,
        hands=hands,
        discrepancies=tuple(items),
        truncated=found.truncated,
    )


# -- the walk through the log ---------------------------------------------------------------------


def command_for(event: e.Event, state: GameState = INITIAL_STATE) -> c.Command:
    """The command that makes the domain emit ``event`` first (``event`` must be PRIMARY) on
    ``state``, the game just before it."""
    if isinstance(event, e.GameCreated):
        return c.CreateGame(event.game_id, event.rules, event.seats, event.names)
    if isinstance(event, e.PlayerJoined):
        return c.JoinGame(event.name, event.seat, event.credential, event.player_id)
    if isinstance(event, e.SeatResumed):
        # Asked by the player who joined the seat, whoever that was (None: the rules refuse it).
        seats = state.seats
        owner = seats[event.seat].player_id if 0 <= event.seat < len(seats) else None
        return c.ResumeSeat(event.seat, owner or "", event.credential)
    if isinstance(event, e.SeatControlChanged):
        return c.SetSeatBot(event.seat, event.bot)
    if isinstance(event, e.HandDealt):
        if event.explicit:
            return c.Deal(event.seed, event.hands, event.kitty, event.salt)
        return c.Deal(event.seed, salt=event.salt)
    if isinstance(event, e.CardsPassed):
        return c.PassCards(event.seat, event.cards)
    if isinstance(event, e.CardPlayed):
        return c.PlayCard(event.seat, event.card)
    if isinstance(event, e.MoonScoringChosen):
        return c.ChooseMoonScoring(event.seat, event.choice)
    if isinstance(event, e.GameExpired):
        return c.ExpireGame(event.at)
    if isinstance(event, e.SeatTimedOut):
        return c.TimeOut(event.seat, event.at)
    if isinstance(event, e.GameAbandoned):
        return c.AbandonGame(event.seat, event.at)
    if isinstance(event, e.SeedContributed):
        return c.ContributeSeed(event.seat, event.hand_number, event.contribution)
    raise TypeError(f"{type(event).__name__} is derived by the rules, not caused by a command")


class _Walk:
    """Follows the log event by event, re-deciding each command on the state folded so far.

    Where the log departs from the rules, the walk goes on from what the rules decide for the
    events the rules derive (tricks, scores), and from the log for the players' own moves, so one
    edited event is reported once rather than at every event after it.
    """

    def __init__(self, found: _Findings, plan: DealPlan | None) -> None:
        self.found = found
        self.plan = plan
        self.state: GameState = INITIAL_STATE
        self.clock: Clock | None = None  # the turn clock, ticked with each record's time
        self.at = 0.0  # the time of the record folded last
        self.imported = False  # a copy imported from an export (its first command id says so)
        self.commands = 0
        self.hands: list[HandAudit] = []
        self.trick_seqs: list[int] = []  # CardPlayed seqs of the trick in play
        self.scored: set[int] = set()

    def run(self, logged: list[tuple[RecordedEvent, e.Event]]) -> None:
        self.imported = bool(logged) and logged[0][0].command_id.startswith(game_log.IMPORTED)
        self.scored = {ev.hand_number for _, ev in logged if isinstance(ev, e.HandScored)}
        i = steps = 0
        while i < len(logged):
            steps += 1
            if steps % EVERY == 0:  # a long game: let the worker's other requests in
                pause()
            record, event = logged[i]
            if not isinstance(event, PRIMARY):
                self.found.add(
                    record.seq,
                    "domain",
                    f"{record.type} is not caused by any command here "
                    f"(the game is {self.state.phase.value})",
                )
                i += 1
                continue
            if isinstance(event, e.HandDealt):
                self._check_hand(record.seq, event, event.hand_number in self.scored)
            if isinstance(event, e.GameCreated) and event.game_id != record.game_id:
                self.found.add(
                    record.seq,
                    "domain",
                    f"GameCreated names game {event.game_id!r} in the log of {record.game_id!r}",
                )
            try:
                i = self._step(logged, i)
            except _CannotFollow as stop:
                self.found.add(stop.seq, "domain", f"cannot follow the log any further: {stop}")
                return

    def _step(self, logged: list[tuple[RecordedEvent, e.Event]], i: int) -> int:
        """Re-decide the command behind logged[i]; return the index of the next command."""
        record, event = logged[i]
        self.commands += 1
        self.at = self._time(record)
        try:
            emitted = self._decide(record, event)
        except RuleViolation as violation:
            # The message may tell what a seat holds ("you hold a diamond"): only once the
            # hand is over.
            why = f": {violation}" if self._public(event) else ""
            self.found.add(
                record.seq, "domain", f"{record.type} breaks the rules ({violation.code}){why}"
            )
            # Follow the log: the move and whatever the log derived from it.
            self._fold(record.seq, event)
            i += 1
            while i < len(logged) and not isinstance(logged[i][1], PRIMARY):
                self._fold(logged[i][0].seq, logged[i][1])
                i += 1
            return i
        if not emitted:
            self.found.add(record.seq, "domain", f"{record.type} changes nothing: no rule emits it")
            return i + 1
        self._compare(record, event, emitted[0])
        self._fold(record.seq, event)  # a player's move, or the deal: as logged
        i += 1
        command_id = record.command_id
        last_seq = record.seq
        for expected in emitted[1:]:
            name = type(expected).__name__
            if i < len(logged) and type(logged[i][1]) is type(expected):
                got_record, got = logged[i]
                self._compare(got_record, got, expected)
                if got_record.command_id != command_id:
                    self.found.add(
                        got_record.seq,
                        "domain",
                        f"{name} was recorded under command {got_record.command_id!r}, "
                        f"not {command_id!r} like the event it follows from",
                    )
                self._fold(got_record.seq, expected)  # derived by the rules: as decided
                last_seq = got_record.seq
                i += 1
                continue
            # Missing: named where it belongs, right after the last event of its command.
            where = last_seq + 1
            if i < len(logged):
                instead = f"; seq {logged[i][0].seq} is {logged[i][0].type} instead"
            else:
                instead = f"; the log ends at seq {logged[-1][0].seq}"
            self.found.add(
                where,
                "domain",
                f"missing {name}: the rules emit it after seq {last_seq}{instead}",
                (record.seq,),
            )
            self._fold(where, expected)
        return i

    def _decide(self, record: RecordedEvent, event: e.Event) -> list[e.Event]:
        """What the rules emit for the command behind ``event``: a timeout is decided with the
        clock folded so far, at the time it says, which must be when it was appended."""
        command = command_for(event, self.state)
        if not isinstance(command, c.TimeOut):
            return decide(command, self.state)
        if self.imported:
            # A copy's times are its import's: its source's audit checked the deadlines.
            return decide_timeout(command, self.state, self.clock, check_deadline=False)
        if command.at != record.time:
            self.found.add(
                record.seq,
                "domain",
                f"SeatTimedOut says {_show(command.at)} but was appended at {_show(record.time)}",
            )
        return decide_timeout(command, self.state, self.clock)

    def _time(self, record: RecordedEvent) -> float:
        try:
            return moment(record.time)
        except RuleViolation:
            return self.at  # an unreadable time: the chain check reports a changed envelope

    def _public(self, event: e.Event) -> bool:
        """Whether the hand ``event`` belongs to is over (or it belongs to none)."""
        number = event.hand_number if isinstance(event, e.HandDealt) else self.state.hand_number
        return number == 0 or number in self.scored

    def _fold(self, seq: int, event: e.Event) -> None:
        try:
            self.state = evolve(self.state, event)
            if self.clock is not None or isinstance(event, e.GameCreated):
                self.clock = tick(self.clock, self.state, event, self.at)
        except Exception as exc:  # the log is too broken to fold
            raise _CannotFollow(seq, f"{type(event).__name__} does not apply: {exc!r}") from exc
        if isinstance(event, e.CardPlayed):
            self.trick_seqs.append(seq)
        elif isinstance(event, (e.TrickTaken, e.HandDealt)):
            self.trick_seqs = []

    def _compare(self, record: RecordedEvent, got: e.Event, expected: e.Event) -> None:
        if got == expected:
            return
        hidden = _HIDDEN.get(type(got), set())
        parts = []
        for f in fields(got):
            mine, theirs = getattr(got, f.name), getattr(expected, f.name)
            if mine == theirs:
                continue
            if f.name in hidden:
                parts.append(f"{f.name} differs")
            else:
                parts.append(f"{f.name} is {_show(mine)}, the rules give {_show(theirs)}")
        related: tuple[int, ...] = ()
        if isinstance(got, e.TrickTaken) and got.plays != expected.plays:  # type: ignore[union-attr]
            related = tuple(
                seq
                for seq, logged_play, played in zip(
                    self.trick_seqs,
                    got.plays,
                    expected.plays,
                    strict=False,  # type: ignore[union-attr]
                )
                if logged_play != played
            )
        if isinstance(got, e.HandDealt) and got.hands != expected.hands:  # type: ignore[union-attr]
            parts.append("the deal does not come from its seed")
        self.found.add(record.seq, "domain", f"{type(got).__name__}: " + "; ".join(parts), related)

    def _check_hand(self, seq: int, event: e.HandDealt, finished: bool) -> None:
        # Format 2 (salted) when the event has a salt, format 1 (SHA-256 of the seed) for hands
        # dealt before salts: both recomputed as committed (domain.shuffle.seed_commitment).
        salted = event.salt is not None
        commitment_ok = (not salted or is_salt(event.salt)) and seed_commitment(
            event.seed, event.salt
        ) == event.seed_commitment
        if not commitment_ok:
            what = "SHA-256 of its salt and seed" if salted else "SHA-256 of the seed"
            self.found.add(
                seq, "commitment", f"hand {event.hand_number}: the seed commitment is not {what}"
            )
        deal_ok: bool | None = None
        rules = self.state.rules
        if not event.explicit:
            dealer = dealer_of(event.hand_number, rules.players)
            try:
                seed = mixed_seed(event.seed, event.contributions)
                hands, kitty = deal_from_seed(rules, dealer, seed)
                deal_ok = hands == event.hands and kitty == event.kitty
            except Exception:  # e.g. no game created yet: the domain check reports that
                deal_ok = False
            if not deal_ok:
                self.found.add(
                    seq,
                    "deal",
                    f"hand {event.hand_number}: the cards dealt are not the deal its seed gives",
                )
        if self.plan is not None and not self._follows_plan(seq, event):
            deal_ok = False
        self.hands.append(
            HandAudit(event.hand_number, seq, finished, event.explicit, commitment_ok, deal_ok)
        )

    def _follows_plan(self, seq: int, event: e.HandDealt) -> bool:
        """The deal is the one the game was created with (its seed, its listed deals)."""
        plan = self.plan
        assert plan is not None
        k = event.hand_number
        ok = True
        if plan.seed is not None and event.seed != hand_seed(plan.seed, k):
            ok = False
            self.found.add(seq, "deal", f"hand {k}: its seed is not the one the game seed gives")
        listed = k <= len(plan.deals)
        # A deal is a set of cards per seat: the order they were listed in is not part of it.
        if listed != event.explicit or (listed and not _same_deal(event.hands, plan.deals[k - 1])):
            ok = False
            self.found.add(seq, "deal", f"hand {k}: not the deal listed when the game was created")
        return ok


def _check_committed_ahead(
    found: _Findings,
    logged: list[tuple[RecordedEvent, e.Event]],
    committed: dict[int, tuple[int, SeedCommitted]],
) -> None:
    """Contributions to a hand's shuffle count only if the server's seed for that hand was
    committed before the first of them (``SeedCommitted``), and the hand was then dealt from
    that very seed: else the server could have chosen its seed after seeing them."""
    first: dict[int, int] = {}
    for record, event in logged:
        if isinstance(event, e.SeedContributed):
            first.setdefault(event.hand_number, record.seq)
            ahead = committed.get(event.hand_number)
            if ahead is None or ahead[0] > record.seq:
                found.add(
                    record.seq,
                    "commitment",
                    f"hand {event.hand_number}: a contribution was taken before the server's "
                    "seed for the hand was committed",
                )
        elif isinstance(event, e.HandDealt) and not event.explicit:
            ahead = committed.get(event.hand_number)
            if ahead is None:
                continue  # a hand dealt before seeds were committed ahead, or an arranged one
            seq, pledge = ahead
            same = (pledge.seed, pledge.salt, pledge.seed_commitment) == (
                event.seed,
                event.salt,
                event.seed_commitment,
            )
            if seq > record.seq or not same:
                found.add(
                    record.seq,
                    "commitment",
                    f"hand {event.hand_number}: not dealt from the seed committed at seq {seq}",
                    (seq,),
                )


class _CannotFollow(Exception):
    def __init__(self, seq: int, message: str) -> None:
        super().__init__(message)
        self.seq = seq


def _same_deal(dealt: Sequence[Sequence[Any]], listed: Sequence[Sequence[Any]]) -> bool:
    return len(dealt) == len(listed) and all(
        frozenset(a) == frozenset(b) for a, b in zip(dealt, listed, strict=True)
    )


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if hasattr(value, "value"):  # enums
        return str(value.value)
    if hasattr(value, "to_dict"):
        return "the rule options given"
    return str(value)
