"""The decider: ``decide(command, state) -> events`` and ``evolve(state, event) -> state``.

``decide`` checks every rule before it emits anything, so an illegal command raises a
``RuleViolation`` and emits nothing. A command can cause several events: the play that completes
a trick also takes it; the last trick also scores the hand, and the hand may end the game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import MISSING, fields
from typing import Any

from . import commands as c
from . import events as e
from .cards import Card, InvalidCard, mask_of
from .dealing import check_explicit_deal, deal_from_seed, dealer_of
from .errors import (
    AlreadyContributed,
    AlreadyPassed,
    CardNotInHand,
    DuplicateCards,
    GameAlreadyCreated,
    GameExpired,
    GameFull,
    GameNotCreated,
    GameOver,
    InvalidCommand,
    InvalidName,
    NameConfusable,
    NameTaken,
    NoPlayerToTakeOver,
    NotAway,
    NotTheShooter,
    NotYourSeat,
    NotYourTurn,
    PassingNotOptional,
    SeatOutOfRange,
    SeatTaken,
    WrongNumberOfCards,
    WrongPhase,
)
from .legal import lowest_club, play_violation, table_legal_mask
from .names import Clash, InvalidNameText, NameRules, clash, player_name
from .passing import exchange
from .rules import FirstLead, MoonScoring, PassDirection
from .scoring import needs_shooters_choice, score_hand
from .shuffle import is_contribution, is_salt, mixed_seed, seed_commitment
from .state import INITIAL_STATE, CompletedTrick, GameState, HandState, Phase, SeatInfo
from .tablerules import resolve_trick, table_rules, takes_kitty
from .views import awaiting

_new = object.__new__
_set = object.__setattr__
# Read on every play (module constants: a global read, not a global and an attribute).
_PLAYING = Phase.PLAYING
_OVER = Phase.FINISHED  # the phase a game that was played ends in (whatever ended it)
_CreateGame = c.CreateGame
_CardPlayed = e.CardPlayed
_TrickTaken = e.TrickTaken


def decide(command: c.Command, state: GameState) -> list[e.Event]:
    """The events a command causes, or a RuleViolation (and no events) if it breaks a rule."""
    # The one guard for an ended game (a creation of its id is told it exists, as before).
    if state.phase is _OVER and type(command) is not _CreateGame:
        raise GameOver("the game is over: no command changes it")
    decider = _DECIDERS.get(type(command))  # the table first: every command passes here
    if decider is None:
        decider = _decider_for(type(command))
    return decider(command, state)


def fold(events: Iterable[e.Event], state: GameState = INITIAL_STATE) -> GameState:
    """The state after ``events``: one draft of ``state`` changed by each event in turn (below)."""
    new = draft(state)
    appliers = _APPLIERS  # apply(), inlined: this is the loop every load runs
    for event in events:
        appliers[type(event)](new, event)
    return new


# The events whose every change the next HandDealt makes afresh: the hand (its cards, passes,
# tricks), the hand's number, the phase, the moon choice (HandScored clears it before the next
# deal) and the seed contributions. Before a game's last deal they change nothing its state shows,
# so a fold may leave them out (``needed``): a load of a long game folds its scores, its seats and
# its last hand, not every play (service/app/game.py). A new event type that only changes the hand
# belongs here; tests/domain/test_properties.py checks the claim on random games of every option.
SUPERSEDED_BY_DEAL: frozenset[type[e.Event]] = frozenset(
    {
        e.HandDealt,
        e.CardsPassed,
        e.PassesExchanged,
        e.CardPlayed,
        e.TrickTaken,
        e.MoonScoringChosen,
        e.SeedContributed,
        e.SeatTimedOut,  # changes nothing at the table (a clock counts it: see _timed_out)
    }
)


def needed(events: Sequence[e.Event]) -> list[e.Event]:
    """The events of ``events`` that a fold needs: ``fold(needed(events), s) == fold(events, s)``
    for any state ``s`` they follow. Those of :data:`SUPERSEDED_BY_DEAL` before the last
    ``HandDealt`` are left out. (Not for a clock: it counts every move's time, domain/clock.py.)"""
    last = next((i for i in range(len(events) - 1, -1, -1) if type(events[i]) is e.HandDealt), 0)
    superseded = SUPERSEDED_BY_DEAL
    return [event for event in events[:last] if type(event) not in superseded] + list(events[last:])


def is_terminal(state: GameState) -> bool:
    """True once the game is over: no command can change it any more."""
    return state.phase in (Phase.FINISHED, Phase.EXPIRED)


def decide_and_evolve(command: c.Command, state: GameState) -> tuple[list[e.Event], GameState]:
    events = decide(command, state)
    return events, fold(events, state)


# -- decide ---------------------------------------------------------------------------------------


def _create(command: c.CreateGame, state: GameState) -> list[e.Event]:
    if state.phase is not Phase.NEW:
        raise GameAlreadyCreated(f"game {state.game_id} already exists")
    if not command.game_id:
        raise InvalidCommand("a game needs an id")
    # With the bounds of a recorded log: the audit decides an old game's CreateGame again with
    # the rules it was created under (e.g. a score limit above today's maximum, no hand limit).
    # A new game's bounds are from_dict's, which every way of creating one reads its rules with.
    rules = command.rules.validated(recorded=True)
    seats = command.seats if command.seats is not None else (None,) * rules.players
    if not isinstance(seats, tuple | list):
        raise InvalidCommand("seats is a list: one entry per seat")
    if len(seats) != rules.players:
        raise InvalidCommand(
            f"{rules.players} players need {rules.players} seats, not {len(seats)}"
        )
    for bot in seats:
        if bot is not None and not (isinstance(bot, str) and bot):
            raise InvalidCommand("a bot seat names its strategy")
    return [e.GameCreated(command.game_id, rules, tuple(seats), NameRules(command.names))]


def _join(command: c.JoinGame, state: GameState) -> list[e.Event]:
    _require_created(state)
    _require_not_expired(state)
    try:
        # domain/names.py: RFC 8266 nicknames, in UTS #39's identifier profile (a guest's)
        name = player_name(command.name, state.names, registered=bool(command.player_id))
    except InvalidNameText as error:
        raise InvalidName(str(error)) from None
    if not state.open_seats:
        raise GameFull("every seat is taken")
    seat = command.seat
    if seat is None:
        seat = state.open_seats[0]
    _require_seat(state, seat)
    if not state.seats[seat].is_open:
        raise SeatTaken(f"seat {seat} is taken")
    # Unique as names are compared (case, width and spacing folded), not as they are spelt,
    # and (the game's rules permitting) no look-alike of a name at the table (UTS #39).
    taken = (s.name for s in state.seats if s.player and s.name is not None)
    found = clash(name, taken, state.names)
    if found is not None and found[0] is Clash.SAME:
        raise NameTaken(f"a player called {name!r} already sits at this table")
    if found is not None:
        raise NameConfusable(f"{name!r} looks like {found[1]!r}, who sits at this table")
    return [e.PlayerJoined(seat, name, command.credential, command.player_id)]


def _resume(command: c.ResumeSeat, state: GameState) -> list[e.Event]:
    _require_created(state)
    _require_seat(state, command.seat)
    if not command.player_id or state.seats[command.seat].player_id != command.player_id:
        raise NotYourSeat(f"seat {command.seat} was not joined by this player")
    if not command.credential:
        raise InvalidCommand("a resumed seat needs a credential")
    return [e.SeatResumed(command.seat, command.credential)]


def _set_bot(command: c.SetSeatBot, state: GameState) -> list[e.Event]:
    _require_created(state)
    _require_not_expired(state)
    _require_seat(state, command.seat)
    if state.seats[command.seat].is_open:
        raise WrongPhase(f"seat {command.seat} is open: join it first")
    if command.bot is not None and not command.bot:
        raise InvalidCommand("a bot is named by its strategy")
    if command.bot is None and not state.seats[command.seat].player:
        raise NoPlayerToTakeOver(f"seat {command.seat} was dealt to a bot: no player can take it")
    if state.seats[command.seat].bot == command.bot:
        return []
    return [e.SeatControlChanged(command.seat, command.bot)]


def _deal(command: c.Deal, state: GameState) -> list[e.Event]:
    _require_phase(state, Phase.DEALING, "deal")
    if not isinstance(command.seed, str) or not command.seed:
        raise InvalidCommand("a deal needs a seed")
    if command.salt is not None and not is_salt(command.salt):
        raise InvalidCommand("a commitment's salt is 32 or more lowercase hex digits")
    if command.kitty is not None and command.hands is None:
        raise InvalidCommand("a kitty is given only with the explicit hands it completes")
    rules = state.rules
    number = state.hand_number + 1
    dealer = dealer_of(number, rules.players)
    contributions: tuple[tuple[int, str], ...] = ()
    if command.hands is not None:
        hands, kitty = check_explicit_deal(rules, command.hands, command.kitty)
    else:
        contributions = state.contributions
        hands, kitty = deal_from_seed(rules, dealer, mixed_seed(command.seed, contributions))
    direction = rules.pass_direction(number)
    return [
        e.HandDealt(
            number,
            dealer,
            direction,
            hands,
            kitty,
            command.seed,
            seed_commitment(command.seed, command.salt),
            command.hands is not None,
            command.salt,
            contributions,
        )
    ]


def _pass(command: c.PassCards, state: GameState) -> list[e.Event]:
    _require_phase(state, Phase.PASSING, "pass cards")
    hand = _hand(state)
    seat = command.seat
    _require_seat(state, seat)
    if hand.passed[seat] is not None:
        raise AlreadyPassed(f"seat {seat} has already passed")
    cards = tuple([_card(text) for text in command.cards])
    if len(set(cards)) != len(cards):
        raise DuplicateCards("a card is listed twice")
    need = state.rules.cards_to_pass(hand.pass_direction)
    if not cards and not state.rules.optional_passing:
        raise PassingNotOptional(f"you must pass {need} cards {hand.pass_direction.value}")
    if cards and len(cards) != need:
        raise WrongNumberOfCards(f"pass exactly {need} cards, not {len(cards)}")
    held = hand.held_by(seat)
    missing = [card for card in cards if not card.bit & held]
    if missing:
        raise CardNotInHand(f"you do not hold {missing[0]}")
    events: list[e.Event] = [e.CardsPassed(seat, cards)]
    passed = hand.passed[:seat] + (cards,) + hand.passed[seat + 1 :]
    if all(p is not None for p in passed):
        received, kitty = exchange(
            hand.pass_direction,
            passed,  # type: ignore[arg-type]
            hand.kitty,
            hand.dealer,
            f"{hand.seed}/mix",
            state.rules.kitty and state.rules.mix_includes_kitty,
        )
        events.append(e.PassesExchanged(received, kitty))
    return events


def _play(command: c.PlayCard, state: GameState) -> list[e.Event]:
    # The commonest command (52 a hand): the checks in the order their errors are reported,
    # written out with locals (module constants, one read of each attribute) since each step of
    # Python's here is a measurable share of a random hand (bench/README.md, "selfplay").
    if state.phase is not _PLAYING:
        _require_phase(state, Phase.PLAYING, "play a card")
    hand = state.hand
    assert hand is not None
    seat, card = command.seat, command.card
    if type(card) is not Card:
        card = _card(card)
    rules = state.rules
    r = table_rules(rules)
    players = r.players
    if type(seat) is not int or not 0 <= seat < players:
        _require_seat(state, seat)
    if hand.turn != seat:
        raise NotYourTurn(f"it is seat {hand.turn}'s turn, not seat {seat}'s")
    bit = card.bit
    if not hand.cards >> (52 * seat) & bit:
        raise CardNotInHand(f"you do not hold {card}")
    if not table_legal_mask(r, hand, seat) & bit:
        raise play_violation(rules, hand, seat, card)  # type: ignore[misc]
    played = _CardPlayed(seat, card)
    trick = hand.trick
    if len(trick) + 1 < players:
        return [played]
    plays = trick + ((seat, card),)
    # The trick rules (domain/tablerules.py), on the cards' indexes.
    winner, total, _, taken = resolve_trick(r, [(s, x.index) for s, x in plays])
    last_trick = hand.cards.bit_count() == 1  # the card played was the last one held
    kitty = hand.kitty  # () without a kitty: then takes_kitty need not be asked
    if kitty and not takes_kitty(r, hand.kitty_taken, taken, last_trick):
        kitty = ()
    points = r.points
    for x in kitty:
        total += points[x.index]
    events: list[e.Event] = [
        played,
        _TrickTaken(len(hand.tricks) + 1, winner, plays, total, kitty),
    ]
    if last_trick:
        after = fold(events, state)
        events.extend(_end_of_hand(after, None))
    return events


def _choose_moon(command: c.ChooseMoonScoring, state: GameState) -> list[e.Event]:
    _require_phase(state, Phase.MOON_CHOICE, "choose how the moon scores")
    if command.seat != state.moon_shooter:
        raise NotTheShooter(f"only seat {state.moon_shooter}, who shot the moon, chooses")
    if command.choice not in (MoonScoring.ADD_TO_OTHERS, MoonScoring.SUBTRACT_FROM_SHOOTER):
        raise InvalidCommand("choose add_to_others or subtract_from_shooter")
    chosen = e.MoonScoringChosen(command.seat, command.choice)
    return [chosen, *_end_of_hand(state, command.choice)]


def _expire(command: c.ExpireGame, state: GameState) -> list[e.Event]:
    _require_created(state)
    _require_not_expired(state)
    if state.phase is not Phase.WAITING:
        raise WrongPhase(
            f"only a game waiting for players expires: this one is {state.phase.value}"
        )
    if not isinstance(command.at, str) or not command.at:
        raise InvalidCommand("an expiry names its time")
    return [e.GameExpired(command.at)]


def _abandon(command: c.AbandonGame, state: GameState) -> list[e.Event]:
    """The awaited seat's player left a game without a turn clock (a game with one times the
    seat out instead): the game ends, the others ranked by their totals."""
    _require_created(state)
    _require_not_expired(state)
    _require_seat(state, command.seat)
    if state.phase not in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
        raise WrongPhase(f"only a game in play is abandoned: this one is {state.phase.value}")
    if state.rules.seconds_per_decision:
        raise InvalidCommand("a game with a turn clock times a silent seat out instead")
    seat = state.seats[command.seat]
    if not seat.player or seat.bot is not None:
        raise NotYourSeat(f"seat {command.seat} is played by a bot: it cannot leave")
    if command.seat not in awaiting(state):
        raise NotYourTurn(f"the game does not wait on seat {command.seat}")
    if not isinstance(command.at, str) or not command.at:
        raise InvalidCommand("an abandonment names its time")
    others = [s for s in range(state.players) if s != command.seat]
    best = min(state.scores[s] for s in others)
    winners = tuple(s for s in others if state.scores[s] == best)
    return [e.GameAbandoned(command.seat, command.at), e.GameEnded(winners, state.scores)]


def _timeout(command: c.TimeOut, state: GameState) -> list[e.Event]:
    raise InvalidCommand("a timeout is decided with the game's clock (domain.clock)")


def _return(command: c.ReturnToSeat, state: GameState) -> list[e.Event]:
    _require_created(state)
    _require_seat(state, command.seat)
    if state.phase is Phase.EXPIRED:
        raise WrongPhase("the game expired before it started")
    seat = state.seats[command.seat]
    if not seat.player:
        raise NoPlayerToTakeOver(f"seat {command.seat} was dealt to a bot: no player can take it")
    if seat.bot is None:
        raise NotAway(f"seat {command.seat} is its player's: no bot plays for it")
    return [e.SeatControlChanged(command.seat, None)]


def _contribute(command: c.ContributeSeed, state: GameState) -> list[e.Event]:
    _require_created(state)
    _require_not_expired(state)
    _require_seat(state, command.seat)
    if not state.seats[command.seat].player:
        raise NotYourSeat(f"seat {command.seat} is a bot's: only a player contributes")
    following = state.hand_number + 1
    if command.hand_number != following:
        raise WrongPhase(f"contributions are to hand {following}'s shuffle now")
    if not is_contribution(command.contribution):
        raise InvalidCommand("a contribution is 1 to 64 letters, digits, '-' or '_'")
    if any(seat == command.seat for seat, _ in state.contributions):
        raise AlreadyContributed(f"seat {command.seat} has contributed to hand {following}")
    return [e.SeedContributed(following, command.seat, command.contribution)]


def _require_not_expired(state: GameState) -> None:
    if state.phase is Phase.EXPIRED:
        raise GameExpired("the game expired before its seats were taken: create a new one")


# A table, not functools.singledispatch: its dispatch cost ~0.4 us per command, a tenth of a play.
_DECIDERS: dict[type, Callable[[Any, GameState], list[e.Event]]] = {
    c.CreateGame: _create,
    c.JoinGame: _join,
    c.ResumeSeat: _resume,
    c.SetSeatBot: _set_bot,
    c.Deal: _deal,
    c.PassCards: _pass,
    c.PlayCard: _play,
    c.ChooseMoonScoring: _choose_moon,
    c.ExpireGame: _expire,
    c.TimeOut: _timeout,
    c.AbandonGame: _abandon,
    c.ReturnToSeat: _return,
    c.ContributeSeed: _contribute,
}


def _decider_for(kind: type) -> Callable[[Any, GameState], list[e.Event]]:
    try:
        return _DECIDERS[kind]
    except KeyError:
        for base in kind.__mro__[1:]:  # a subclass of a command is decided as that command
            if base in _DECIDERS:
                return _DECIDERS[base]
    raise InvalidCommand(f"unknown command {kind.__name__}")


def _end_of_hand(state: GameState, choice: MoonScoring | None) -> list[e.Event]:
    """Score the hand (unless the shooter must choose first); end the game if it is over."""
    if state.phase is Phase.MOON_CHOICE and choice is None:
        return []  # the last trick put the shooter to their choice: they decide next
    hand = _hand(state)
    last = state.rules.is_last_hand(hand.number)  # the hand limit ends the game whatever the scores
    result = score_hand(state.rules, hand.taken, hand.tricks_won, state.scores, choice, last)
    events: list[e.Event] = [
        e.HandScored(
            hand.number,
            result.points_taken,
            result.shot.shooter if result.shot else None,
            result.shot.kind if result.shot else None,
            result.moon_scoring,
            result.score_changes,
            result.exact_limit_resets,
            result.totals,
        )
    ]
    if result.game_over:
        events.append(e.GameEnded(result.winners, result.totals))
    return events


def _card(text: object) -> Card:
    """The card a command names (a Card, or its text): events only ever hold real Cards."""
    if type(text) is Card:  # every Card is one of the 52 interned ones
        return text
    try:
        return Card(text)  # type: ignore[arg-type]
    except InvalidCard as bad:
        raise InvalidCommand(str(bad)) from None


def _require_created(state: GameState) -> None:
    if state.phase is Phase.NEW:
        raise GameNotCreated("no such game")


def _require_phase(state: GameState, phase: Phase, doing: str) -> None:
    _require_created(state)
    if state.phase is not phase:
        raise WrongPhase(f"cannot {doing} now: the game is {state.phase.value}, not {phase.value}")


def _require_seat(state: GameState, seat: object) -> None:
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state.players:
        raise SeatOutOfRange(f"seats are 0 to {state.players - 1}")


def _hand(state: GameState) -> HandState:
    assert state.hand is not None
    return state.hand


# -- evolve ---------------------------------------------------------------------------------------
#
# The state is frozen to everyone who reads it. The rules below are each written once, as the
# change an event makes to a *draft*: a GameState (with its HandState) that nobody else holds yet,
# changed in place. ``evolve`` drafts a copy and applies one event; ``fold`` drafts once and applies
# a whole log, so loading a game copies the state once instead of twice per event. A draft is
# handed out only when it is done, so a state never changes once someone else can see it.


def evolve(state: GameState, event: e.Event) -> GameState:
    """The state after one event. Pure; events are facts, so nothing is checked here."""
    new = draft(state)
    apply(new, event)
    return new


def draft(state: GameState) -> GameState:
    """A copy of ``state`` (and of its hand) that ``apply`` may change in place: for a loop that
    folds many events into one state, or decides and applies commands one after another (the
    bots' and benchmarks' simulations). Read it between changes; keep it only once done."""
    game = {**state.__dict__}
    hand = game["hand"]
    if hand is not None:
        game["hand"] = _build(HandState, {**hand.__dict__})
    return _build(GameState, game)


def apply(draft: GameState, event: e.Event) -> None:
    """Change a ``draft`` by one event: ``evolve``'s rules, in place."""
    _APPLIERS[type(event)](draft, event)


def _build(cls: type, attributes: dict[str, Any]) -> Any:
    # What the frozen classes' own __init__ would set, set at once (see domain/immutable.py).
    obj = _new(cls)
    _set(obj, "__dict__", attributes)
    return obj


def _created(game: GameState, event: e.GameCreated) -> None:
    seats = tuple(SeatInfo(name=bot, bot=bot) if bot else SeatInfo() for bot in event.seats)
    phase = Phase.WAITING if any(s.is_open for s in seats) else Phase.DEALING
    created = GameState(
        game_id=event.game_id,
        phase=phase,
        rules=event.rules,
        seats=seats,
        scores=(0,) * event.rules.players,
        names=event.names,
    )
    game.__dict__.update(created.__dict__)


def _joined(game: GameState, event: e.PlayerJoined) -> None:
    seat = SeatInfo(
        name=event.name, credential=event.credential, player=True, player_id=event.player_id
    )
    seats = _put(game.seats, event.seat, seat)
    changes = game.__dict__
    changes["seats"] = seats
    changes["phase"] = Phase.WAITING if any(s.is_open for s in seats) else Phase.DEALING


def _control_changed(game: GameState, event: e.SeatControlChanged) -> None:
    before = game.seats[event.seat]
    seat = SeatInfo(before.name, event.bot, before.credential, before.player, before.player_id)
    game.__dict__["seats"] = _put(game.seats, event.seat, seat)


def _resumed(game: GameState, event: e.SeatResumed) -> None:
    before = game.seats[event.seat]
    seat = SeatInfo(before.name, before.bot, event.credential, before.player, before.player_id)
    game.__dict__["seats"] = _put(game.seats, event.seat, seat)


def _dealt(game: GameState, event: e.HandDealt) -> None:
    n = game.players
    # The new hand's attributes as one dict set whole (domain/immutable.py), the fields not
    # given here at their defaults: what HandState(...) would hold, without its frozen __init__'s
    # twenty object.__setattr__ calls (every deal runs this; the hand is then read and changed
    # ~70 times before the next deal).
    attributes = _HAND_DEFAULTS.copy()
    attributes.update(
        number=event.hand_number,
        dealer=event.dealer,
        pass_direction=event.pass_direction,
        cards=sum([mask_of(h) << (52 * s) for s, h in enumerate(event.hands)]),
        kitty=event.kitty,
        seed=event.seed,
        seed_commitment=event.seed_commitment,
        explicit=event.explicit,
        salt=event.salt,
        dealt=event.hands,
        passed=(None,) * n,
        taken=((),) * n,
    )
    hand = _build(HandState, attributes)
    changes = game.__dict__
    changes["hand_number"] = event.hand_number
    changes["hand"] = hand
    changes["contributions"] = ()  # spent on this hand: the next one starts afresh
    if event.pass_direction is PassDirection.HOLD:
        changes["phase"] = Phase.PLAYING
        _start_play(game, hand)
    else:
        changes["phase"] = Phase.PASSING


# Every field of HandState in its order, at its default (None where it has none: _dealt sets
# those), so a dealt hand's dict has the same keys in the same order as one built by __init__.
_HAND_DEFAULTS: dict[str, Any] = {
    f.name: None if f.default is MISSING else f.default for f in fields(HandState)
}


def _start_play(game: GameState, hand: HandState) -> None:
    leader = first_leader(game, hand)
    changes = hand.__dict__
    changes["leader"] = changes["turn"] = leader


def first_leader(state: GameState, hand: HandState) -> int:
    """The holder of the lowest club leads, or the dealer's left, as the rules say."""
    if state.rules.first_lead is FirstLead.LOWEST_CLUB:
        holders = [(lowest_club(h), s) for s, h in enumerate(hand.held)]
        held = [(card.rank, s) for card, s in holders if card is not None]
        if held:
            return min(held)[1]
    return (hand.dealer + 1) % state.players


def _passed(game: GameState, event: e.CardsPassed) -> None:
    hand = _hand(game)
    changes = hand.__dict__
    changes["cards"] = hand.cards & ~(mask_of(event.cards) << (52 * event.seat))
    changes["passed"] = _put(hand.passed, event.seat, event.cards)


def _exchanged(game: GameState, event: e.PassesExchanged) -> None:
    hand = _hand(game)
    changes = hand.__dict__
    received = sum(mask_of(cards) << (52 * s) for s, cards in enumerate(event.received))
    changes["cards"] = hand.cards | received
    changes["received"] = event.received
    changes["kitty"] = event.kitty
    game.__dict__["phase"] = Phase.PLAYING
    _start_play(game, hand)


def _played(game: GameState, event: e.CardPlayed) -> None:
    hand = game.hand
    assert hand is not None
    rules = game.rules
    card: Card = event.card
    seat = event.seat
    # Read and written in the draft's own dict: the hand is a plain-attribute dataclass, so
    # this is what its attribute reads would do, without looking for a descriptor first.
    changes = hand.__dict__
    changes["cards"] = changes["cards"] & ~(card.bit << (52 * seat))
    changes["trick"] = changes["trick"] + ((seat, card),)
    changes["turn"] = (seat + 1) % rules.players
    # breaks_hearts (domain/tablerules.py) read as its compiled mask: every fold plays here.
    if not changes["hearts_broken"] and card.bit & table_rules(rules).breaks_hearts:
        changes["hearts_broken"] = True


def _trick_taken(game: GameState, event: e.TrickTaken) -> None:
    hand = game.hand
    assert hand is not None
    plays = event.plays
    winner = event.winner
    kitty = event.kitty
    done = _build(
        CompletedTrick,
        {
            "number": event.trick_number,
            "leader": plays[0][0],
            "plays": plays,
            "winner": winner,
            "points": event.points,
            "kitty": kitty,
        },
    )
    changes = hand.__dict__
    taken = changes["taken"]
    won = taken[winner] + tuple([card for _, card in plays]) + kitty
    hand_over = not changes["cards"]
    changes["trick"] = ()
    changes["tricks"] = changes["tricks"] + (done,)
    changes["taken"] = taken[:winner] + (won,) + taken[winner + 1 :]
    if kitty:
        changes["kitty_taken"] = True
    changes["leader"] = changes["turn"] = None if hand_over else winner
    if hand_over:
        shooter = needs_shooters_choice(game.rules, hand.taken, hand.tricks_won)
        if shooter is not None:
            game.__dict__["phase"] = Phase.MOON_CHOICE
            game.__dict__["moon_shooter"] = shooter


def _moon_chosen(game: GameState, event: e.MoonScoringChosen) -> None:
    game.__dict__["moon_shooter"] = None


def _scored(game: GameState, event: e.HandScored) -> None:
    changes = game.__dict__
    changes["scores"] = event.totals
    changes["phase"] = Phase.DEALING
    changes["moon_shooter"] = None


def _ended(game: GameState, event: e.GameEnded) -> None:
    changes = game.__dict__
    changes["phase"] = Phase.FINISHED
    changes["winners"] = event.winners
    changes["scores"] = event.totals


def _expired(game: GameState, event: e.GameExpired) -> None:
    game.__dict__["phase"] = Phase.EXPIRED


def _abandoned(game: GameState, event: e.GameAbandoned) -> None:
    game.__dict__["abandoned_by"] = event.seat


def _timed_out(game: GameState, event: e.SeatTimedOut) -> None:
    """Nothing at the table changes: the clock (domain/clock.py) counts it, and the timeout
    bot's move follows as its own events."""


def _contributed(game: GameState, event: e.SeedContributed) -> None:
    own = (event.seat, event.contribution)
    game.__dict__["contributions"] = tuple(sorted((*game.contributions, own)))


def _put(items: tuple, index: int, value: object) -> tuple:
    return items[:index] + (value,) + items[index + 1 :]


_APPLIERS: dict[type, Callable[[GameState, Any], None]] = {
    e.GameCreated: _created,
    e.PlayerJoined: _joined,
    e.SeatResumed: _resumed,
    e.SeatControlChanged: _control_changed,
    e.HandDealt: _dealt,
    e.CardsPassed: _passed,
    e.PassesExchanged: _exchanged,
    e.CardPlayed: _played,
    e.TrickTaken: _trick_taken,
    e.MoonScoringChosen: _moon_chosen,
    e.HandScored: _scored,
    e.GameEnded: _ended,
    e.GameExpired: _expired,
    e.SeatTimedOut: _timed_out,
    e.GameAbandoned: _abandoned,
    e.SeedContributed: _contributed,
}
