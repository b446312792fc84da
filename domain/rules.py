"""Rule options: every variant the seed documents describe, chosen when a game is created.

Where the seeds disagree, the disagreement is an option here. ``RuleOptions()`` is the standard
game; ``RuleOptions.from_dict({"preset": "omnibus", "score_limit": 50})`` picks a preset and
overrides it option by option. Every option set is validated; a combination that makes no sense
is refused with ``InvalidRules`` naming the reason.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any

from .cards import DECK, JACK_OF_DIAMONDS, QUEEN_OF_SPADES, TEN_OF_DIAMONDS, Card, Suit
from .errors import InvalidRules


class PassDirection(Enum):
    """Where passed cards go on a hand (seat s passes to s+1 on LEFT, clockwise)."""

    LEFT = "left"
    RIGHT = "right"
    ACROSS = "across"
    HOLD = "hold"  # no passing this hand
    SCATTER = "scatter"  # one card to every other player
    MIX = "mix"  # cards to a pile in the centre, shuffled and dealt back


class FirstLead(Enum):
    LOWEST_CLUB = "lowest_club"  # the holder of 2C (3C when 2C is out) must lead it
    LEFT_OF_DEALER = "left_of_dealer"  # the original rule: any card may be led


class HeartsLead(Enum):
    WHEN_BROKEN = "when_broken"  # not before a penalty-suit card has been played
    ANY_TIME = "any_time"  # the original rule


class MoonScoring(Enum):
    ADD_TO_OTHERS = "add_to_others"
    SUBTRACT_FROM_SHOOTER = "subtract_from_shooter"
    ADD_UNLESS_SHOOTER_LOSES = "add_unless_shooter_loses"
    SHOOTERS_CHOICE = "shooters_choice"


class ExactLimitReset(Enum):
    NONE = "none"
    HALF = "half"  # exactly 100 becomes 50
    ZERO = "zero"  # exactly 100 becomes 0


class TieBreak(Enum):
    SHARED = "shared"  # every player tied for the lowest score wins
    PLAY_ON = "play_on"  # more hands until one player alone has the lowest score


STANDARD_CYCLE = (PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS, PassDirection.HOLD)

NAMED_CYCLES: dict[str, tuple[tuple[PassDirection, ...], bool]] = {
    "standard": (STANDARD_CYCLE, True),
    "no_hold": (STANDARD_CYCLE[:3], True),
    "scatter": (STANDARD_CYCLE[:3] + (PassDirection.SCATTER,), True),
    "scatter_and_hold": (STANDARD_CYCLE[:3] + (PassDirection.SCATTER, PassDirection.HOLD), True),
    "mix": (STANDARD_CYCLE[:3] + (PassDirection.MIX,), True),
    "first_hand_only": ((PassDirection.LEFT,), False),
    "hold_always": ((PassDirection.HOLD,), True),
}

BONUS_CARDS = {"JD": JACK_OF_DIAMONDS, "TD": TEN_OF_DIAMONDS}

# Named turn clocks (``"time_control": "quick"``): (seconds per decision, reserve seconds).
TIME_CONTROLS: dict[str, tuple[int, int]] = {
    "off": (0, 0),
    "relaxed": (60, 300),
    "quick": (15, 60),
}
# The strategies (bots/) that may stand in for a timed-out seat: quick ones, as the table waits
# for them. A test checks each is a registered bot.
TIMEOUT_BOTS = ("heuristic", "random")


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """One game's rules. Defaults are the standard game of the seeds' main rules."""

    players: int = 4
    # Cards out of play so the deal comes out even (None: the usual ones for the player count).
    removed_cards: tuple[Card, ...] | None = None
    # Four cards (with four players; else the odd cards) dealt face down to the first taker of a
    # penalty card, instead of removing cards.
    kitty: bool = False
    cards_passed: int = 3
    pass_cycle: tuple[PassDirection, ...] = STANDARD_CYCLE
    pass_cycle_repeats: bool = True  # False: hold on every hand after the cycle
    mix_includes_kitty: bool = True  # the mix shuffles the kitty in with the discards
    optional_passing: bool = False  # a player may pass on what they receive, unseen
    first_lead: FirstLead = FirstLead.LOWEST_CLUB
    hearts_lead: HeartsLead = HeartsLead.WHEN_BROKEN
    queen_breaks_hearts: bool = False
    hearts_and_queen_may_lead_hearts: bool = False
    no_points_on_first_trick: bool = False
    must_play_queen_when_safe: bool = False
    bonus_card: Card | None = None  # Omnibus: JD (or TD) counts minus 10
    shoot_the_sun: bool = False  # taking every trick scores 52, handled like the moon
    moon_scoring: MoonScoring = MoonScoring.ADD_TO_OTHERS
    penalty_suit: Suit = Suit.HEARTS
    score_limit: int = 100
    # The game ends after this many hands whatever the scores (the bound on a game's length:
    # a log's size and every read of it follow from it). None only in games created before the
    # bound, whose recorded rules lack it: they replay and audit as they were played.
    hand_limit: int | None = 100
    exact_limit_reset: ExactLimitReset = ExactLimitReset.NONE
    tie_break: TieBreak = TieBreak.SHARED
    # The turn clock (domain/clock.py), off by default: seconds per decision (0: no clock), a
    # reserve each seat spends when it runs over, the timeouts in a row that mark a seat away,
    # and the bot that makes a timed-out seat's move (and plays for it while it is away).
    seconds_per_decision: int = 0
    reserve_seconds: int = 0
    timeouts_until_away: int = 3
    timeout_bot: str = "heuristic"

    # -- derived facts, each in one place ------------------------------------------------------

    @property
    def cards_out_of_play(self) -> tuple[Card, ...]:
        if self.kitty:
            return ()
        if self.removed_cards is not None:
            return self.removed_cards
        return default_removed_cards(self.players, self.penalty_suit)

    @property
    def clocked(self) -> bool:
        """True if the game has a turn clock (seconds per decision)."""
        return self.seconds_per_decision > 0

    @property
    def kitty_size(self) -> int:
        if not self.kitty:
            return 0
        return 52 % self.players or 4

    @property
    def hand_size(self) -> int:
        return (52 - len(self.cards_out_of_play) - self.kitty_size) // self.players

    def is_penalty_card(self, card: Card) -> bool:
        return card.suit is self.penalty_suit or card is QUEEN_OF_SPADES

    def card_points(self, card: Card) -> int:
        """Penalty points of one card (the bonus card counts -10)."""
        if card is QUEEN_OF_SPADES:
            return 13
        if card.suit is self.penalty_suit:
            return 1
        if card is self.bonus_card:
            return -10
        return 0

    @property
    def moon_points(self) -> int:
        """All the penalty points of a hand: what a moon scores (26 in the standard game).

        The one definition of a hand's points (scoring, the bots and the tests read it): the sum
        of ``card_points`` over the penalty cards in play, so an option that changes a card's
        points changes it too.
        """
        return _moon_points(self)

    @property
    def sun_points(self) -> int:
        """What taking every trick scores, with ``shoot_the_sun``: twice the moon."""
        return 2 * _moon_points(self)

    def is_last_hand(self, hand_number: int) -> bool:
        """Whether hand ``hand_number`` (1-based) is the last the hand limit allows."""
        return self.hand_limit is not None and hand_number >= self.hand_limit

    def pass_direction(self, hand_number: int) -> PassDirection:
        """The pass direction of hand ``hand_number`` (1-based)."""
        if self.cards_passed == 0:
            return PassDirection.HOLD
        i = hand_number - 1
        if i >= len(self.pass_cycle) and not self.pass_cycle_repeats:
            return PassDirection.HOLD
        return self.pass_cycle[i % len(self.pass_cycle)]

    def cards_to_pass(self, direction: PassDirection) -> int:
        if direction is PassDirection.HOLD:
            return 0
        if direction is PassDirection.SCATTER:
            return self.players - 1
        return self.cards_passed

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, *, recorded: bool = False) -> RuleOptions:
        """Options from their JSON form: an optional ``preset`` then option-by-option overrides.

        ``recorded``: options read back from a stored log (a ``GameCreated``, an export), which
        a game created before a bound was tightened may exceed: each integer up to its
        ``recorded_maximum``, and no ``hand_limit`` (absent or null) is no limit, as then.
        """
        if data is not None and not isinstance(data, dict):
            raise InvalidRules("rule options are an object of option names and values")
        data = dict(data or {})
        preset_name = data.pop("preset", "standard")
        time_control = data.pop("time_control", None)
        if not isinstance(preset_name, str) or preset_name not in PRESETS:
            raise InvalidRules(f"unknown preset {preset_name!r}; one of {sorted(PRESETS)}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidRules(f"unknown rule option(s): {', '.join(unknown)}")
        base = PRESETS[preset_name]
        changes: dict[str, Any] = {}
        if time_control is not None:
            if not isinstance(time_control, str) or time_control not in TIME_CONTROLS:
                raise InvalidRules(
                    f"unknown time_control {time_control!r}; one of {sorted(TIME_CONTROLS)}"
                )
            # The preset's clock, then any clock option given alongside it.
            per, reserve = TIME_CONTROLS[time_control]
            changes.update(seconds_per_decision=per, reserve_seconds=reserve)
        for name in _RECORDED_NULL if recorded else ():
            if data.get(name) is None:  # a game created before the option: as it was then
                data.pop(name, None)
                changes[name] = None
        for name, raw in data.items():
            changes[name] = _parse_option(name, raw)
        if "pass_cycle" in data and isinstance(data["pass_cycle"], str):
            cycle, repeats = NAMED_CYCLES[data["pass_cycle"]]
            changes["pass_cycle"] = cycle
            changes.setdefault("pass_cycle_repeats", repeats)
        if "players" in changes and "pass_cycle" not in changes:
            changes["pass_cycle"] = default_cycle(changes["players"])
        options = replace(base, **changes)
        _validate(options, recorded)
        return options

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; ``from_dict(to_dict())`` gives the same options back.

        A fresh dict each time (the caller may change it), copied from one computed per options.
        """
        out = dict(_json_form(self))
        for name in _LIST_OPTIONS:
            if out[name] is not None:
                out[name] = list(out[name])
        return out

    def validated(self, *, recorded: bool = False) -> RuleOptions:
        """The options if they make sense together; else InvalidRules with the reason.
        ``recorded``: with the bounds of a recorded log (see ``from_dict``)."""
        _validate(self, recorded)
        return self


