"""Properties over random option sets and random legal play.

Each example draws a valid ``RuleOptions`` and a seed, then plays games with a seeded random
player that only ever picks from ``legal_plays``. Along the way it checks, against oracles written
here rather than taken from the engine: every card dealt once; the points of each hand and how a
moon or sun scores; that illegal commands raise and emit nothing; that ``legal_plays`` agrees
with ``decide`` card by card; that folding the log gives the state lived through; that a game
ends; that every event survives its JSON form.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from domain import (
    INITIAL_STATE,
    Card,
    ChooseMoonScoring,
    CreateGame,
    Deal,
    GameState,
    JoinGame,
    MoonScoring,
    PassCards,
    Phase,
    PlayCard,
    RuleOptions,
    RuleViolation,
    apply,
    decide,
    draft,
    event_from_dict,
    event_to_dict,
    event_type,
    evolve,
    fold,
    legal_plays,
    needed,
    seat_view,
    sort_cards,
)
from domain.dealing import cards_in_play
from domain.events import Event, GameEnded, HandDealt, HandScored, PassesExchanged
from domain.rules import ExactLimitReset, TieBreak
from tests.rule_strategies import rule_options

# -- the option sets ------------------------------------------------------------------------------

# Every option of domain.rules.OPTIONS, drawn from its spec (tests/rule_strategies.py); limits up
# to 100 so a whole game ends in a few hundred hands.
RULES = rule_options(score_limit=(1, 100))


# -- a random legal player, recording what it lives through ---------------------------------------


@dataclass
class Game:
    rules: RuleOptions
    rng: random.Random
    # None: every seat plays at random. A seat: it plays its highest legal card and the others
    # their lowest, so moons and suns (rare in random play) are scored often enough to check.
    greedy: int | None = None
    state: GameState = INITIAL_STATE
    log: list[Event] = field(default_factory=list)
    lived: list[tuple[int, GameState]] = field(default_factory=list)  # (log length, state)
    hands_played: int = 0

    def apply(self, command: object) -> list[Event]:
        events = decide(command, self.state)  # type: ignore[arg-type]
        self.state = fold(events, self.state)
        self.log.extend(events)
        self.lived.append((len(self.log), self.state))
        return events

    def refused(self, command: object) -> None:
        """The command is illegal: decide raises a RuleViolation (so emits nothing)."""
        try:
            events = decide(command, self.state)  # type: ignore[arg-type]
        except RuleViolation as violation:
            assert violation.code and violation.kind in {"conflict", "invalid", "not-found"}
            return
        raise AssertionError(f"{command} was accepted in {self.state.phase}: {events}")


def start(rules: RuleOptions, seed: int) -> Game:
    rng = random.Random(seed)
    greedy = rng.choice([None, rng.randrange(rules.players)])
    game = Game(rules, rng, greedy)
    game.apply(CreateGame("prop", rules, (None,) * rules.players))
    for seat in range(rules.players):
        game.apply(JoinGame(f"p{seat}"))
    return game


def step(game: Game, check_every_card: bool = False) -> None:
    """One legal move for whoever must act; some illegal ones tried (and refused) first."""
    state, rng, rules = game.state, game.rng, game.rules
    hand = state.hand
    if state.phase is Phase.DEALING:
        game.refused(PassCards(0, ()))
        seed = f"seed-{rng.random()}"
        if game.greedy is not None and rng.random() < 0.7:
            game.apply(Deal(seed, *stacked_deal(game, game.greedy)))
        else:
            game.apply(Deal(seed))
        game.hands_played += 1
    elif state.phase is Phase.PASSING:
        assert hand is not None
        seat = rng.choice([s for s, p in enumerate(hand.passed) if p is None])
        held = sort_cards(hand.hands[seat])
        need = rules.cards_to_pass(hand.pass_direction)
        game.refused(PassCards(seat, held[: need + 1]))
        game.refused(PlayCard(seat, held[0]))
        game.refused(Deal("again"))
        if rules.optional_passing and rng.random() < 0.3:
            game.apply(PassCards(seat, ()))
        else:
            game.apply(PassCards(seat, tuple(rng.sample(held, need))))
    elif state.phase is Phase.PLAYING:
        assert hand is not None and hand.turn is not None
        seat = hand.turn
        legal = sort_cards(legal_plays(rules, hand, seat))
        assert legal, "a seat to play always has a legal card"
        assert seat_view(state, seat).legal_cards == legal
        held = hand.hands[seat]
        assert set(legal) <= held
        if check_every_card:
            for card in held:
                if card in legal:
                    decide(PlayCard(seat, card), state)  # accepted: raises if not
                else:
                    game.refused(PlayCard(seat, card))
        else:
            illegal = sorted(held - set(legal))
            if illegal:
                game.refused(PlayCard(seat, rng.choice(illegal)))
        game.refused(PlayCard((seat + 1) % rules.players, legal[0]))
        game.apply(PlayCard(seat, choose_play(game, seat, legal)))
    elif state.phase is Phase.MOON_CHOICE:
        shooter = state.moon_shooter
        assert shooter is not None
        game.refused(ChooseMoonScoring((shooter + 1) % rules.players, MoonScoring.ADD_TO_OTHERS))
        game.refused(ChooseMoonScoring(shooter, MoonScoring.ADD_UNLESS_SHOOTER_LOSES))
        choice = rng.choice([MoonScoring.ADD_TO_OTHERS, MoonScoring.SUBTRACT_FROM_SHOOTER])
        game.apply(ChooseMoonScoring(shooter, choice))
    else:  # pragma: no cover - the driver stops at FINISHED
        raise AssertionError(state.phase)


def stacked_deal(game: Game, strong: int):
    """An explicit deal giving seat ``strong`` the highest cards: it often takes every trick."""
    rules = game.rules
    deck = list(cards_in_play(rules))
    game.rng.shuffle(deck)
    deck.sort(key=lambda c: -c.rank)
    size = rules.hand_size
    top, rest = deck[:size], deck[size:]
    game.rng.shuffle(rest)
    hands, k = [], 0
    for seat in range(rules.players):
        if seat == strong:
            hands.append(tuple(top))
        else:
            hands.append(tuple(rest[k : k + size]))
            k += size
    return tuple(hands), tuple(rest[k:])


def choose_play(game: Game, seat: int, legal: tuple[Card, ...]) -> Card:
    if game.greedy is None:
        return game.rng.choice(legal)
    by_rank = sorted(legal, key=lambda c: (c.rank, c.index))
    return by_rank[-1] if seat == game.greedy else by_rank[0]


def play_hands(game: Game, hands: int, check_every_card: bool = False) -> None:
    while game.state.phase is not Phase.FINISHED and (
        game.hands_played < hands or game.state.phase is not Phase.DEALING
    ):
        step(game, check_every_card)


# -- oracles --------------------------------------------------------------------------------------


def check_deals(rules: RuleOptions, log: list[Event]) -> None:
    """Each hand: every card in play dealt once (hands + kitty), before and after the pass."""
    in_play = Counter(cards_in_play(rules))
    state = INITIAL_STATE
    for event in log:
        state = fold([event], state)
        if isinstance(event, HandDealt):
            dealt = Counter(c for h in event.hands for c in h) + Counter(event.kitty)
            assert dealt == in_play
            assert [len(h) for h in event.hands] == [rules.hand_size] * rules.players
            assert len(event.kitty) == rules.kitty_size
        if isinstance(event, PassesExchanged | HandDealt) and state.phase is Phase.PLAYING:
            hand = state.hand
            assert hand is not None
            held = Counter(c for h in hand.hands for c in h) + Counter(hand.kitty)
            assert held == in_play
            assert all(len(h) == rules.hand_size for h in hand.hands)


def settle(rules: RuleOptions, before: tuple[int, ...], changes: list[int], hand: int):
    totals = [b + c for b, c in zip(before, changes, strict=True)]
    resets = []
    for seat, total in enumerate(totals):
        if total == rules.score_limit and rules.exact_limit_reset is not ExactLimitReset.NONE:
            resets.append(seat)
            half = rules.exact_limit_reset is ExactLimitReset.HALF
            totals[seat] = rules.score_limit // 2 if half else 0
    low = min(totals)
    winners = tuple(s for s, t in enumerate(totals) if t == low)
    over = max(totals) >= rules.score_limit
    if over and len(winners) > 1 and rules.tie_break is TieBreak.PLAY_ON:
        over = False
    if rules.hand_limit is not None and hand >= rules.hand_limit:
        over = True  # the hand limit's last hand: over whatever the scores, ties shared
    return tuple(totals), tuple(resets), over, winners


def check_scoring(rules: RuleOptions, log: list[Event]) -> None:
    """Every scored hand against the seeds' rules, computed from the cards each seat took."""
    state = INITIAL_STATE
    for i, event in enumerate(log):
        before = state
        state = fold([event], state)
        if not isinstance(event, HandScored):
            continue
        hand = before.hand
        assert hand is not None
        # A card's points and a hand's are the rules' (RuleOptions.card_points, .moon_points,
        # .sun_points: functions of the options); who shot and how it scores is checked here.
        penalty = [
            sum(rules.card_points(c) for c in t if rules.is_penalty_card(c)) for t in hand.taken
        ]
        bonus = [sum(rules.card_points(c) for c in t if c is rules.bonus_card) for t in hand.taken]
        assert sum(penalty) == rules.moon_points
        assert list(event.points_taken) == [p + b for p, b in zip(penalty, bonus, strict=True)]
        assert sum(event.points_taken) == rules.moon_points + sum(bonus)
        tricks = Counter(t.winner for t in hand.tricks)
        total_tricks = len(hand.tricks)
        sun = [s for s in range(rules.players) if tricks[s] == total_tricks]
        moon = [s for s in range(rules.players) if penalty[s] == rules.moon_points]
        if rules.shoot_the_sun and sun:
            shot, shooter, points = "sun", sun[0], rules.sun_points
        elif moon:
            shot, shooter, points = "moon", moon[0], rules.moon_points
        else:
            shot, shooter, points = None, None, 0
        assert (event.shot, event.shooter) == (shot, shooter)
        if shot is None:
            changes = list(event.points_taken)
            assert event.moon_scoring is None
        else:
            add = [(0 if s == shooter else points) + b for s, b in enumerate(bonus)]
            sub = [(-points if s == shooter else 0) + b for s, b in enumerate(bonus)]
            method = rules.moon_scoring
            if method is MoonScoring.SHOOTERS_CHOICE:
                method = event.moon_scoring  # chosen by the shooter: one of the two
                assert method in (MoonScoring.ADD_TO_OTHERS, MoonScoring.SUBTRACT_FROM_SHOOTER)
            assert event.moon_scoring is method
            if method is MoonScoring.ADD_UNLESS_SHOOTER_LOSES:
                _, _, over, winners = settle(rules, before.scores, add, event.hand_number)
                changes = add if not over or winners == (shooter,) else sub
            else:
                changes = add if method is MoonScoring.ADD_TO_OTHERS else sub
        assert list(event.score_changes) == changes
        totals, resets, over, winners = settle(rules, before.scores, changes, event.hand_number)
        assert (event.totals, event.exact_limit_resets) == (totals, resets)
        ended = i + 1 < len(log) and isinstance(log[i + 1], GameEnded)
        assert ended is over
        if over:
            assert log[i + 1] == GameEnded(winners, totals)


