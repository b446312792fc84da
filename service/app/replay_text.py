"""A hand in the terminal, trick by trick: suit symbols, and colour where the terminal has it.

Colour follows the usual conventions: only when the output is a terminal, and never when the
``NO_COLOR`` environment variable is set to anything but the empty string.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, Any

from domain.cards import Card, Suit
from service.app.hand_records import HandRecord
from service.app.safe_text import escape_controls
from service.settings import Settings

_RESET = "\033[0m"
_RED = "\033[31m"
_BOLD = "\033[1m"
_DIM = "\033[2m"


def wants_colour(stream: IO[str], env: Mapping[str, str] | None = None) -> bool:
    if Settings.from_env(env).no_color:
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Style:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def card(self, card: Card) -> str:
        text = card.pretty
        if self.colour and card.suit in (Suit.HEARTS, Suit.DIAMONDS):
            return f"{_RED}{text}{_RESET}"
        return text

    def cards(self, cards: Sequence[Card] | None) -> str:
        if cards is None:
            return "(hidden)"
        if not cards:
            return "-"
        return " ".join(self.card(c) for c in cards)

    def bold(self, text: str) -> str:
        return f"{_BOLD}{text}{_RESET}" if self.colour else text

    def dim(self, text: str) -> str:
        return f"{_DIM}{text}{_RESET}" if self.colour else text


def seat_name(record: HandRecord, seat: int) -> str:
    info = record.seats[seat] if seat < len(record.seats) else {}
    name = escape_controls(str(info.get("name") or "open"))  # a stored name prints as text
    return f"{name} ({seat})"


def render_hand(record: HandRecord, colour: bool = False) -> str:
    """The hand as text, one line per trick; hidden cards show as ``(hidden)``."""
    s = Style(colour)
    n = len(record.dealt)
    width = max(len(seat_name(record, i)) for i in range(n))
    out: list[str] = []
    status = "finished" if record.finished else "in play"
    if record.abandoned_by is not None:
        status = "abandoned"
    out.append(
        s.bold(f"Hand {record.number}")
        + f" ({status}) - dealer {seat_name(record, record.dealer)}, pass {record.pass_direction}"
    )
    seed = "(hidden until the hand ends)" if record.seed is None else escape_controls(record.seed)
    salt = f"; salt {escape_controls(record.salt)}" if record.salt is not None else ""
    out.append(s.dim(f"  seed {seed}{salt}; commitment {record.seed_commitment}"))
    if record.explicit:
        out.append(s.dim("  dealt as given (explicit deal)"))
    out.append("  Deal:")
    for seat in range(n):
        out.append(f"    {seat_name(record, seat):<{width}}  {s.cards(record.dealt[seat])}")
    if record.kitty_dealt:
        out.append(f"    {'kitty':<{width}}  {s.cards(record.kitty_dealt)}")
    if record.cards_to_pass and record.pass_direction != "hold":
        out.append(f"  Pass ({record.pass_direction}):")
        for seat in range(n):
            passed = record.passed[seat]
            if passed is None and not record.has_passed[seat]:
                gave = "not yet"
            else:
                gave = s.cards(passed) if passed != () else "declined"
            got = s.cards(record.received[seat]) if record.received is not None else "-"
            out.append(f"    {seat_name(record, seat):<{width}}  gave {gave}; got {got}")
    if record.tricks or record.current_trick:
        out += _tricks(record, s)
    if record.finished:
        out += _scoring(record, width)
    if record.abandoned_by is not None:
        winners = ", ".join(seat_name(record, w) for w in record.winners or ())
        out.append(f"  {seat_name(record, record.abandoned_by)} left the game")
        out.append(f"  Game over: {winners} won")
    return "\n".join(out)


def _tricks(record: HandRecord, s: Style) -> list[str]:
    """One row per trick, one column per seat: ``>`` marks the lead, ``*`` the winner."""
    n = len(record.dealt)
    names = [seat_name(record, seat) for seat in range(n)]
    col = max(7, *(len(x) + 1 for x in names))
    out = ["  Tricks:", "         " + "".join(f"{x:<{col}}" for x in names)]
    rows = [(t.number, t.plays, t.winner, t) for t in record.tricks]
    if record.current_trick:
        rows.append((len(record.tricks) + 1, record.current_trick, None, None))
    for number, plays, winner, trick in rows:
        cells = []
        by_seat = {seat: card for seat, card in plays}
        leader = plays[0][0]
        for seat in range(n):
            card = by_seat.get(seat)
            if card is None:
                cells.append(" " * col)
                continue
            mark = (">" if seat == leader else " ") + s.card(card) + ("*" if seat == winner else "")
            if seat == winner:
                mark = s.bold(mark)
            visible = 1 + len(card.pretty) + (1 if seat == winner else 0)
            cells.append(mark + " " * max(col - visible, 1))
        if trick is None:
            tail = "(in play)"
        else:
            kitty = f" + kitty {s.cards(trick.kitty)}" if trick.kitty else ""
            tail = f"-> {names[trick.winner]}, {trick.points} pt{kitty}"
        out.append(f"    {number:>2}.  " + "".join(cells) + tail)
    return out


def _scoring(record: HandRecord, width: int) -> list[str]:
    n = len(record.dealt)
    out = []
    if record.shot is not None and record.shooter is not None:
        how = f", scored {record.moon_scoring}" if record.moon_scoring else ""
        out.append(f"  {seat_name(record, record.shooter)} shot the {record.shot}{how}")
    out.append("  Score:")
    assert record.points_taken is not None and record.totals is not None
    changes = record.score_changes or (0,) * n
    for seat in range(n):
        reset = (
            " (hit the limit exactly: reset)" if seat in (record.exact_limit_resets or ()) else ""
        )
        out.append(
            f"    {seat_name(record, seat):<{width}}  took {record.points_taken[seat]:>3}, "
            f"{changes[seat]:+d} -> {record.totals[seat]}{reset}"
        )
    if record.game_over:
        winners = ", ".join(seat_name(record, w) for w in record.winners or ())
        out.append(f"  Game over: {winners} won")
    return out


def render_hands(records: Sequence[HandRecord], colour: bool = False) -> str:
    return "\n\n".join(render_hand(r, colour) for r in records)


def render_summary(game_id: str, rules: dict[str, Any], seats: Sequence[dict[str, Any]]) -> str:
    names = ", ".join(
        f"{s.get('name') or 'open'} ({s['seat']}{', bot ' + s['bot'] if s.get('bot') else ''})"
        for s in seats
    )
    interesting = {k: v for k, v in rules.items() if v not in (None, False, [], ())}
    shown = ", ".join(f"{k}={_short(v)}" for k, v in interesting.items())
    # Every piece may come from a client (an imported document's too): printed as text.
    return escape_controls(f"Game {game_id}\n  seats: {names}\n  rules: {shown}", keep="\n")


def _short(value: Any) -> str:
    if isinstance(value, list):
        return "/".join(str(v) for v in value)
    return str(value)