# Derived values computed once per distinct options (a game's options are read on every view and
# every hand's scoring); bounded, since clients choose the options.
@functools.lru_cache(maxsize=256)
def _json_form(options: RuleOptions) -> dict[str, Any]:
    return {f.name: _option_json(getattr(options, f.name)) for f in fields(options)}


_LIST_OPTIONS = ("removed_cards", "pass_cycle")  # the options whose JSON form is a list


@functools.lru_cache(maxsize=256)
def _moon_points(options: RuleOptions) -> int:
    out = set(options.cards_out_of_play)
    return sum(options.card_points(c) for c in DECK if options.is_penalty_card(c) and c not in out)


def default_removed_cards(players: int, penalty_suit: Suit = Suit.HEARTS) -> tuple[Card, ...]:
    """The low cards taken out so 52 cards deal evenly: 2C first (so 3C leads), then 2D ...

    Cards of the penalty suit are never removed, so a hand keeps all its penalty points.
    """
    other_red = "S" if penalty_suit is Suit.DIAMONDS else "D"
    order = [Card("2C"), Card("2" + other_red), Card("3C"), Card("3" + other_red)]
    return tuple(order[: 52 % players])


def default_cycle(players: int) -> tuple[PassDirection, ...]:
    """The standard cycle for a player count: no 'across' when nobody sits across."""
    if players % 2 == 0:
        return STANDARD_CYCLE
    return (PassDirection.LEFT, PassDirection.RIGHT, PassDirection.HOLD)