def check_fold(game: Game) -> None:
    """Folding the log (whole, or up to any point) gives the state lived through; so does folding
    only the events it needs (``needed``: not those a later deal supersedes), from the start or
    from any state lived through."""
    assert fold(game.log) == game.state
    assert fold(needed(game.log)) == game.state
    if sum(isinstance(event, HandDealt) for event in game.log) > 1:  # earlier hands left out
        assert len(needed(game.log)) < len(game.log)
    for length, lived in game.rng.sample(game.lived, min(8, len(game.lived))):
        assert fold(game.log[:length]) == lived
        assert fold(needed(game.log[:length])) == lived
        assert fold(needed(game.log[length:]), lived) == game.state


def check_round_trip(log: list[Event]) -> None:
    for event in log:
        payload = json.loads(json.dumps(event_to_dict(event)))
        again = event_from_dict(event_type(event), payload)
        assert again == event and type(again) is type(event)
        assert all(type(c) is Card for c in _cards_in(again))


def _cards_in(value: object):
    if isinstance(value, str):
        if isinstance(value, Card):
            yield value
        return
    if isinstance(value, tuple):
        for item in value:
            yield from _cards_in(item)
    elif hasattr(value, "__dataclass_fields__") and not isinstance(value, RuleOptions):
        for name in value.__dataclass_fields__:  # type: ignore[attr-defined]
            yield from _cards_in(getattr(value, name))


