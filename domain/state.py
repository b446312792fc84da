"""Game state: what folding the events gives. Frozen; ``evolve`` makes a new one per event."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .cards import ALL_CARDS, Card, cards_of
from .events import Play
from .names import NameRules
from .rules import PassDirection, RuleOptions


class Phase(Enum):
    NEW = "new"  # no game yet
    WAITING = "waiting"  # for players to join
    DEALING = "dealing"  # for the next hand to be dealt
    PASSING = "passing"
    PLAYING = "playing"
    MOON_CHOICE = "moon_choice"  # for the shooter to choose how the moon scores
    FINISHED = "finished"
    EXPIRED = "expired"  # never started: its open seats were not taken in time (GameExpired)


@dataclass(frozen=True, slots=True)
class SeatInfo:
    name: str | None = None  # None: open
    bot: str | None = None  # the strategy playing this seat, if a bot plays it
    credential: str | None = None
    player: bool = False  # a person joined this seat (a bot may still be playing it for them)
    player_id: str | None = None  # the registered player who joined it; None: a guest (or a bot)

    @property
    def guest(self) -> bool:
        """A person joined this seat without a player's key."""
        return self.player and self.player_id is None

    @property
    def is_open(self) -> bool:
        return self.name is None


@dataclass(frozen=True)  # no slots: built from a dict when a trick is taken (domain/immutable.py)
class CompletedTrick:
    number: int
    leader: int
    plays: tuple[Play, ...]
    winner: int
    points: int
    kitty: tuple[Card, ...] = ()


@dataclass(frozen=True)  # no slots: see domain/immutable.py
class HandState:
    number: int
    dealer: int
    pass_direction: PassDirection
    # Every seat's cards now, in one int: seat s holds the card mask (domain/cards.py) at bits
    # 52*s .. 52*s+51, so a play is one bit cleared and the hand is over when it is 0.
    cards: int
    kitty: tuple[Card, ...]
    seed: str
    seed_commitment: str
    explicit: bool
    dealt: tuple[tuple[Card, ...], ...]  # the hands as dealt, before the pass
    passed: tuple[tuple[Card, ...] | None, ...]  # None: not yet; (): declined
    received: tuple[tuple[Card, ...], ...] | None = None  # once every seat has passed
    leader: int | None = None
    turn: int | None = None
    trick: tuple[Play, ...] = ()
    tricks: tuple[CompletedTrick, ...] = ()
    hearts_broken: bool = False
    taken: tuple[tuple[Card, ...], ...] = ()  # cards taken per seat (kitty included)
    kitty_taken: bool = False
    salt: str | None = None  # the seed commitment's salt (None: format 1, unsalted)

    def held_by(self, seat: int) -> int:
        """The mask of the cards ``seat`` holds now."""
        return self.cards >> (52 * seat) & ALL_CARDS

    @property
    def held(self) -> tuple[int, ...]:
        """The mask of the cards each seat holds now."""
        cards = self.cards
        return tuple(cards >> (52 * s) & ALL_CARDS for s in range(len(self.passed)))

    @property
    def hands(self) -> tuple[frozenset[Card], ...]:
        """The cards each seat holds now (built from ``cards`` on each read)."""
        return tuple(frozenset(cards_of(m)) for m in self.held)

    @property
    def first_trick(self) -> bool:
        return not self.tricks

    @property
    def tricks_won(self) -> list[int]:
        """How many of this hand's tricks each seat took."""
        won = [0] * len(self.passed)
        for trick in self.tricks:
            won[trick.winner] += 1
        return won

    @property
    def cards_played(self) -> frozenset[Card]:
        done = [card for t in self.tricks for _, card in t.plays]
        return frozenset(done + [card for _, card in self.trick])


@dataclass(frozen=True)  # no slots: see domain/immutable.py
class GameState:
    game_id: str = ""
    phase: Phase = Phase.NEW
    rules: RuleOptions = RuleOptions()
    seats: tuple[SeatInfo, ...] = ()
    scores: tuple[int, ...] = ()
    hand_number: int = 0  # of the current (or last) hand
    hand: HandState | None = None
    moon_shooter: int | None = None  # while the shooter chooses
    winners: tuple[int, ...] = ()
    abandoned_by: int | None = None  # the seat that left the game, ending it (GameAbandoned)
    names: NameRules = NameRules.IDENTIFIER  # how this game's joins check names (domain/names.py)
    # The players' contributions to the next hand's shuffle so far, (seat, text) by seat.
    contributions: tuple[tuple[int, str], ...] = ()

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def open_seats(self) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self.seats) if s.is_open)


INITIAL_STATE = GameState()