class OptionKind(Enum):
    """How a rule option is written in JSON."""

    BOOLEAN = "boolean"
    INTEGER = "integer"  # from minimum to maximum
    CHOICE = "choice"  # one of the choices (or null where nullable)
    CARDS = "cards"  # a list of distinct cards (or null where nullable)
    CYCLE = "cycle"  # a list of pass directions, or the name of a cycle


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One rule option as data: what values it takes. ``from_dict`` parses and validates with
    it, and the HTTP API's OpenAPI document is generated from it (one definition of both)."""

    kind: OptionKind
    description: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False
    max_items: int | None = None  # a list option's longest list (the schema's maxItems)
    # An integer's largest value in a recorded log (``from_dict(recorded=True)``), where the
    # bound for new games was tightened after games were created with more; None: ``maximum``.
    recorded_maximum: int | None = None
    # An option added after games were created: absent (or null) in a recorded log, it is None,
    # the rule before the option existed.
    recorded_null: bool = False


def _choices(enum: type[Enum]) -> tuple[str, ...]:
    return tuple(m.value for m in enum)


# The JSON value of each choice option, by its text (the enums' own values, plus suits and cards).
_CHOICE_VALUES: dict[str, dict[str, Any]] = {
    "first_lead": {m.value: m for m in FirstLead},
    "hearts_lead": {m.value: m for m in HeartsLead},
    "moon_scoring": {m.value: m for m in MoonScoring},
    "exact_limit_reset": {m.value: m for m in ExactLimitReset},
    "tie_break": {m.value: m for m in TieBreak},
    "penalty_suit": {"hearts": Suit.HEARTS, "diamonds": Suit.DIAMONDS},
    "bonus_card": dict(BONUS_CARDS),
    "timeout_bot": {name: name for name in TIMEOUT_BOTS},
}

