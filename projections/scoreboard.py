"""The per-game scoreboard, and the fold that builds it one logged event at a time.

:func:`apply` is pure: given a game's scoreboard (None before its first event) and the next event
of that game, it returns the new scoreboard and what the event adds to the player statistics
(:class:`~projections.stats.StatDelta`) and to players' lists of games (:class:`Listing`). The
projector stores all three in one atomic step; folding a game's events from the start with
:func:`fold_game` gives the same result.

A seat's player is the name that joined it, or, for a seat created as a bot, the bot's strategy
name. A seat later handed to a bot still counts for the player who joined it in the statistics
(for the ratings the player left it: :attr:`SeatRecord.left`). The statistics are
kept per *who* (:func:`projections.stats.who`): a registered player's seats (joined with its key)
count under its player id, a guest's and a bot's under the name, so a guest typing a registered
player's name never writes that player's figures. A finished rated game is also recorded for the
ratings (:mod:`projections.ratings`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from domain.cards import QUEEN_OF_SPADES, Card, Suit
from domain.events import (
    Event,
    GameAbandoned,
    GameCreated,
    GameEnded,
    GameExpired,
    HandDealt,
    HandScored,
    PlayerJoined,
    SeatControlChanged,
    SeatTimedOut,
    TrickTaken,
)
from domain.immutable import replacer

from .ratings import RatedGame, rated_table
from .stats import StatDelta, who

STATUS_WAITING = "waiting"  # seats still open, or no hand dealt yet
STATUS_PLAYING = "playing"
STATUS_FINISHED = "finished"
STATUS_EXPIRED = "expired"  # never started: its seats were not all taken in time

# Only these change a scoreboard; every other event just moves its seq on (so the service need
# not even decode the others: see service.app.game_log.sources).
RELEVANT = (
    GameCreated,
    PlayerJoined,
    SeatControlChanged,
    HandDealt,
    TrickTaken,
    HandScored,
    GameEnded,
    GameExpired,
    SeatTimedOut,
    GameAbandoned,
)


class ProjectionGap(ValueError):
    """An event arrived whose predecessor was never applied: the log lost an event."""


@dataclass(frozen=True, slots=True)
class SourceEvent:
    """One event as the projections see it: a game's event at a position of the log.

    ``event`` is the domain event, already decoded by the service; None for a record of the
    service's own (not a domain event), or for an event of a type no read model uses (not
    :data:`RELEVANT`: the service may leave those undecoded, with ``time`` empty): either only
    moves the game's seq on.
    """

    game_id: str
    seq: int
    event: Event | None
    time: str  # ISO-8601 UTC, as recorded
    position: str = ""  # where in the log it was read (a stream id); informational
    # The service's record that the game's creator chose its deals (a seed or explicit deals):
    # the game is "arranged", and its figures stay out of the player statistics unless the
    # operator counts arranged games (``apply``'s ``count_arranged``).
    arranged: bool = False
    # On a GameCreated: the game was imported from an export, not played here. Its figures stay
    # out of the player statistics (the game was counted where it was played, or is the copy of
    # one counted here), whatever the operator counts.
    imported: bool = False


@dataclass(frozen=True, slots=True)
class Listing:
    """Game ``game_id`` belongs to player ``name``'s games, ordered by ``score`` (start time)."""

    name: str
    game_id: str
    score: int  # microseconds since the Unix epoch


@dataclass(frozen=True, slots=True)
class SeatRecord:
    seat: int
    name: str | None  # None: open
    bot: str | None  # the strategy playing the seat now, if a bot does
    player_id: str | None = None  # the registered player who joined it with its key
    # The person who joined it handed it to a bot at some moment (taking it back or not): for
    # the ratings, they left the game (projections.ratings).
    left: bool = False

    @property
    def who(self) -> str | None:
        """Whose figures the seat counts in (None: an open seat)."""
        return None if self.name is None else who(self.name, self.player_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "name": self.name,
            "bot": self.bot,
            "player_id": self.player_id,
            "left": self.left,
        }


