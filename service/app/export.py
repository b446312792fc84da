"""Export a game as one self-contained JSON document; import such a document as a new game.

The document (format ``hearts-game-export``, version 1) holds every event of the game exactly as
stored (envelopes with their hash chain, schema versions as written), so anyone can audit it
without the server; plus, for convenience, the rules, the seats (names and bots, never
credentials), the scores and the winners. A ``PlayerJoined`` event still carries its
``credential``, which is SHA-256 of the seat's 256-bit token: the chain covers it, and it cannot
be turned back into the token.

Import refuses a document that fails the audit. It then rebuilds the command behind every event
(as the audit does), decides each one again through the domain for the new game id, and appends
the whole game in one atomic append: all of it or nothing. Seats joined by players come without
credentials (no token of the original game acts in the copy); everything else replays
identically: the same deals, passes, plays, tricks, scores, and views at every sequence number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from domain import commands as c
from domain import events as e
from domain.clock import Clock, decide_timeout, tick
from domain.decider import decide, evolve
from domain.errors import RuleViolation
from domain.state import INITIAL_STATE, GameState
from service.app import game_log
from service.app.audit import PRIMARY, AuditReport, audit_events, command_for
from service.app.deal_plan import DealPlan, SeedCommitted, plan_event
from service.app.errors import ServiceError
from service.app.game_log import IMPORTED
from service.app.hand_records import Logged, hand_records
from service.app.replay_text import render_hands, render_summary
from service.app.safe_text import escape_controls
from service.cooperative import paced
from service.store.envelope import ENVELOPE_FIELDS, NewEvent, RecordedEvent
from service.store.upcasting import UpcasterRegistry

FORMAT = "hearts-game-export"
FORMAT_VERSION = 1
MAX_EVENTS = 50_000  # far beyond any real game; bounds the work one import can ask for


class ImportRefused(ServiceError):
    """The document cannot be imported; ``code`` is stable (``invalid-export``,
    ``unsupported-export-version``, ``export-fails-audit``), ``report`` set if the audit failed."""

    def __init__(self, code: str, detail: str, report: AuditReport | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.report = report


# -- export ---------------------------------------------------------------------------------------


def export_events(
    game_id: str,
    stored: Sequence[RecordedEvent],
    exported_at: str,
    upcasters: UpcasterRegistry | None = None,
) -> dict[str, Any]:
    """The document of ``stored`` (as stored; CorruptGame if the log cannot be read)."""
    state = _fold(game_log.entries(stored, game_id, 0, upcasters))
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game_id": game_id,
        "exported_at": exported_at,
        "version": stored[-1].seq if stored else 0,
        "last_hash": stored[-1].hash if stored else None,
        "phase": state.phase.value,
        "hand_number": state.hand_number,
        "rules": state.rules.to_dict(),
        "seats": [{"seat": i, "name": s.name, "bot": s.bot} for i, s in enumerate(state.seats)],
        "scores": list(state.scores),
        "winners": list(state.winners),
        "events": [r.to_dict() for r in paced(stored)],
    }


def export_text(document: dict[str, Any], upcasters: UpcasterRegistry | None = None) -> str:
    """A readable form of an export document: the game, then every hand trick by trick."""
    records = parse_events(document)
    typed = game_log.entries(records, upcasters=upcasters)
    hands = hand_records(Logged(seq, event) for seq, event in game_log.events(typed))
    head = [
        f"{FORMAT} v{document['format_version']}, exported {document.get('exported_at')}",
        render_summary(document["game_id"], document["rules"], document["seats"]),
        f"  phase: {document['phase']}; events: {document['version']}; "
        f"last hash: {document['last_hash']}",
        f"  scores: {', '.join(map(str, document['scores']))}"
        + (
            f"; winners: {', '.join(map(str, document['winners']))}"
            if document.get("winners")
            else ""
        ),
        "  (the JSON export holds the hash-chained events: audit it with `hearts audit`)",
    ]
    text = "\n".join(head) + "\n\n" + render_hands(hands) + "\n"
    return escape_controls(text, keep="\n")  # whatever the document held prints as text


# -- import ---------------------------------------------------------------------------------------


def parse_events(document: Any) -> list[RecordedEvent]:
    """The envelopes of an export document; ImportRefused if it is not one."""
    if not isinstance(document, dict):
        raise ImportRefused("invalid-export", "an export is a JSON object")
    if document.get("format") != FORMAT:
        raise ImportRefused("invalid-export", f"not a {FORMAT} document")
    if document.get("format_version") != FORMAT_VERSION:
        raise ImportRefused(
            "unsupported-export-version",
            f"format_version {document.get('format_version')!r}; this server reads "
            f"{FORMAT_VERSION}",
        )
    raw = document.get("events")
    if not isinstance(raw, list) or not raw:
        raise ImportRefused("invalid-export", "the export has no events")
    if len(raw) > MAX_EVENTS:
        raise ImportRefused("invalid-export", f"more than {MAX_EVENTS} events")
    out = []
    for i, env in enumerate(paced(raw)):  # a long game: let the worker's other requests in
        out.append(_envelope(i, env))
    game_id = document.get("game_id")
    if game_id != out[0].game_id:
        raise ImportRefused("invalid-export", "game_id does not match the events' game")
    if document.get("version") != out[-1].seq or document.get("last_hash") != out[-1].hash:
        raise ImportRefused("invalid-export", "version/last_hash do not match the last event")
    return out


_TYPES = {
    "type": str,
    "schema_version": int,
    "game_id": str,
    "seq": int,
    "time": str,
    "command_id": str,
    "payload": dict,
    "prev_hash": str,
    "hash": str,
}


def _envelope(i: int, env: Any) -> RecordedEvent:
    if not isinstance(env, dict):
        raise ImportRefused("invalid-export", f"events[{i}] is not an object")
    for name in ENVELOPE_FIELDS:
        value = env.get(name)
        if not isinstance(value, _TYPES[name]) or isinstance(value, bool):
            raise ImportRefused(
                "invalid-export", f"events[{i}].{name} is missing or not a {_TYPES[name].__name__}"
            )
    return RecordedEvent(**{name: env[name] for name in ENVELOPE_FIELDS})


@dataclass(frozen=True)
class PreparedImport:
    """An audited export, decided again as a new game: ready for one append."""

    game_id: str
    source_game_id: str
    events: list[NewEvent]
    report: AuditReport

    @property
    def command_id(self) -> str:
        return f"{IMPORTED}{self.source_game_id}"


def prepare_import(
    document: Any, game_id: str, upcasters: UpcasterRegistry | None = None
) -> PreparedImport:
    """Audit the document and decide its game again as ``game_id``; ImportRefused if it fails."""
    records = parse_events(document)
    source = records[0].game_id
    report = audit_events(records, source, upcasters)
    if not report.ok:
        first = report.discrepancies[0]
        raise ImportRefused("export-fails-audit", f"the export fails its audit: {first}", report)
    events = redecide(list(game_log.entries(records, source, 0, upcasters)), game_id)
    return PreparedImport(game_id, source, events, report)


def redecide(entries: Sequence[game_log.Entry], game_id: str) -> list[NewEvent]:
    """The events of the same game as ``game_id``, each decided again by the domain.

    ``entries`` (the game's log) must have passed the audit. Service records (the deal plan) are
    copied; joins lose their credential and their player (an imported game is nobody's
    here), and a seat's resumption (a new credential) is left out.
    """
    out: list[NewEvent] = []
    state: GameState = INITIAL_STATE
    clock: Clock | None = None  # counts timeouts in a row; the copy's times are not the source's
    pending = 0  # derived events of the last command, already emitted by its decision
    for entry in paced(entries):
        event = entry.record
        if isinstance(event, DealPlan):
            out.append(plan_event(event))
            continue
        if isinstance(event, SeedCommitted):
            out.append(event.record())
            continue
        if pending:
            pending -= 1
            continue
        if isinstance(event, e.SeatResumed):
            continue  # it only changed a credential, and the copy keeps none
        if not isinstance(event, PRIMARY):  # cannot happen after a clean audit
            name = type(event).__name__
            raise ImportRefused("export-fails-audit", f"seq {entry.seq}: {name} unasked")
        command = command_for(event)
        if isinstance(command, c.CreateGame):
            # The source's name rules: its joins are decided again as they were decided there.
            command = c.CreateGame(game_id, command.rules, command.seats, command.names)
        elif isinstance(command, c.JoinGame):
            command = c.JoinGame(command.name, command.seat, None)
        try:
            if isinstance(command, c.TimeOut):
                emitted = decide_timeout(command, state, clock, check_deadline=False)
            else:
                emitted = decide(command, state)
        except RuleViolation as error:  # cannot happen after a clean audit
            raise ImportRefused("export-fails-audit", f"seq {entry.seq}: {error}") from None
        for ev in emitted:
            state = evolve(state, ev)
            clock = tick(clock, state, ev, 0.0)
            out.append(NewEvent(e.event_type(ev), type(ev).schema_version, e.event_to_dict(ev)))
        pending = len(emitted) - 1
    return out


def _fold(entries: Iterable[game_log.Entry]) -> GameState:
    state = INITIAL_STATE
    for _, event in paced(game_log.events(entries)):
        state = evolve(state, event)
    return state