_B = OptionKind.BOOLEAN

# The bounds on a game's length (issue 33): a log's size, and so every read of it, follows from
# them. A standard game to 100 lasts 10 to 20 hands; a game to 500 about 60.
MAX_SCORE_LIMIT = 500
MAX_HAND_LIMIT = 100

# Every field of RuleOptions, in its order (a test checks they match).
OPTIONS: dict[str, OptionSpec] = {
    "players": OptionSpec(OptionKind.INTEGER, "Players at the table", minimum=3, maximum=6),
    "removed_cards": OptionSpec(
        OptionKind.CARDS,
        "Cards out of play so the deal comes out even (52 mod players of them, no penalty "
        "card); null: the usual low clubs and diamonds",
        nullable=True,
        max_items=4,  # 52 mod 6, the most ever removed
    ),
    "kitty": OptionSpec(
        _B, "Deal the odd cards face down to the first taker of a penalty card instead"
    ),
    "cards_passed": OptionSpec(
        OptionKind.INTEGER, "Cards passed on a left, right or across hand", minimum=0, maximum=4
    ),
    "pass_cycle": OptionSpec(
        OptionKind.CYCLE,
        "The pass direction of each hand in turn, or a named cycle",
        choices=tuple(NAMED_CYCLES),
        max_items=12,  # a list bound: the cycle is copied into every view of the game
    ),
    "pass_cycle_repeats": OptionSpec(_B, "Repeat the cycle; false: hold on every later hand"),
    "mix_includes_kitty": OptionSpec(_B, "The mix shuffles the kitty in with the discards"),
    "optional_passing": OptionSpec(_B, "A player may pass on what they receive, unseen"),
    "first_lead": OptionSpec(OptionKind.CHOICE, "Who leads the first trick", _choices(FirstLead)),
    "hearts_lead": OptionSpec(
        OptionKind.CHOICE, "When the penalty suit may be led", _choices(HeartsLead)
    ),
    "queen_breaks_hearts": OptionSpec(_B, "Playing the queen of spades breaks hearts"),
    "hearts_and_queen_may_lead_hearts": OptionSpec(
        _B, "A hand of only hearts and the queen may lead hearts before they are broken"
    ),
    "no_points_on_first_trick": OptionSpec(_B, "No penalty card on the first trick"),
    "must_play_queen_when_safe": OptionSpec(
        _B, "Play the queen of spades on the first chance to discard it"
    ),
    "bonus_card": OptionSpec(
        OptionKind.CHOICE,
        "Omnibus: this card counts minus 10 (null: none)",
        tuple(BONUS_CARDS),
        nullable=True,
    ),
    "shoot_the_sun": OptionSpec(_B, "Taking every trick scores 52, handled like the moon"),
    "moon_scoring": OptionSpec(
        OptionKind.CHOICE, "How shooting the moon scores", _choices(MoonScoring)
    ),
    "penalty_suit": OptionSpec(
        OptionKind.CHOICE, "The suit whose cards score a point each", ("hearts", "diamonds")
    ),
    "score_limit": OptionSpec(
        OptionKind.INTEGER,
        "The game ends when a score reaches this",
        minimum=1,
        maximum=MAX_SCORE_LIMIT,
        recorded_maximum=10_000,  # the bound before issue 33
    ),
    "hand_limit": OptionSpec(
        OptionKind.INTEGER,
        "The game ends after this many hands even if no score reached the limit (the lowest "
        "score wins, ties shared)",
        minimum=1,
        maximum=MAX_HAND_LIMIT,
        recorded_null=True,  # none in games created before issue 33
    ),
    "exact_limit_reset": OptionSpec(
        OptionKind.CHOICE,
        "A score of exactly the limit resets to half or zero",
        _choices(ExactLimitReset),
    ),
    "tie_break": OptionSpec(OptionKind.CHOICE, "Tied lowest scores at the end", _choices(TieBreak)),
    "seconds_per_decision": OptionSpec(
        OptionKind.INTEGER,
        "Turn clock: seconds a seat has for each decision (a pass, a play, the moon choice) "
        "before it spends its reserve; 0: no clock",
        minimum=0,
        maximum=3600,
    ),
    "reserve_seconds": OptionSpec(
        OptionKind.INTEGER,
        "Turn clock: seconds each seat may spend, over the game, beyond its decisions' own",
        minimum=0,
        maximum=36_000,
    ),
    "timeouts_until_away": OptionSpec(
        OptionKind.INTEGER,
        "Turn clock: timeouts in a row after which the seat is away (its bot plays on until "
        "its player comes back)",
        minimum=1,
        maximum=20,
    ),
    "timeout_bot": OptionSpec(
        OptionKind.CHOICE,
        "Turn clock: the bot that moves for a seat whose time ran out",
        TIMEOUT_BOTS,
    ),
}