@dataclass(frozen=True)  # no slots: domain.immutable.replacer copies its __dict__
class HandRecord:
    hand_number: int
    dealer: int
    pass_direction: str
    tricks_won: tuple[int, ...]
    penalty_cards_taken: tuple[int, ...]  # per seat: cards of the penalty suit (kitty included)
    queen_of_spades: int | None = None  # the seat that took it
    scored: bool = False
    points_taken: tuple[int, ...] | None = None  # per seat, as taken
    shot: str | None = None  # "moon", "sun" or None
    shooter: int | None = None
    moon_scoring: str | None = None
    score_changes: tuple[int, ...] | None = None
    exact_limit_resets: tuple[int, ...] = ()
    totals: tuple[int, ...] | None = None  # running totals after the hand

    def to_dict(self) -> dict[str, Any]:
        return {
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "pass_direction": self.pass_direction,
            "tricks_won": list(self.tricks_won),
            "penalty_cards_taken": list(self.penalty_cards_taken),
            "queen_of_spades": self.queen_of_spades,
            "scored": self.scored,
            "points_taken": _list_or_none(self.points_taken),
            "shot": self.shot,
            "shooter": self.shooter,
            "moon_scoring": self.moon_scoring,
            "score_changes": _list_or_none(self.score_changes),
            "exact_limit_resets": list(self.exact_limit_resets),
            "totals": _list_or_none(self.totals),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HandRecord:
        return cls(
            hand_number=data["hand_number"],
            dealer=data["dealer"],
            pass_direction=data["pass_direction"],
            tricks_won=tuple(data["tricks_won"]),
            penalty_cards_taken=tuple(data["penalty_cards_taken"]),
            queen_of_spades=data["queen_of_spades"],
            scored=data["scored"],
            points_taken=_tuple_or_none(data["points_taken"]),
            shot=data["shot"],
            shooter=data["shooter"],
            moon_scoring=data["moon_scoring"],
            score_changes=_tuple_or_none(data["score_changes"]),
            exact_limit_resets=tuple(data["exact_limit_resets"]),
            totals=_tuple_or_none(data["totals"]),
        )


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int  # 1 for the lowest total; tied totals share a rank
    seat: int
    name: str | None
    total: int
    winner: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "seat": self.seat,
            "name": self.name,
            "total": self.total,
            "winner": self.winner,
        }


@dataclass(frozen=True)  # no slots: domain.immutable.replacer copies its __dict__
class Scoreboard:
    game_id: str
    seq: int  # the last event of the game applied
    position: str  # the log position of that event
    status: str
    rules: Mapping[str, Any]
    penalty_suit: str  # the suit letter: "H", or "D"
    seats: tuple[SeatRecord, ...]
    hands: tuple[HandRecord, ...] = ()
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    arranged: bool = False  # the creator chose the deals: see SourceEvent.arranged
    imported: bool = False  # imported from an export: see SourceEvent.imported
    abandoned_by: int | None = None  # the seat that left, ending the game (GameAbandoned)

    @property
    def standings(self) -> tuple[Standing, ...]:
        """Seats from the lowest total up (the final standings once the game is over)."""
        order = sorted(range(len(self.totals)), key=lambda s: (self.totals[s], s))
        out = []
        for place, seat in enumerate(order):
            total = self.totals[seat]
            tied = place > 0 and total == self.totals[order[place - 1]]
            rank = out[-1].rank if tied else place + 1
            out.append(Standing(rank, seat, self.seats[seat].name, total, seat in self.winners))
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seq": self.seq,
            "position": self.position,
            "status": self.status,
            "rules": dict(self.rules),
            "penalty_suit": self.penalty_suit,
            "seats": [s.to_dict() for s in self.seats],
            "hands": [h.to_dict() for h in self.hands],
            "totals": list(self.totals),
            "winners": list(self.winners),
            "standings": [s.to_dict() for s in self.standings],
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "arranged": self.arranged,
            "imported": self.imported,
            "abandoned_by": self.abandoned_by,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scoreboard:
        return cls(
            game_id=data["game_id"],
            seq=data["seq"],
            position=data["position"],
            status=data["status"],
            rules=data["rules"],
            penalty_suit=data["penalty_suit"],
            seats=tuple(
                SeatRecord(s["seat"], s["name"], s["bot"], s.get("player_id"), s.get("left", False))
                for s in data["seats"]
            ),
            hands=tuple(HandRecord.from_dict(h) for h in data["hands"]),
            totals=tuple(data["totals"]),
            winners=tuple(data["winners"]),
            created_at=data["created_at"],
            started_at=data["started_at"],
            finished_at=data["finished_at"],
            arranged=data.get("arranged", False),  # boards stored before arranged games
            imported=data.get("imported", False),
            abandoned_by=data.get("abandoned_by"),  # boards stored before abandonment
        )


