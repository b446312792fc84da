"""Where a bot's plays depart from the heuristic's: what a search's play-out policy gets wrong.

    python -m bench.departures --bot montecarlo --hands 300
    python -m bench.departures --hands 150 --again     (each play asked twice: the seed's share)

Plays one-hand games with ``--bot`` at every seat (``--table`` for the other three instead) and,
at each of the bot's plays with a choice, asks the heuristic what it would play from the same
view. ``montecarlo`` plays the heuristic's card unless its play-outs (every seat the heuristic)
find a better one by a margin, so where it departs is where one step of search corrects the
play-out policy: the decisions a better play-out policy would have to get right first (issue
41: the master's play is bounded by its play-outs' policy). The heuristic itself departs never.

Figures: the departure rate by kind of play (lead, follow, discard) and the heuristic's mood,
by trick, and the commonest departures of each kind: a lead of another suit or another card of
the suit; a follow that takes the trick where the heuristic ducks (or the other way), by the
position in the trick and whether the trick holds points; a discard of another suit.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bots.base import Bot
from bots.cardbits import QS, SUIT_MASK, mask_of
from bots.heuristic import NORMAL, _mood, choose_card, stray_card
from bots.knowledge import knowledge_of
from bots.specs import make_bot
from bots.tournament import play_game
from domain.cards import Card
from domain.rules import MoonScoring, RuleOptions
from domain.views import SeatView

SUITS = "CDSH"
MOODS = {0: "normal", 1: "shoot", 2: "block"}


@dataclass(slots=True)
class Tally:
    """Decisions and departures from the heuristic, by what kind of decision each was."""

    decisions: Counter[tuple[str, str]] = field(default_factory=Counter)
    departures: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_trick: Counter[int] = field(default_factory=Counter)
    departed_by_trick: Counter[int] = field(default_factory=Counter)
    patterns: dict[str, Counter[str]] = field(
        default_factory=lambda: {k: Counter() for k in ("lead", "follow", "discard")}
    )
    # By kind, in the normal mood: the plays where ``heuristic.stray_card`` offers another card
    # (montecarlo's ``stray`` model of a searching player), and the departures it names.
    stray_offered: Counter[str] = field(default_factory=Counter)
    stray_named: Counter[str] = field(default_factory=Counter)
    # ``--again``: every play is asked a second time from the same view (another seed). By kind,
    # in the normal mood (the plays asked are ``decisions``, the departures ``departures``): the
    # plays where it played the same card, and the departures it made again.
    again: bool = False
    again_same: Counter[str] = field(default_factory=Counter)
    again_repeated: Counter[str] = field(default_factory=Counter)

    def note(
        self, view: SeatView, rules: RuleOptions, chosen: Card, again: Card | None = None
    ) -> None:
        k = knowledge_of(view, rules)
        st = k.state
        legal = mask_of(view.legal_cards)
        hand = st.hands[view.seat]
        mine = chosen.index
        theirs = choose_card(st, view.seat, legal)
        mood, _ = _mood(st, view.seat, hand, st.rules.in_play & ~st.played & ~hand)
        kind = _kind(st.trick, legal)
        key = (kind, MOODS[mood])
        self.decisions[key] += 1
        self.by_trick[st.tricks_done] += 1
        other = stray_card(st, view.seat, legal, theirs) if mood == NORMAL else -1
        self.stray_offered[kind] += other >= 0
        if again is not None and mood == NORMAL:
            self.again_same[kind] += again.index == mine
            self.again_repeated[kind] += mine != theirs and again.index == mine
        if mine == theirs:
            return
        self.departures[key] += 1
        self.departed_by_trick[st.tricks_done] += 1
        if mood == NORMAL:
            self.patterns[kind][_pattern(kind, st, mine, theirs)] += 1
            self.stray_named[kind] += mine == other

    def figures(self, top: int = 8) -> dict[str, Any]:
        def rate(done: int, of: int) -> float:
            return round(done / of, 3) if of else 0.0

        total = sum(self.decisions.values())
        departed = sum(self.departures.values())
        return {
            "decisions": total,
            "departures": departed,
            "rate": rate(departed, total),
            "by_kind": {
                f"{kind} ({mood})": {
                    "decisions": n,
                    "departures": self.departures[(kind, mood)],
                    "rate": rate(self.departures[(kind, mood)], n),
                }
                for (kind, mood), n in sorted(self.decisions.items())
            },
            "by_trick": {
                t + 1: rate(self.departed_by_trick[t], n) for t, n in sorted(self.by_trick.items())
            },
            "commonest": {
                kind: [[what, n] for what, n in counts.most_common(top)]
                for kind, counts in self.patterns.items()
            },
            "stray": {
                kind: {
                    "offered": self.stray_offered[kind],
                    "departures": self.departures[(kind, "normal")],
                    "named": self.stray_named[kind],
                    "share": rate(self.stray_named[kind], self.departures[(kind, "normal")]),
                }
                for kind in self.patterns
            },
        } | ({"again": self._again(rate)} if self.again else {})

    def _again(self, rate: Callable[[int, int], float]) -> dict[str, Any]:
        """How much of the bot's play is its view's and how much its seed's: the share of its
        plays it makes again from the same view, and of its departures from the heuristic."""
        rows = {}
        for kind in self.patterns:
            asked = self.decisions[(kind, MOODS[NORMAL])]
            departed = self.departures[(kind, MOODS[NORMAL])]
            rows[kind] = {
                "asked": asked,
                "same": rate(self.again_same[kind], asked),
                "departures": departed,
                "repeated": rate(self.again_repeated[kind], departed),
            }
        return rows


def _kind(trick: list[tuple[int, int]], legal: int) -> str:
    if not trick:
        return "lead"
    return "follow" if legal & SUIT_MASK[trick[0][1] // 13] else "discard"


def _pattern(kind: str, st: Any, mine: int, theirs: int) -> str:
    """One departure in words: what the bot played where the heuristic would have played."""
    if kind == "lead":
        if mine // 13 == theirs // 13:
            return f"a {'higher' if mine > theirs else 'lower'} {SUITS[mine // 13]}"
        return f"{SUITS[mine // 13]} for {SUITS[theirs // 13]}"
    if kind == "follow":
        _, winning = st.trick_winner()
        points = "points" if any(st.rules.points[c] for _, c in st.trick) else "clean"
        take = "takes" if mine > winning else "ducks"
        heuristic = "takes" if theirs > winning else "ducks"
        place = ("second", "third", "fourth", "fifth")[len(st.trick) - 1]
        if take == heuristic:
            take = f"{take} with a {'higher' if mine > theirs else 'lower'} card"
        else:
            take = f"{take} where the heuristic {heuristic}"
        return f"{take}, {place} to play, a {points} trick"
    name = {QS: "QS"}
    return (
        f"{name.get(mine, SUITS[mine // 13])} for {name.get(theirs, SUITS[theirs // 13])},"
        f" {'higher' if mine % 13 > theirs % 13 else 'lower'}"
    )


class Watched:
    """A bot whose plays are noted against the heuristic's."""

    def __init__(self, bot: Bot, tally: Tally) -> None:
        self.bot = bot
        self.tally = tally
        self.name = getattr(bot, "name", "watched")

    def choose_pass(self, view: SeatView, rules: RuleOptions, seed: str) -> tuple[Card, ...]:
        return self.bot.choose_pass(view, rules, seed)

    def choose_play(self, view: SeatView, rules: RuleOptions, seed: str) -> Card:
        card = self.bot.choose_play(view, rules, seed)
        if len(view.legal_cards) > 1:
            again = self.bot.choose_play(view, rules, f"{seed}/again") if self.tally.again else None
            self.tally.note(view, rules, card, again)
        return card

    def choose_moon_scoring(self, view: SeatView, rules: RuleOptions, seed: str) -> MoonScoring:
        return self.bot.choose_moon_scoring(view, rules, seed)