# -- the properties -------------------------------------------------------------------------------

SEEDS = st.integers(0, 2**32 - 1)


@settings(max_examples=40, deadline=None)
@given(rules=RULES, seed=SEEDS)
def test_random_legal_hands_keep_every_rule(rules: RuleOptions, seed: int) -> None:
    game = start(rules, seed)
    play_hands(game, hands=3)
    check_deals(rules, game.log)
    check_scoring(rules, game.log)
    check_fold(game)
    check_round_trip(game.log)


@settings(max_examples=12, deadline=None)
@given(rules=RULES, seed=SEEDS)
def test_legal_plays_is_exactly_what_decide_accepts(rules: RuleOptions, seed: int) -> None:
    game = start(rules, seed)
    play_hands(game, hands=1, check_every_card=True)
    assert game.state.phase in (Phase.DEALING, Phase.FINISHED)


@settings(max_examples=12, deadline=None)
@given(rules=RULES, seed=SEEDS)
def test_a_full_game_always_ends(rules: RuleOptions, seed: int) -> None:
    game = start(rules, seed)
    # A generous bound: every hand hands out 16 to 52 points, so 100 is reached well before.
    play_hands(game, hands=400)
    assert game.state.phase is Phase.FINISHED, f"no end after {game.hands_played} hands"
    assert isinstance(game.log[-1], GameEnded)
    check_scoring(rules, game.log)