# Copies with changes, made on nearly every event a projector applies.
_board = replacer(Scoreboard)
_hand = replacer(HandRecord)


@dataclass(frozen=True, slots=True)
class Applied:
    """What one event did: the new scoreboard and its effects on the players' figures."""

    board: Scoreboard | None
    deltas: tuple[StatDelta, ...] = ()
    listings: tuple[Listing, ...] = ()
    applied: bool = True  # False: the event was applied before (a no-op)
    rated: tuple[RatedGame, ...] = ()  # the game just finished and is rated


def apply(board: Scoreboard | None, event: SourceEvent, count_arranged: bool = False) -> Applied:
    """The scoreboard after ``event`` and the event's effects on the statistics.

    An event the board already holds (``seq`` not above ``board.seq``) is a no-op; an event
    that skips a seq raises :class:`ProjectionGap`. An arranged game (its deals chosen by its
    creator) adds nothing to the statistics unless ``count_arranged``; its players' lists of
    games still name it.
    """
    applied = _apply(board, event)
    board_after = applied.board
    counted = board_after is None or (
        (count_arranged or not board_after.arranged) and not board_after.imported
    )
    if applied.deltas and not counted:
        applied = Applied(applied.board, (), applied.listings, applied.applied)
    if applied.applied and isinstance(event.event, GameEnded) and board_after is not None:
        rated = rated_game(board_after, event.time)
        if rated is not None:
            applied = replace(applied, rated=(rated,))
    return applied


def rated_game(board: Scoreboard, finished_at: str) -> RatedGame | None:
    """The record of a finished game for the ratings, if its table is rated
    (:func:`projections.ratings.rated_table`) and somebody played it out: the fold decides
    the rest (who left, repeated tables)."""
    ids = [s.player_id for s in board.seats]
    rated = rated_table(
        ids,
        int(board.rules.get("score_limit", 0)),
        # The time control is recorded as its seconds (``time_control`` is a preset of them);
        # a game recorded before the clock has none: unrated, as it has no clock.
        seconds_per_decision=int(board.rules.get("seconds_per_decision") or 0),
        arranged=board.arranged,
        imported=board.imported,
    )
    if board.status != STATUS_FINISHED or not rated or all(s.left for s in board.seats):
        return None
    seats = tuple((str(p), total) for p, total in zip(ids, board.totals, strict=True))
    # A seat that left (handed to a bot, or away on the clock) ranks last: a loss. (A game
    # abandoned by a silent seat is clockless, so never rated: rated_table.)
    left = frozenset(str(s.player_id) for s in board.seats if s.left)
    return RatedGame(board.game_id, time_score(finished_at), finished_at, seats, left)