def departures(
    bot: str,
    hands: int,
    seed: str = "departures",
    table: str | None = None,
    again: bool = False,
) -> dict[str, Any]:
    """Play ``hands`` one-hand games (the bot at every seat, or in seat 0 of ``table``'s);
    ``again``: ask each of its plays a second time from the same view, with another seed."""
    tally = Tally(again=again)
    watched = Watched(make_bot(bot, time.process_time), tally)
    seats = ["watched"] * 4 if table is None else ["watched"] + [table] * 3
    bots: dict[str, Any] = {"watched": watched}
    started = time.process_time()
    for i in range(hands):
        # The seats turn round: at a table of ``table`` the bot plays each seat in turn.
        turned = seats[-(i % 4) :] + seats[: -(i % 4)]  # i % 4 == 0: seats[0:] + []
        play_game(f"d{i}", RuleOptions(), turned, f"{seed}-{i}", bots=bots, max_hands=1)
    figures = tally.figures()
    return (
        {"bot": bot, "table": table or bot, "hands": hands, "seed": seed}
        | figures
        | {"cpu_seconds": round(time.process_time() - started, 1)}
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot", default="montecarlo", help="the bot watched (bots/specs.py)")
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--seed", default="departures")
    parser.add_argument("--table", help="the other three seats (default: the bot itself)")
    parser.add_argument(
        "--again",
        action="store_true",
        help="ask each play a second time from the same view, with another seed (twice the CPU)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    result = departures(args.bot, args.hands, args.seed, args.table, args.again)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.bot} at a table of {result['table']}, {args.hands} hands:")
    print(f"  {result['departures']} of {result['decisions']} plays with a choice depart from")
    print(f"  the heuristic ({result['rate']:.1%}); {result['cpu_seconds']} s of CPU")
    for kind, row in result["by_kind"].items():
        print(f"  {kind:<20} {row['departures']:>6} of {row['decisions']:>6}  {row['rate']:.1%}")
    print("  by trick: " + ", ".join(f"{t}: {r:.0%}" for t, r in result["by_trick"].items()))
    for kind, rows in result["commonest"].items():
        print(f"  commonest {kind} departures (normal mood):")
        for what, n in rows:
            print(f"    {n:>6}  {what}")
    print("  the departures heuristic.stray_card names (montecarlo's stray), normal mood:")
    for kind, row in result["stray"].items():
        print(
            f"    {kind:<8} {row['named']:>6} of {row['departures']:>6}  {row['share']:.1%}"
            f"  (it offers a card at {row['offered']} plays)"
        )
    if "again" in result:
        print("  asked again from the same view (another seed), normal mood:")
        for kind, row in result["again"].items():
            print(
                f"    {kind:<8} the same card at {row['same']:.1%} of {row['asked']} plays;"
                f" {row['repeated']:.1%} of its {row['departures']} departures made again"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