_RECORDED_NULL = tuple(name for name, spec in OPTIONS.items() if spec.recorded_null)


def _parse_option(name: str, raw: Any) -> Any:
    spec = OPTIONS[name]
    try:
        if raw is None and spec.nullable:
            return None
        if spec.kind is OptionKind.BOOLEAN:
            if not isinstance(raw, bool):
                raise ValueError
            return raw
        if spec.kind is OptionKind.INTEGER:
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise ValueError
            return raw
        if spec.kind is OptionKind.CHOICE:
            text = str(raw).upper().replace("10", "T") if name == "bonus_card" else raw
            return _CHOICE_VALUES[name][text]
        if spec.max_items is not None and isinstance(raw, list) and len(raw) > spec.max_items:
            raise InvalidRules(f"{name} lists at most {spec.max_items} entries, not {len(raw)}")
        if spec.kind is OptionKind.CARDS:
            return tuple(Card(c) for c in raw)
        if spec.kind is OptionKind.CYCLE:
            if isinstance(raw, str):
                return NAMED_CYCLES[raw][0]
            cycle = tuple(PassDirection(d) for d in raw)
            if not cycle:
                raise ValueError
            return cycle
    except (ValueError, KeyError, TypeError):
        raise InvalidRules(f"invalid value for {name}: {raw!r}{_hint(spec)}") from None
    raise InvalidRules(f"unknown rule option: {name}")  # pragma: no cover - guarded by from_dict