def _apply(board: Scoreboard | None, event: SourceEvent) -> Applied:
    current = board.seq if board is not None else 0
    if event.seq <= current:
        return Applied(board, applied=False)
    if event.seq != current + 1:
        raise ProjectionGap(f"game {event.game_id!r}: event {event.seq} arrived after {current}")
    domain_event = event.event
    if event.arranged and board is not None:
        return Applied(_board(board, seq=event.seq, position=event.position, arranged=True))
    if not isinstance(domain_event, RELEVANT):
        if board is None:
            raise ProjectionGap(f"game {event.game_id!r}: first event is a {_name(domain_event)}")
        return Applied(_board(board, seq=event.seq, position=event.position))
    if isinstance(domain_event, GameCreated):
        return Applied(_created(domain_event, event))
    if board is None:
        raise ProjectionGap(f"game {event.game_id!r}: first event is a {_name(domain_event)}")
    board = _board(board, seq=event.seq, position=event.position)
    if isinstance(domain_event, PlayerJoined):
        seat = domain_event.seat
        return Applied(_seat(board, seat, name=domain_event.name, player_id=domain_event.player_id))
    if isinstance(domain_event, SeatControlChanged):
        record = board.seats[domain_event.seat]
        # A person's seat (no bot played it) handed to a bot, by its player or by the clock
        # (away after timeouts in a row): its player left.
        left = record.left or (domain_event.bot is not None and record.bot is None)
        return Applied(
            _seat(
                board,
                domain_event.seat,
                name=record.name,
                bot=domain_event.bot,
                player_id=record.player_id,
                left=left,
            )
        )
    if isinstance(domain_event, HandDealt):
        return _dealt(board, domain_event, event)
    if isinstance(domain_event, TrickTaken):
        return _trick(board, domain_event)
    if isinstance(domain_event, HandScored):
        return _scored(board, domain_event)
    if isinstance(domain_event, GameExpired):
        return Applied(_board(board, status=STATUS_EXPIRED))
    if isinstance(domain_event, GameAbandoned):  # GameEnded follows: it ends the game
        return Applied(_board(board, abandoned_by=domain_event.seat))
    if isinstance(domain_event, SeatTimedOut):
        name = board.seats[domain_event.seat].who
        return Applied(board, (StatDelta(name, "timeouts", 1),) if name is not None else ())
    assert isinstance(domain_event, GameEnded)
    return _ended(board, domain_event, event)


def fold_game(
    events: Iterable[SourceEvent], board: Scoreboard | None = None, count_arranged: bool = False
) -> Applied:
    """Apply events in order; the effects of all of them together."""
    deltas: list[StatDelta] = []
    listings: list[Listing] = []
    rated: list[RatedGame] = []
    for event in events:
        result = apply(board, event, count_arranged)
        board = result.board
        deltas += result.deltas
        listings += result.listings
        rated += result.rated
    return Applied(board, tuple(deltas), tuple(listings), rated=tuple(rated))


def _name(event: Event | None) -> str:
    return type(event).__name__ if event is not None else "service record"


def skip(board: Scoreboard | None, game_id: str, first: int, last: int, position: str) -> Applied:
    """What applying events ``first..last`` of a game, none of them :data:`RELEVANT`, does:
    the same as :func:`apply` one by one (``position`` is the last one's), with one copy.
    """
    current = board.seq if board is not None else 0
    if last <= current:
        return Applied(board, applied=False)
    if first > current + 1:
        raise ProjectionGap(f"game {game_id!r}: event {first} arrived after {current}")
    if board is None:
        raise ProjectionGap(f"game {game_id!r}: its first event is not a GameCreated")
    return Applied(_board(board, seq=last, position=position))


def time_score(time: str) -> int:
    """Microseconds since the Unix epoch of an ISO-8601 time (UTC if it names no zone)."""
    try:
        parsed = datetime.fromisoformat(time)
    except (TypeError, ValueError):
        return 0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


# -- one function per event that matters ------------------------------------------------------


def _created(created: GameCreated, event: SourceEvent) -> Scoreboard:
    rules = created.rules
    return Scoreboard(
        game_id=event.game_id,
        seq=event.seq,
        position=event.position,
        status=STATUS_WAITING,
        rules=rules.to_dict(),
        penalty_suit=rules.penalty_suit.value,
        seats=tuple(SeatRecord(i, bot, bot) for i, bot in enumerate(created.seats)),
        totals=(0,) * rules.players,
        created_at=event.time,
        imported=event.imported,
    )


def _seat(
    board: Scoreboard,
    seat: int,
    *,
    name: str | None,
    bot: str | None = None,
    player_id: str | None = None,
    left: bool = False,
) -> Scoreboard:
    seats = list(board.seats)
    seats[seat] = SeatRecord(seat, name, bot, player_id, left)
    return _board(board, seats=tuple(seats))