def _attributes(state: GameState) -> tuple[dict, dict | None]:
    # Every attribute's value is immutable (ints, enums, tuples), so this copy is a snapshot.
    return dict(vars(state)), dict(vars(state.hand)) if state.hand is not None else None


@settings(max_examples=20, deadline=None)
@given(rules=RULES, seed=SEEDS)
def test_folding_never_changes_a_state_someone_holds(rules: RuleOptions, seed: int) -> None:
    """evolve and fold change a private draft in place (domain/decider.py), never the state
    they are given nor its hand: every state lived through is still what it was."""
    game = start(rules, seed)
    play_hands(game, hands=2)
    states = [INITIAL_STATE]
    for event in game.log:
        states.append(evolve(states[-1], event))
    snapshots = [_attributes(s) for s in states]
    assert fold(game.log) == states[-1] == game.state
    for start_at in game.rng.sample(range(len(states)), min(6, len(states))):
        assert fold(game.log[start_at:], states[start_at]) == game.state
    drafted = draft(states[0])
    for event, expected in zip(game.log, states[1:], strict=True):
        apply(drafted, event)
        assert drafted == expected
    assert [_attributes(s) for s in states] == snapshots
    assert [_attributes(state) for _, state in game.lived] == [
        _attributes(states[length]) for length, _ in game.lived
    ]


@settings(max_examples=60, deadline=None)
@given(rules=RULES)
def test_options_survive_their_json_form(rules: RuleOptions) -> None:
    assert RuleOptions.from_dict(json.loads(json.dumps(rules.to_dict()))) == rules
