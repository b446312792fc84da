"""The API's JSON bodies as typed dicts (field for field as /api/v1/openapi.json documents them)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Phase = Literal["waiting", "dealing", "passing", "playing", "moon_choice", "finished", "expired"]
MoonChoice = Literal["add_to_others", "subtract_from_shooter"]
# What an event of a game's log may be: the domain's events and the service's records.
EventType = Literal[
    "GameCreated",
    "PlayerJoined",
    "SeatResumed",
    "SeatControlChanged",
    "HandDealt",
    "CardsPassed",
    "PassesExchanged",
    "CardPlayed",
    "TrickTaken",
    "MoonScoringChosen",
    "HandScored",
    "GameEnded",
    "GameExpired",
    "SeatTimedOut",
    "GameAbandoned",  # the seat's player left (silent too long, no clock); GameEnded follows
    "SeedContributed",
    "DealPlan",
    "SeedCommitted",
]


class SeatSummary(TypedDict):
    seat: int
    name: str | None
    bot: str | None


class Created(TypedDict):
    id: str
    version: int
    seats: list[SeatSummary]
    private: bool
    # A private table's only: its join code (shown once) and the web table's invitation link
    # (relative to the server) that carries it.
    join_code: NotRequired[str]
    invitation: NotRequired[str]


class PlayedCard(TypedDict):
    seat: int
    card: str


class Trick(TypedDict):
    number: int
    leader: int
    cards: list[PlayedCard]
    winner: int | None
    points: int | None


class SeatPublic(TypedDict):
    seat: int
    name: str | None
    bot: str | None
    player_id: str | None
    guest: bool
    hand_size: int
    points_this_hand: int
    has_passed: bool


class SeatClock(TypedDict):
    seat: int
    reserve_seconds: float
    deadline: str | None  # ISO-8601 UTC: when the seat's time to decide runs out
    timeouts: int
    timeouts_in_a_row: int
    away: bool  # a bot plays the seat until its player comes back (Seat.back())


class Clock(TypedDict):
    seconds_per_decision: int
    seats: list[SeatClock]


class Contribution(TypedDict):
    seat: int
    seed: str


class NextDeal(TypedDict):
    hand_number: int
    seed_commitment: str  # the server's seed for that hand, committed before contributions
    contributions: list[Contribution]


class Shot(TypedDict):
    kind: Literal["moon", "sun"]
    points: int  # the rules' moon points (26 in a standard deck), twice that for the sun


class PublicView(TypedDict):
    id: str
    version: int
    phase: Phase
    rules: dict[str, Any]
    hand_number: int
    dealer: int | None
    pass_direction: str | None
    turn: int | None
    awaiting: list[int]
    current_trick: list[PlayedCard]
    tricks: list[Trick]
    hearts_broken: bool
    scores: list[int]
    seats: list[SeatPublic]
    seed_commitment: str | None
    arranged: bool  # the creator chose the deals (a seed or explicit deals)
    imported: bool  # imported from an export, not played here (left out of the statistics)
    moon_shooter: int | None
    shot: Shot | None  # while the shooter chooses how it scores (phase moon_choice)
    winners: list[int]
    abandoned_by: int | None  # the seat that left, ending the game (GameAbandoned)
    clock: Clock | None  # the turn clock; None for a game without one
    next_deal: NextDeal | None  # None when the creator chose the deals (Seat.contribute())
    imported_from: str | None  # an imported game's original id (the export's); else None


class SeatView(PublicView):
    seat: int
    hand: list[str]
    legal_cards: list[str]
    passed_cards: list[str] | None
    received_cards: list[str]
    cards_to_pass: int


class Joined(TypedDict):
    seat: int
    token: str
    version: int
    view: SeatView


class Event(TypedDict):
    seq: int
    type: EventType
    schema_version: int
    time: str
    command_id: str
    payload: dict[str, Any]
    redacted: bool
    # Only on a HandScored event: the finished hand's record (as ``HeartsClient.hand`` gives it).
    revealed_hand: NotRequired[dict[str, Any] | None]


class CommandResult(TypedDict):
    version: int
    view: SeatView
    events: list[Event]


class DamagedGame(TypedDict):
    id: str
    detail: str


class GameList(TypedDict):
    games: list[PublicView]
    next_cursor: str | None
    # Only when some game of the page could not be read (a damaged archived object).
    damaged: NotRequired[list[DamagedGame]]
