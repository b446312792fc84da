"""Hand records: a game's events folded into one complete record per hand.

A record holds everything that happened in one hand: the rule options, the seats, the dealer, the
pass direction, the deal as dealt (and the seed it came from), each seat's passed and received
cards, every trick in order, the points taken, a shot at the moon or the sun, the score changes
and the totals. A hand is *finished* once its ``HandScored`` is in the log; until then a record
shows only what its viewer may see (see :func:`visible_to`): the public plays, and for a seat its
own cards. The seed of an unfinished hand is never shown: it would reveal every seat's cards;
nor, in a game dealt from its creator's seed, any hand's seed before the game is over.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from domain.cards import Card
from domain.decider import evolve
from domain.events import (
    CardsPassed,
    Event,
    GameEnded,
    HandDealt,
    HandScored,
    MoonScoringChosen,
    PassesExchanged,
    SeatTimedOut,
    TrickTaken,
)
from domain.secrecy import Moment, Owner, may_see, secret
from domain.state import INITIAL_STATE, GameState, Phase
from service.app import game_log
from service.store.envelope import RecordedEvent

# Who looks: a seat number, None for anyone (the public), or ALL for the server and auditors.
ALL: Literal["all"] = "all"
Viewer = int | None | Literal["all"]

Cards = tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Logged:
    """A domain event with the sequence number it has in its game's stream."""

    seq: int
    event: Event


def logged(entries: Iterable[game_log.Entry]) -> list[Logged]:
    """The domain events of a game log's entries; service records (the deal plan) left out."""
    return [Logged(seq, event) for seq, event in game_log.events(entries)]


def decode_events(recorded: Iterable[RecordedEvent]) -> list[Logged]:
    """Domain events of one game's stored envelopes, decoded by :mod:`service.app.game_log`
    (CorruptGame if the log is damaged). Service records (the deal plan) are left out."""
    return logged(game_log.entries(recorded))