def _dealt(board: Scoreboard, dealt: HandDealt, event: SourceEvent) -> Applied:
    n = len(board.seats)
    hand = HandRecord(
        hand_number=dealt.hand_number,
        dealer=dealt.dealer,
        pass_direction=dealt.pass_direction.value,
        tricks_won=(0,) * n,
        penalty_cards_taken=(0,) * n,
    )
    board = _board(board, hands=board.hands + (hand,))
    if board.started_at is not None:
        return Applied(board)
    # The first deal starts the game: from here on it counts as played.
    board = _board(board, status=STATUS_PLAYING, started_at=event.time)
    score = time_score(event.time)
    names = [s.who for s in board.seats if s.who is not None]
    return Applied(
        board,
        deltas=tuple(StatDelta(name, "games_played", 1) for name in names),
        listings=tuple(Listing(name, board.game_id, score) for name in names),
    )


def _trick(board: Scoreboard, trick: TrickTaken) -> Applied:
    hand = board.hands[-1]
    cards: list[Card] = [card for _, card in trick.plays] + list(trick.kitty)
    suit = Suit(board.penalty_suit)
    penalty = sum(1 for card in cards if card.suit is suit)
    took_queen = QUEEN_OF_SPADES in cards
    w = trick.winner
    hand = _hand(
        hand,
        tricks_won=_bump(hand.tricks_won, w, 1),
        penalty_cards_taken=_bump(hand.penalty_cards_taken, w, penalty),
        queen_of_spades=w if took_queen else hand.queen_of_spades,
    )
    name = board.seats[w].who
    deltas = []
    if name is not None:
        if penalty:
            deltas.append(StatDelta(name, "hearts_taken", penalty))
        if took_queen:
            deltas.append(StatDelta(name, "qs_taken", 1))
    return Applied(_board(board, hands=board.hands[:-1] + (hand,)), tuple(deltas))


def _scored(board: Scoreboard, scored: HandScored) -> Applied:
    hand = _hand(
        board.hands[-1],
        scored=True,
        points_taken=scored.points_taken,
        shot=scored.shot,
        shooter=scored.shooter,
        moon_scoring=scored.moon_scoring.value if scored.moon_scoring is not None else None,
        score_changes=scored.score_changes,
        exact_limit_resets=scored.exact_limit_resets,
        totals=scored.totals,
    )
    deltas = []
    for seat, record in enumerate(board.seats):
        name = record.who
        if name is None:
            continue
        deltas += [
            StatDelta(name, "hands_played", 1),
            StatDelta(name, "points_sum", scored.score_changes[seat]),
            StatDelta(name, "points_taken_sum", scored.points_taken[seat]),
        ]
        if scored.shooter == seat and scored.shot in ("moon", "sun"):
            deltas.append(StatDelta(name, f"{scored.shot}s_shot", 1))
        if scored.points_taken[seat] == 0:
            streak = _clean_streak(board.hands[:-1], seat) + 1
            deltas.append(StatDelta(name, "longest_clean_streak", streak))  # merged by max
    board = _board(board, hands=board.hands[:-1] + (hand,), totals=scored.totals)
    return Applied(board, tuple(deltas))


def _clean_streak(hands: Sequence[HandRecord], seat: int) -> int:
    """How many of the game's last scored hands in a row ``seat`` took no point in."""
    run = 0
    for hand in reversed(hands):
        if not hand.scored or hand.points_taken is None or hand.points_taken[seat] != 0:
            break
        run += 1
    return run


def _ended(board: Scoreboard, ended: GameEnded, event: SourceEvent) -> Applied:
    deltas = []
    for seat, record in enumerate(board.seats):
        name = record.who
        if name is None:
            continue
        deltas += [
            StatDelta(name, "games_finished", 1),
            StatDelta(name, "final_score_sum", ended.totals[seat]),
        ]
        if seat in ended.winners:
            deltas.append(StatDelta(name, "wins", 1))
    board = _board(
        board,
        status=STATUS_FINISHED,
        totals=ended.totals,
        winners=ended.winners,
        finished_at=event.time,
    )
    return Applied(board, tuple(deltas))


def _bump(values: tuple[int, ...], index: int, amount: int) -> tuple[int, ...]:
    return values[:index] + (values[index] + amount,) + values[index + 1 :]


def _list_or_none(values: tuple[int, ...] | None) -> list[int] | None:
    return list(values) if values is not None else None


def _tuple_or_none(values: list[int] | None) -> tuple[int, ...] | None:
    return tuple(values) if values is not None else None
