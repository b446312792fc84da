"""Fair play: how the seats of a game used their chances to duck points, from its played cards.

A farm of colluders (issue 42) seats its main account with accounts of its own that play to
lose: each takes the tricks it could have let go, so the main account takes few points and
wins. The results alone do not tell such a table from an honest one; the plays do, measured
against what each seat could legally have played instead:

- A seat following to a trick had a *choice* when, among its legal cards, one would have taken
  the trick and another would have let it go (judged with the other seats' cards as they were
  played, by the trick's rule, ``domain.tablerules.resolve_trick``), and the trick carried
  penalty points. The leader of a trick is never judged: what a lead costs depends on what
  the others then do.
- The choice was *needless* when the seat took the trick anyway.

A careful player ducks points it can duck; a seat that plays its highest card takes them. The
figures behind the flag's thresholds (:mod:`projections.ratings`), over games of the project's
bots at a score limit of 50, the opponents' needless takes in the games a seat won, summed
(``tests/projections/test_fairplay.py`` keeps them true): behind a ``heuristic`` winner among
``heuristic`` seats 8-19% of the opponents' choices were needless takes; among ``random`` seats
(legal cards at random) 38-58%; behind a ``heuristic`` seat whose three opponents play their
highest legal card, every one (about 6 a game).

The projector records each seat's figures with the rated game (:class:`SeatPlay` per seat),
so the ratings' fold, and a rebuild, read them from the record, never from the cards again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from domain.cards import cards_of
from domain.decider import apply, draft
from domain.events import CardPlayed, Event, GameCreated, TrickTaken
from domain.legal import table_legal_mask
from domain.state import INITIAL_STATE
from domain.tablerules import TableRules, resolve_trick, table_rules


@dataclass(frozen=True, slots=True)
class SeatPlay:
    """How one seat used its choices between taking a trick with points and ducking it."""

    choices: int = 0  # tricks with points where it could have taken or ducked
    needless: int = 0  # of those, the tricks it took


def seat_plays(events: Iterable[Event]) -> tuple[SeatPlay, ...]:
    """Each seat's choices and needless takes over a game's events (in log order)."""
    state = draft(INITIAL_STATE)
    rules: TableRules | None = None
    choices: list[int] = []
    needless: list[int] = []
    legal: dict[int, int] = {}  # seat -> its legal cards (mask) when it played to this trick
    for event in events:
        if isinstance(event, CardPlayed) and state.hand is not None and rules is not None:
            legal[event.seat] = table_legal_mask(rules, state.hand, event.seat)
        elif isinstance(event, TrickTaken) and rules is not None:
            _judge(rules, event, legal, choices, needless)
            legal = {}
        apply(state, event)
        if isinstance(event, GameCreated):
            rules = table_rules(state.rules)
            choices = [0] * rules.players
            needless = [0] * rules.players
    return tuple(SeatPlay(c, n) for c, n in zip(choices, needless, strict=True))


def _judge(
    rules: TableRules,
    trick: TrickTaken,
    legal: dict[int, int],
    choices: list[int],
    needless: list[int],
) -> None:
    if trick.points <= 0:
        return  # nothing to duck
    plays = [(seat, card.index) for seat, card in trick.plays]
    for i, (seat, _) in enumerate(plays):
        if i > 0 and seat in legal:
            wins = ducks = False
            for alternative in cards_of(legal[seat]):
                tried = plays[:i] + [(seat, alternative.index)] + plays[i + 1 :]
                if resolve_trick(rules, tried)[0] == seat:
                    wins = True
                else:
                    ducks = True
            if wins and ducks:
                choices[seat] += 1
                needless[seat] += trick.winner == seat
