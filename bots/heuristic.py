"""``heuristic``: rule-based play, the way a careful club player plays.

Passing sheds the queen of spades when it is poorly guarded, the ace and king of spades when
the queen may land on them, and high cards (high penalty cards no sooner than high side cards:
A/B tests found that keeping them does better), and empties a short side suit when that costs
little; it keeps low cards (they escape the lead later) and, in Omnibus, the
bonus card and the diamonds that can catch it.

Play, in one of three moods decided afresh each trick:

- normal: lead the card least likely to win (or to win points); follow by ducking under the
  trick's winning card with the highest card that still loses; when out of the suit led, dump
  the queen, then the ace and king of spades while the queen is out, then high penalty cards,
  then high cards of short suits; win the bonus card when that is safe.
- block: one other seat has taken every penalty point so far, more than half of them, and the
  hand is past its middle:
  take a penalty card from them if possible, dump penalty cards on anyone else, never on them.
- shoot: this seat has every penalty point so far (or none is taken) and holds no card that
  can lose a trick it leads: take everything, highest first.

It tracks the cards out (the view's tricks and current trick) and the suits each seat has shown
it lacks. It chooses only among the legal cards it is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter

from domain.cards import Card
from domain.rules import MoonScoring, RuleOptions
from domain.views import SeatView

from .base import best_moon_choice, register
from .cardbits import (
    AS_BIT,
    KS_BIT,
    QS,
    QS_BIT,
    SPADES,
    SUIT_MASK,
    above,
    below,
    bits,
    card_of,
    highest,
    lowest,
    mask_of,
)
from .knowledge import knowledge_of
from .simulation import PlayState, TableRules, table_rules

NORMAL, SHOOT, BLOCK = 0, 1, 2
_VOID_BONUS = 7.0  # what emptying a side suit by passing is worth, in danger units


# -- passing --------------------------------------------------------------------------------------


def pass_cards(hand: int, r: TableRules, count: int) -> list[int]:
    """The ``count`` cards to pass from ``hand``."""
    if count <= 0:
        return []
    cards = list(bits(hand))
    if count >= len(cards):
        return cards
    if _moon_hand(hand, r):
        # Keep the winners; pass the low cards that could lose a trick.
        return sorted(cards, key=lambda c: (c % 13, (hand & r.penalty_mask) >> c & 1))[:count]
    danger = {c: _pass_danger(c, hand, r) for c in cards}
    by_danger = sorted(cards, key=lambda c: (-danger[c], c))
    best = by_danger[:count]
    best_value = sum(danger[c] for c in best)
    for s in range(4):
        if s in (r.penalty_suit, SPADES):
            continue
        suit_cards = [c for c in cards if c // 13 == s]
        if not 0 < len(suit_cards) <= count or (r.bonus >= 0 and r.bonus // 13 == s):
            continue
        rest = [c for c in by_danger if c // 13 != s][: count - len(suit_cards)]
        choice = suit_cards + rest
        value = sum(danger[c] for c in choice) + _VOID_BONUS
        if value > best_value:
            best, best_value = choice, value
    return best


def _pass_danger(c: int, hand: int, r: TableRules) -> float:
    rank = c % 13
    s = c // 13
    low_spades = (hand & SUIT_MASK[SPADES] & below(QS)).bit_count()
    if c == QS:
        return 30.0 if low_spades < 4 else 5.0
    if c > QS and s == SPADES:  # the king and ace of spades
        if hand & QS_BIT:
            return 14.0 if low_spades < 4 else 4.0
        return 22.0 if low_spades < 3 else 9.0
    if s == SPADES:
        return rank * 0.3  # low spades guard against the queen
    if s == r.penalty_suit:
        return rank * 0.6  # high hearts are no worse to keep than high side cards
    if c == r.bonus:
        return -40.0
    if r.bonus >= 0 and s == r.bonus // 13 and c > r.bonus:
        return rank * 0.4  # the diamonds that can catch the bonus card
    return float(rank)


def _moon_hand(hand: int, r: TableRules) -> bool:
    """A hand to shoot with: long, top-heavy penalty cards and mostly winners."""
    pen = hand & r.penalty_suit_mask
    top3 = 0b111 << (13 * r.penalty_suit + 10)
    high = sum(1 for c in bits(hand) if c % 13 >= 10)
    return pen.bit_count() >= 6 and pen & top3 == top3 and high >= 7


# -- play -----------------------------------------------------------------------------------------


def choose_card(st: PlayState, seat: int, legal: int, bold: int = 0) -> int:
    """One card of the ``legal`` mask for ``seat``, from what that seat may know of ``st``.

    ``bold``: how many more cards that could lose a trick the seat may hold and still go for the
    moon (0: the heuristic's own rule). A search's model of players bolder than the heuristic."""
    if not legal & (legal - 1):
        return lowest(legal)
    r = st.rules
    hand = st.hands[seat]
    unseen = r.in_play & ~st.played & ~hand
    mood, target = _mood(st, seat, hand, unseen, bold)
    if not st.trick:
        return _lead(st, seat, legal, hand, unseen, mood, target)
    led = st.trick[0][1] // 13
    if legal & SUIT_MASK[led]:
        return _follow(st, seat, legal, unseen, mood, target, led)
    return _discard(st, seat, legal, hand, unseen, mood, target)


def stray_card(
    st: PlayState,
    seat: int,
    legal: int,
    chosen: int,
    bold: int = 0,
    spread: float = 0.0,
    draw: float = 0.0,
) -> int:
    """The card a player that searches plays where it leaves ``chosen`` (the heuristic's
    card), or -1 where no such departure is modelled.

    A search's model of players unlike the heuristic (issue 41): at tables of montecarlo
    players, a lead is another than the heuristic's in 44% of cases, a follow to a clean trick
    takes it (shedding a high card) where the heuristic ducks, or ducks where it takes
    (``python -m bench.departures``). Discards, and every mood but the normal one, are left to
    the heuristic. A strayed lead is the heuristic's next cheapest (``spread`` 0), or, with
    ``draw`` uniform in [0, 1), its k-th next cheapest with odds in proportion to ``spread``
    to the k (a search's leads leave the heuristic's for the next few about alike).
    """
    if not legal & (legal - 1):
        return -1
    r = st.rules
    hand = st.hands[seat]
    unseen = r.in_play & ~st.played & ~hand
    if _mood(st, seat, hand, unseen, bold)[0] != NORMAL:
        return -1
    if not st.trick:
        rest = [t for t in _lead_costs(st, seat, legal, hand, unseen) if t[1] != chosen]
        if not rest:
            return -1
        if spread <= 0:
            return min(rest, key=itemgetter(0))[1]
        rest.sort(key=itemgetter(0))
        weights = [spread**k for k in range(len(rest))]
        aim = draw * sum(weights)
        for (_, c), weight in zip(rest, weights, strict=True):
            aim -= weight
            if aim < 0:
                return c
        return rest[-1][1]
    led = st.trick[0][1] // 13
    if not legal & SUIT_MASK[led] or led == r.penalty_suit:
        return -1
    if led == SPADES and unseen & QS_BIT or any(r.penalty_mask >> c & 1 for _, c in st.trick):
        return -1  # not a clean trick
    _, w = st.trick_winner()
    under = legal & below(w)
    over = legal & ~below(w) & ~QS_BIT & ~(1 << r.bonus if r.bonus >= 0 else 0)
    if chosen < w and over:
        return highest(over)
    if chosen > w and under:
        return highest(under)
    return -1


def _mood(st: PlayState, seat: int, hand: int, unseen: int, bold: int = 0) -> tuple[int, int]:
    r = st.rules
    penalty = st.penalty
    taker = -1
    for s in range(r.players):
        if penalty[s] > 0:
            if taker >= 0:
                return NORMAL, -1  # points are split: no moon is on
            taker = s
    if taker < 0 or taker == seat:
        if taker < 0 and st.tricks_done > 1:
            return NORMAL, -1
        allowed = (1 if penalty[seat] * 2 >= r.moon_points else 0) + bold
        if _losers_at_most(hand, unseen, allowed):
            return SHOOT, seat
        return NORMAL, -1
    got = penalty[taker]
    if got * 2 > r.moon_points and st.tricks_done * 2 >= r.hand_size:
        return BLOCK, taker
    return NORMAL, -1


def _losers_at_most(hand: int, unseen: int, limit: int) -> bool:
    """Whether at most ``limit`` cards could lose a trick, leading each suit from the top."""
    losers = 0
    for s in range(4):
        mine = hand & SUIT_MASK[s]
        out = unseen & SUIT_MASK[s]
        higher_mine = 0
        while mine:
            c = mine.bit_length() - 1
            if (out >> c).bit_count() > higher_mine:
                losers += 1
                if losers > limit:
                    return False
            higher_mine += 1
            mine ^= 1 << c
    return True


def _lead(
    st: PlayState, seat: int, legal: int, hand: int, unseen: int, mood: int, target: int
) -> int:
    r = st.rules
    if mood == SHOOT:
        winners = [c for c in bits(legal) if not unseen & SUIT_MASK[c // 13] & above(c)]
        if winners:
            # Side suits first, so the penalty cards come down once the others are drawn.
            return max(winners, key=lambda c: (c // 13 != r.penalty_suit, c % 13))
        return max(bits(legal), key=lambda c: c % 13)
    if mood == BLOCK:
        pen = legal & r.penalty_suit_mask
        if pen and not unseen & r.penalty_suit_mask & above(highest(pen)):
            return highest(pen)  # a sure winner that takes a penalty card from the shooter
    # The first of the cheapest, as the costs are reckoned (suits upward, ranks downward).
    best, best_cost = -1, 1e9
    for cost, c in _lead_costs(st, seat, legal, hand, unseen):
        if cost < best_cost:
            best, best_cost = c, cost
    return best


def _lead_costs(
    st: PlayState, seat: int, legal: int, hand: int, unseen: int
) -> Iterator[tuple[float, int]]:
    """Each lead worth weighing in the normal mood, with its cost (lower is better): yielded,
    since the play-outs' every lead reads them and most want only the cheapest."""
    r = st.rules
    n = r.players
    queen_live = bool(unseen & QS_BIT)
    others_void = 0
    for o in range(n):
        if o != seat:
            others_void |= st.voids[o]
    for s in range(4):
        mine = legal & SUIT_MASK[s]
        if not mine:
            continue
        out = unseen & SUIT_MASK[s]
        count = (hand & SUIT_MASK[s]).bit_count()
        someone_void = not out or others_void >> s & 1
        # Cards below every unseen card of the suit lose for sure: only the highest is a choice.
        safe = mine & ((out & -out) - 1) if out else 0
        choices = (mine & ~safe) | (1 << (safe.bit_length() - 1) if safe else 0)
        while choices:
            c = choices.bit_length() - 1
            choices ^= 1 << c
            ua = (out >> c).bit_count()
            ub = (out & ((1 << c) - 1)).bit_count()
            if ua == 0:
                win = 1.0
            elif ub == 0:
                win = 0.0
            else:
                win = ub / (ua + ub)
            loss = 0.5 + r.points[c]
            if s == r.penalty_suit:
                loss += n - 1
            if someone_void:
                loss += 4.0 + (6.5 if queen_live else 0.0)
            if s == SPADES and queen_live and c > QS:
                loss += 6.5
            cost = win * loss
            if s == SPADES:
                if queen_live and c < QS and not hand & (AS_BIT | KS_BIT):
                    cost -= 1.0  # smoke the queen out
                if hand & QS_BIT and c != QS:
                    cost += 0.5  # do not pull the guards from our own queen
            cost -= 0.01 * (c % 13) + 0.05 * (5 - count)
            yield cost, c


def _follow(
    st: PlayState, seat: int, legal: int, unseen: int, mood: int, target: int, led: int
) -> int:
    r = st.rules
    ws, w = st.trick_winner()
    last = len(st.trick) == r.players - 1
    pts = sum(r.points[c] for _, c in st.trick)
    under = legal & below(w)
    over = legal & ~below(w)
    over_nq = over & ~QS_BIT
    bonus_bit = 1 << r.bonus if r.bonus >= 0 else 0
    if mood == SHOOT:
        return highest(over) if over else lowest(under)
    if mood == BLOCK and over_nq:
        to_play = {(seat + k) % r.players for k in range(1, r.players - len(st.trick))}
        if (ws == target or target in to_play) and (pts > 0 or led == r.penalty_suit):
            return highest(over_nq)
    if legal & QS_BIT and w > QS and w // 13 == SPADES:
        return QS  # under the ace or king: the queen goes to them
    if last:
        if over_nq and (pts < 0 or (bonus_bit and over_nq & bonus_bit)):
            return r.bonus if over_nq & bonus_bit else highest(over_nq)
        if over_nq and pts == 0 and not any(r.penalty_mask >> c & 1 for _, c in st.trick):
            return highest(over_nq)  # a clean trick, and nobody after us: shed a high card on it
        if under:
            return highest(under & ~bonus_bit or under)
        return highest(over_nq) if over_nq else QS
    if under:
        return highest(under & ~bonus_bit or under)
    if not over_nq:
        return QS
    out = unseen & SUIT_MASK[led]
    if bonus_bit & over_nq and not out & above(r.bonus):
        return r.bonus  # the bonus card is the top diamond: it wins the trick
    if bonus_bit and any(c == r.bonus for _, c in st.trick) and not out & above(highest(over_nq)):
        return highest(over_nq)  # catch the bonus card
    after = [(seat + k) % r.players for k in range(1, r.players - len(st.trick))]
    queen_live = bool(unseen & QS_BIT)
    if (
        (led == SPADES and queen_live)
        or led == r.penalty_suit
        or any(st.voids[p] >> led & 1 for p in after)
    ):
        return lowest(over_nq)
    return highest(over_nq)


def _discard(
    st: PlayState, seat: int, legal: int, hand: int, unseen: int, mood: int, target: int
) -> int:
    r = st.rules
    if mood == SHOOT:
        keep = legal & ~r.penalty_mask or legal
        return min(bits(keep), key=lambda c: c % 13)
    ws, _ = st.trick_winner()
    if mood == BLOCK:
        pen = legal & r.penalty_mask
        if ws != target and pen:
            return QS if pen & QS_BIT else highest(pen)
        if ws == target:
            legal = legal & ~r.penalty_mask or legal
    if legal & QS_BIT:
        return QS
    queen_live = bool(unseen & QS_BIT)
    return max(bits(legal), key=lambda c: _discard_danger(c, hand, r, queen_live))


def _discard_danger(c: int, hand: int, r: TableRules, queen_live: bool) -> float:
    s = c // 13
    rank = c % 13
    if c == r.bonus:
        return -50.0
    if s == SPADES and c > QS:
        return 40.0 + rank if queen_live else float(rank)
    if s == r.penalty_suit:
        return 20.0 + rank
    if s == SPADES and queen_live:
        return rank - 5.0  # low spades guard against the queen
    short = 3.0 if (hand & SUIT_MASK[s]).bit_count() <= 2 else 0.0
    return rank + short


# -- the bot --------------------------------------------------------------------------------------


@register("heuristic")
class HeuristicBot:
    name = "heuristic"

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        picks = pass_cards(mask_of(view.legal_cards), table_rules(rules), view.cards_to_pass)
        return tuple(card_of(c) for c in picks)

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        k = knowledge_of(view, rules)
        return card_of(choose_card(k.state, view.seat, mask_of(view.legal_cards)))

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        return best_moon_choice(view, rules)