def _hint(spec: OptionSpec) -> str:
    if spec.kind is OptionKind.CHOICE:
        allowed = spec.choices + (("null",) if spec.nullable else ())
        return f" ({', '.join(allowed[:-1])} or {allowed[-1]})"
    if spec.kind is OptionKind.CYCLE:
        return f" (a list of {[d.value for d in PassDirection]} or one of {sorted(spec.choices)})"
    if spec.kind is OptionKind.BOOLEAN:
        return " (true or false)"
    if spec.kind is OptionKind.INTEGER:
        return f" (an integer from {spec.minimum} to {spec.maximum})"
    return ""


def _option_json(value: Any) -> Any:
    if isinstance(value, Suit):
        return value.name.lower()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [_option_json(v) for v in value]
    return value


def _validate(r: RuleOptions, recorded: bool = False) -> None:
    def refuse(reason: str) -> None:
        raise InvalidRules(reason)

    for name, spec in OPTIONS.items():
        if spec.kind is not OptionKind.INTEGER:
            continue
        value = getattr(r, name)
        if value is None and recorded and spec.recorded_null:
            continue  # a game created before the option
        most = spec.maximum
        if recorded and spec.recorded_maximum is not None:
            most = spec.recorded_maximum
        if value is None or not spec.minimum <= value <= most:
            refuse(f"{name} must be {spec.minimum} to {most}")
    if r.penalty_suit not in (Suit.HEARTS, Suit.DIAMONDS):
        refuse("the penalty suit is hearts or diamonds (never spades or clubs)")
    if r.kitty and r.removed_cards:
        refuse(
            "choose a kitty or removed cards, not both: the kitty is how the deal comes out even"
        )
    out = r.cards_out_of_play
    if len(set(out)) != len(out):
        refuse("removed_cards lists a card twice")
    if not r.kitty and len(out) != 52 % r.players:
        need = 52 % r.players
        refuse(f"with {r.players} players, remove exactly {need} card(s) (or use the kitty)")
    if any(r.is_penalty_card(c) for c in out):
        refuse("a penalty card may not be removed: every hand must hold all the penalty points")
    if r.bonus_card is not None:
        if r.bonus_card not in BONUS_CARDS.values():
            refuse("the Omnibus bonus card is JD or TD")
        if r.bonus_card.suit is r.penalty_suit:
            refuse("the Omnibus bonus card cannot be in the penalty suit")
        if r.bonus_card in out:
            refuse("the Omnibus bonus card cannot be removed from the deck")
    for direction in r.pass_cycle:
        if direction is PassDirection.ACROSS and r.players % 2:
            refuse(f"nobody sits across with {r.players} players: leave 'across' out of the cycle")
        if direction is PassDirection.SCATTER and r.optional_passing:
            refuse("optional passing forwards what you receive to one player; scatter has none")
    most = max((r.cards_to_pass(d) for d in r.pass_cycle), default=0)
    if most > r.hand_size:
        refuse(f"cannot pass {most} cards from a hand of {r.hand_size}")
    if r.reserve_seconds and not r.seconds_per_decision:
        refuse("a reserve is time beyond each decision's: set seconds_per_decision too")
    if r.timeout_bot not in TIMEOUT_BOTS:
        refuse(f"the timeout bot is one of {', '.join(TIMEOUT_BOTS)}")
    if r.hearts_and_queen_may_lead_hearts and r.hearts_lead is HeartsLead.ANY_TIME:
        refuse("hearts_and_queen_may_lead_hearts only matters when hearts must be broken first")


PRESETS: dict[str, RuleOptions] = {
    # The seeds' main rules: left/right/across/hold, 2C leads, hearts broken by a heart, moon +26.
    "standard": RuleOptions(),
    # What most computer versions play: no penalty cards on the first trick.
    "computer": RuleOptions(no_points_on_first_trick=True),
    # Omnibus Hearts: JD is -10; the shooter chooses how the moon scores.
    "omnibus": RuleOptions(bonus_card=JACK_OF_DIAMONDS, moon_scoring=MoonScoring.SHOOTERS_CHOICE),
    # The original rule: left of the dealer leads anything, hearts may be led any time.
    "original": RuleOptions(first_lead=FirstLead.LEFT_OF_DEALER, hearts_lead=HeartsLead.ANY_TIME),
}
