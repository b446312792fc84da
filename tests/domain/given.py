"""Given events, when a command, then events (or an error): the rules engine's test language.

    story = seated(opts(pass_cycle="hold_always")).deal("2C 3C ...", None, None, None)
    given(story).when(play_card(0, "3C")).raises(MustLeadLowestClub, "must be 2C")
    given(story).when(play_card(0, "2C")).then(CardPlayed(0, Card("2C")))

Deals are explicit: a test names the cards it cares about; a hand given as ``None`` is filled
with the lowest unused cards in deck order (so the filler is predictable too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain import (
    Card,
    ChooseMoonScoring,
    CreateGame,
    Deal,
    GameState,
    HandState,
    MoonScoring,
    PassCards,
    Phase,
    PlayCard,
    RuleOptions,
    RuleViolation,
    decide,
    fold,
    legal_plays,
    parse_cards,
    sort_cards,
)
from domain.dealing import cards_in_play
from domain.events import Event, PlayerJoined

GAME_ID = "g1"
NAMES = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay")


# -- small builders ------------------------------------------------------------------------------


def cards(text: str) -> tuple[Card, ...]:
    """``cards("2C QS 10h")`` -> (Card("2C"), Card("QS"), Card("TH"))."""
    return parse_cards(text.split())


def card_set(text: str) -> frozenset[Card]:
    return frozenset(cards(text))


def opts(**options: Any) -> RuleOptions:
    """Rule options from their JSON form (``preset`` first, then overrides), validated."""
    return RuleOptions.from_dict(options)


# Play tests skip the pass: every hand is a hold hand.
HOLD = opts(pass_cycle="hold_always")


def play_card(seat: int, card: str) -> PlayCard:
    return PlayCard(seat, Card(card))


def pass_cards(seat: int, text: str) -> PassCards:
    return PassCards(seat, cards(text))


def choose(seat: int, choice: str) -> ChooseMoonScoring:
    return ChooseMoonScoring(seat, MoonScoring(choice))


def explicit_hands(
    rules: RuleOptions, hands: Sequence[str | None], kitty: str | None = None
) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...] | None]:
    """Hands as written; a ``None`` hand (or a missing one) gets the lowest unused cards."""
    hands = list(hands) + [None] * (rules.players - len(hands))
    chosen = [cards(h) if h is not None else None for h in hands]
    fixed_kitty = cards(kitty) if kitty is not None else None
    used = {c for h in chosen if h for c in h} | set(fixed_kitty or ())
    spare = [c for c in cards_in_play(rules) if c not in used]
    out = []
    for h in chosen:
        if h is None:
            h, spare = tuple(spare[: rules.hand_size]), spare[rules.hand_size :]
        out.append(h)
    return tuple(out), fixed_kitty


# -- a story: the events so far, and the state they fold to --------------------------------------


def first_legal(legal: Sequence[Card], seat: int, state: GameState) -> Card:
    """The default play: the lowest legal card in sorted order (clubs, diamonds, spades, hearts)."""
    return legal[0]


Pick = Callable[[Sequence[Card], int, GameState], Card]


@dataclass(frozen=True)
class Story:
    events: tuple[Event, ...]
    state: GameState = field(compare=False)

    @classmethod
    def of(cls, events: Iterable[Event]) -> Story:
        events = tuple(events)
        return cls(events, fold(events))

    def then_(self, *events: Event) -> Story:
        """The story with these events appended (facts: nothing is checked)."""
        return Story(self.events + events, fold(events, self.state))

    def do(self, *commands: Any) -> Story:
        """Each command decided and its events appended; a refused command fails the test."""
        story = self
        for command in commands:
            story = story.then_(*decide(command, story.state))
        return story

    def deal(self, *hands: str | None, kitty: str | None = None, seed: str = "seed") -> Story:
        """An explicit deal of the next hand (see ``explicit_hands``)."""
        dealt, fixed_kitty = explicit_hands(self.state.rules, hands, kitty)
        return self.do(Deal(seed, dealt, fixed_kitty))

    def deal_seeded(self, seed: str) -> Story:
        return self.do(Deal(seed))

    def pass_all(self, *passes: str) -> Story:
        """Seat i passes ``passes[i]`` ("" declines, where passing is optional)."""
        return self.do(*(pass_cards(seat, text) for seat, text in enumerate(passes)))

    def play(self, *played: str) -> Story:
        """Each card played by the seat whose turn it is."""
        story = self
        for text in " ".join(played).split():
            story = story.do(PlayCard(story.hand.turn, Card(text)))  # type: ignore[arg-type]
        return story

    def play_out(self, pick: Pick = first_legal, leave: int = 0) -> Story:
        """Play legal cards (chosen by ``pick``) until ``leave`` cards are left in the hand."""
        story = self
        while story.state.phase is Phase.PLAYING and story.cards_left > leave:
            seat = story.hand.turn
            assert seat is not None
            legal = story.legal(seat)
            story = story.do(PlayCard(seat, pick(legal, seat, story.state)))
        return story

    @property
    def hand(self) -> HandState:
        assert self.state.hand is not None, "no hand dealt yet"
        return self.state.hand

    @property
    def cards_left(self) -> int:
        return sum(len(h) for h in self.hand.hands)

    def legal(self, seat: int | None = None) -> tuple[Card, ...]:
        seat = self.hand.turn if seat is None else seat
        assert seat is not None
        return sort_cards(legal_plays(self.state.rules, self.hand, seat))

    def holding(self, seat: int) -> frozenset[Card]:
        return self.hand.hands[seat]


STANDARD = RuleOptions()


def created(rules: RuleOptions = STANDARD, seats: tuple[str | None, ...] | None = None) -> Story:
    return Story.of([]).do(CreateGame(GAME_ID, rules, seats))


def seated(rules: RuleOptions = STANDARD) -> Story:
    """A game with every seat joined by a person: ready for the first deal."""
    story = created(rules)
    joins = [PlayerJoined(seat, NAMES[seat]) for seat in range(rules.players)]
    return story.then_(*joins)


# -- given / when / then -------------------------------------------------------------------------


def given(*history: Story | Event | Iterable[Event]) -> Given:
    events: list[Event] = []
    for item in history:
        if isinstance(item, Story):
            events.extend(item.events)
        elif isinstance(item, Iterable) and not isinstance(item, str):
            events.extend(item)
        else:
            events.append(item)  # type: ignore[arg-type]
    return Given(Story.of(events))


@dataclass(frozen=True)
class Given:
    story: Story

    def when(self, command: Any) -> When:
        return When(self.story, command)


@dataclass(frozen=True)
class When:
    story: Story
    command: Any

    def events(self) -> list[Event]:
        return decide(self.command, self.story.state)

    def then(self, *expected: Event) -> Story:
        """The command is accepted and causes exactly these events; the story after them."""
        got = self.events()
        assert got == list(expected), f"\nexpected {list(expected)}\n     got {got}"
        return self.story.then_(*got)

    def then_starts_with(self, *expected: Event) -> Story:
        got = self.events()
        assert got[: len(expected)] == list(expected), f"got {got}"
        return self.story.then_(*got)

    def accepted(self) -> Story:
        """The command is accepted (its events are checked elsewhere)."""
        return self.story.then_(*self.events())

    def raises(self, error: type[RuleViolation], match: str | None = None) -> RuleViolation:
        """The command is refused with exactly this error (and, if given, this message text)."""
        try:
            got = decide(self.command, self.story.state)
        except RuleViolation as violation:
            assert type(violation) is error, f"expected {error.__name__}, got {violation!r}"
            if match is not None:
                assert re.search(match, str(violation)), f"{str(violation)!r} !~ {match!r}"
            assert violation.code == error.code
            return violation
        raise AssertionError(f"expected {error.__name__}, but decide emitted {got}")