@dataclass(frozen=True, slots=True)
class TrickRecord:
    number: int
    leader: int
    plays: tuple[tuple[int, Card], ...]  # (seat, card) in play order
    winner: int
    points: int
    kitty: Cards  # the kitty, taken with this trick (public, like the trick)
    seq: int  # of the TrickTaken event

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "leader": self.leader,
            "cards": [{"seat": s, "card": str(c)} for s, c in self.plays],
            "winner": self.winner,
            "points": self.points,
            "kitty": _cards(self.kitty),
            "seq": self.seq,
        }


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One hand, as complete as the viewer may see; None marks what is hidden (or not yet)."""

    number: int
    finished: bool  # HandScored is in the log: nothing is hidden any more
    first_seq: int  # of the HandDealt event
    last_seq: int  # of the last event of the hand seen so far (HandScored once finished)
    rules: dict[str, Any]
    seats: tuple[dict[str, Any], ...]  # {seat, name, bot} as the hand was dealt
    dealer: int
    pass_direction: str
    cards_to_pass: int
    seed_commitment: str
    seed: str | None  # revealed when the hand is finished
    salt: str | None  # the commitment's salt, revealed with the seed (None: format 1, unsalted)
    explicit: bool  # dealt as given, not from the seed
    dealt: tuple[Cards | None, ...]  # per seat, the hand as dealt
    kitty_dealt: Cards | None
    passed: tuple[Cards | None, ...]  # per seat, in pass order; () declined; None hidden/not yet
    has_passed: tuple[bool, ...]
    received: tuple[Cards | None, ...] | None  # per seat, once every seat has passed
    kitty_after_pass: Cards | None
    tricks: tuple[TrickRecord, ...]
    current_trick: tuple[tuple[int, Card], ...]  # the trick in play (unfinished hands)
    scores_before: tuple[int, ...]
    moon_choice: dict[str, Any] | None  # {seat, choice} when the shooter chose
    points_taken: tuple[int, ...] | None  # per seat; the rest below is None until scored
    shooter: int | None
    shot: str | None  # "moon", "sun" or None
    moon_scoring: str | None
    score_changes: tuple[int, ...] | None
    exact_limit_resets: tuple[int, ...] | None
    totals: tuple[int, ...] | None
    game_over: bool
    winners: tuple[int, ...] | None
    # The decisions the turn clock took from a seat: {seat, seq, decision, trick}, the timeout
    # bot's move right after (public, like the moves).
    timeouts: tuple[dict[str, Any], ...] = ()
    abandoned_by: int | None = None  # the seat that left during this hand, ending the game
    # The players' contributions to the hand's shuffle, (seat, text) (public).
    contributions: tuple[tuple[int, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "hand_number": self.number,
            "finished": self.finished,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "rules": self.rules,
            "seats": list(self.seats),
            "dealer": self.dealer,
            "pass_direction": self.pass_direction,
            "cards_to_pass": self.cards_to_pass,
            "seed_commitment": self.seed_commitment,
            "seed": self.seed,
            "seed_salt": self.salt,
            "explicit": self.explicit,
            "dealt": [_cards(h) for h in self.dealt],
            "kitty_dealt": _cards(self.kitty_dealt),
            "passes": [
                {
                    "seat": seat,
                    "has_passed": self.has_passed[seat],
                    "passed": _cards(self.passed[seat]),
                    "received": None if self.received is None else _cards(self.received[seat]),
                }
                for seat in range(len(self.dealt))
            ],
            "kitty_after_pass": _cards(self.kitty_after_pass),
            "tricks": [t.to_dict() for t in self.tricks],
            "current_trick": [{"seat": s, "card": str(c)} for s, c in self.current_trick],
            "scores_before": list(self.scores_before),
            "moon_choice": self.moon_choice,
            "points_taken": _ints(self.points_taken),
            "shooter": self.shooter,
            "shot": self.shot,
            "moon_scoring": self.moon_scoring,
            "score_changes": _ints(self.score_changes),
            "exact_limit_resets": _ints(self.exact_limit_resets),
            "totals": _ints(self.totals),
            "game_over": self.game_over,
            "winners": _ints(self.winners),
            "timeouts": [dict(t) for t in self.timeouts],
            "abandoned_by": self.abandoned_by,
            "contributions": [{"seat": s, "seed": text} for s, text in self.contributions],
        }


def _cards(cards: Sequence[Card] | None) -> list[str] | None:
    return None if cards is None else [str(c) for c in cards]


def _ints(values: Sequence[int] | None) -> list[int] | None:
    return None if values is None else list(values)


# -- folding --------------------------------------------------------------------------------------


@dataclass
class _Open:
    """The hand being folded (mutable while folding; frozen into a HandRecord)."""

    dealt: HandDealt
    first_seq: int
    last_seq: int
    seats: tuple[dict[str, Any], ...]
    scores_before: tuple[int, ...]
    moon_choice: MoonScoringChosen | None = None
    scored: HandScored | None = None
    ended: GameEnded | None = None
    trick_seqs: tuple[int, ...] = ()
    timeouts: tuple[dict[str, Any], ...] = ()


def hand_records(
    events: Iterable[Logged], viewer: Viewer = ALL, hide_seeds: bool = False
) -> list[HandRecord]:
    """Every hand dealt in ``events`` (one game, in seq order), as ``viewer`` may see it;
    ``hide_seeds``: a game dealt from its creator's seed and not over yet (see
    :func:`visible_to`)."""
    records = [_freeze(state, h) for state, h in _fold_hands(events)]
    return [visible_to(r, viewer, hide_seeds) for r in records]


def hand_record(
    events: Iterable[Logged], number: int, viewer: Viewer = ALL, hide_seeds: bool = False
) -> HandRecord | None:
    """Hand ``number`` (1-based) as ``viewer`` may see it; None if it has not been dealt."""
    for state, h in _fold_hands(events):
        if h.dealt.hand_number == number:
            return visible_to(_freeze(state, h), viewer, hide_seeds)
    return None


def _fold_hands(events: Iterable[Logged]) -> Iterable[tuple[GameState, _Open]]:
    """Yield (state after the hand's last event, the hand) for each hand, in order."""
    tracker = HandTracker()
    for logged in events:
        finished = tracker.feed(logged)
        if finished is not None:
            yield finished
    if tracker.current is not None:
        yield tracker.state, tracker.current


class HandTracker:
    """Folds a game's events one at a time, keeping only the state and the hand in play.

    Every event from a HandDealt up to the next one belongs to that hand (GameEnded included).
    A live stream feeds it event by event, so it never holds the whole log.
    """

    def __init__(self) -> None:
        self.state: GameState = INITIAL_STATE
        self.current: _Open | None = None

    def feed(self, logged: Logged) -> tuple[GameState, _Open] | None:
        """Fold one event; returns the previous hand, complete, when this event deals a new one."""
        event = logged.event
        done = None
        if isinstance(event, HandDealt):
            if self.current is not None:
                done = (self.state, self.current)
            seats = tuple(
                {"seat": i, "name": s.name, "bot": s.bot} for i, s in enumerate(self.state.seats)
            )
            self.current = _Open(event, logged.seq, logged.seq, seats, self.state.scores)
        if isinstance(event, SeatTimedOut) and self.current is not None:
            self.current.timeouts += (_timeout(self.state, event, logged.seq),)
        self.state = evolve(self.state, event)
        current = self.current
        if current is None:
            return done
        current.last_seq = logged.seq
        if isinstance(event, GameEnded):
            current.ended = event
        elif isinstance(event, MoonScoringChosen):
            current.moon_choice = event
        elif isinstance(event, HandScored):
            current.scored = event
        elif isinstance(event, TrickTaken):
            current.trick_seqs += (logged.seq,)
        return done

    def record(self, viewer: Viewer = ALL) -> HandRecord | None:
        """The hand in play (or the last one dealt), as ``viewer`` may see it."""
        if self.current is None:
            return None
        return visible_to(_freeze(self.state, self.current), viewer)


def _freeze(state: GameState, h: _Open) -> HandRecord:
    hand = state.hand
    assert hand is not None and hand.number == h.dealt.hand_number
    rules = state.rules
    scored = h.scored
    tricks = tuple(
        TrickRecord(t.number, t.leader, t.plays, t.winner, t.points, t.kitty, seq)
        for t, seq in zip(hand.tricks, h.trick_seqs, strict=True)
    )
    return HandRecord(
        number=hand.number,
        finished=scored is not None,
        first_seq=h.first_seq,
        last_seq=h.last_seq,
        rules=rules.to_dict(),
        seats=h.seats,
        dealer=hand.dealer,
        pass_direction=hand.pass_direction.value,
        cards_to_pass=rules.cards_to_pass(hand.pass_direction),
        seed_commitment=hand.seed_commitment,
        seed=hand.seed,
        salt=hand.salt,
        explicit=hand.explicit,
        dealt=tuple(hand.dealt),
        kitty_dealt=h.dealt.kitty,
        passed=tuple(hand.passed),
        has_passed=tuple(p is not None for p in hand.passed),
        received=hand.received,
        kitty_after_pass=hand.kitty if hand.received is not None else None,
        tricks=tricks,
        current_trick=hand.trick,
        scores_before=h.scores_before,
        moon_choice=(
            {"seat": h.moon_choice.seat, "choice": h.moon_choice.choice.value}
            if h.moon_choice is not None
            else None
        ),
        points_taken=scored.points_taken if scored else None,
        shooter=scored.shooter if scored else None,
        shot=scored.shot if scored else None,
        moon_scoring=scored.moon_scoring.value if scored and scored.moon_scoring else None,
        score_changes=scored.score_changes if scored else None,
        exact_limit_resets=scored.exact_limit_resets if scored else None,
        totals=scored.totals if scored else None,
        game_over=h.ended is not None,
        winners=h.ended.winners if h.ended is not None else None,
        timeouts=h.timeouts,
        abandoned_by=state.abandoned_by,
        contributions=h.dealt.contributions,
    )


_DECISIONS = {Phase.PASSING: "pass", Phase.PLAYING: "play", Phase.MOON_CHOICE: "moon"}


def _timeout(state: GameState, event: SeatTimedOut, seq: int) -> dict[str, Any]:
    """A timeout as a hand record shows it: which decision of which seat (the trick, for a
    play) the timeout bot made."""
    hand = state.hand
    playing = state.phase is Phase.PLAYING and hand is not None
    return {
        "seat": event.seat,
        "seq": seq,
        "decision": _DECISIONS.get(state.phase, state.phase.value),
        "trick": len(hand.tricks) + 1 if playing and hand is not None else None,
    }


# -- visibility -----------------------------------------------------------------------------------


# Each field of a record that holds a secret, and the event field it comes from.
_SECRET_FIELDS = {
    "seed": secret(HandDealt, "seed"),
    "salt": secret(HandDealt, "salt"),
    "dealt": secret(HandDealt, "hands"),
    "kitty_dealt": secret(HandDealt, "kitty"),
    "passed": secret(CardsPassed, "cards"),  # one seat's per event: per seat in a record
    "received": secret(PassesExchanged, "received"),
    "kitty_after_pass": secret(PassesExchanged, "kitty"),
}


def visible_to(record: HandRecord, viewer: Viewer, hide_seeds: bool = False) -> HandRecord:
    """The record as ``viewer`` may see it (as domain.secrecy declares): a finished hand in
    full; else public facts only (the plays and tricks, a kitty taken with a trick included),
    plus, for a seat, its own dealt, passed and received cards. ``hide_seeds``: the game was
    dealt from its creator's seed and is not over, so its hand seeds and salts stay hidden
    (``service.app.deal_plan.SEEDED_HAND_DEALT_SECRETS``)."""
    if viewer == ALL:
        return record
    if hide_seeds and (record.seed, record.salt) != (None, None):
        record = replace(record, seed=None, salt=None)
    hand = record.number
    moment = Moment(hand if record.finished else hand - 1)
    seats = range(len(record.dealt))
    hidden: dict[str, Any] = {}
    for name, s in _SECRET_FIELDS.items():
        value = getattr(record, name)
        if value is None:
            continue
        if s.owner in (Owner.SEAT, Owner.EACH_SEAT):  # one entry per seat in a record
            shown = tuple(value[i] if may_see(s, viewer, i, hand, moment) else None for i in seats)
        else:
            shown = value if may_see(s, viewer, None, hand, moment) else None
        if shown != value:
            hidden[name] = shown
    return replace(record, **hidden) if hidden else record
