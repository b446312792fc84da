"""The web table's card faces: 52 SVG files and a back, drawn here and written to
``static/cards/`` (``python -m service.web.cardfaces``; a test checks the files are this
module's output).

Drawn by the project rather than taken from a set: nothing to license, nothing loaded from
elsewhere, and every suit symbol is a path (an emoji or a font's ♠ is a missing-glyph box on a
machine without that font). The ranks are letters and digits of the reader's own sans-serif,
which every system has. The files use presentation attributes only: the service's
Content-Security-Policy (``style-src 'self'``) reaches an SVG served as a file, and it would
refuse a ``style`` attribute or element."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).parent / "static" / "cards"

RANKS = "23456789TJQKA"
SUITS = "CDSH"
RED = "#c8102e"
BLACK = "#17191c"
WIDTH, HEIGHT = 100, 140

# Each suit drawn in a 100 x 100 box: hearts and diamonds the red suits, spades and clubs black.
SUIT_PATHS = {
    "H": "M50 90C22 68 4 50 4 31 4 16 15 6 28 6c10 0 18 6 22 16 4-10 12-16 22-16 13 0 24 10 "
    "24 25 0 19-18 37-46 59z",
    "D": "M50 3 86 50 50 97 14 50z",
    "S": "M50 5C78 30 96 45 96 62c0 13-10 22-22 22-9 0-16-5-20-11 1 10 5 17 12 23H34c7-6 11-13 "
    "12-23-4 6-11 11-20 11C14 84 4 75 4 62 4 45 22 30 50 5z",
    "C": "M50 8a19 19 0 0 1 16 29 19 19 0 1 1 -8 35c1 9 5 17 11 24H31c6-7 10-15 11-24a19 19 0 "
    "1 1 -8-35A19 19 0 0 1 50 8z",
}

# Where the pips of a number card sit (centres on the 100 x 140 card); the lower half's pips
# are turned upside down, as on a printed card.
PIPS: dict[str, tuple[tuple[float, float], ...]] = {
    "A": ((50, 70),),
    "2": ((50, 30), (50, 110)),
    "3": ((50, 30), (50, 70), (50, 110)),
    "4": ((31, 30), (69, 30), (31, 110), (69, 110)),
    "5": ((31, 30), (69, 30), (50, 70), (31, 110), (69, 110)),
    "6": ((31, 30), (69, 30), (31, 70), (69, 70), (31, 110), (69, 110)),
    "7": ((31, 30), (69, 30), (50, 50), (31, 70), (69, 70), (31, 110), (69, 110)),
    "8": ((31, 30), (69, 30), (50, 50), (31, 70), (69, 70), (50, 90), (31, 110), (69, 110)),
    "9": (
        (31, 30), (69, 30), (31, 56.7), (69, 56.7), (50, 70),
        (31, 83.3), (69, 83.3), (31, 110), (69, 110),
    ),
    "T": (
        (31, 30), (69, 30), (50, 43), (31, 56.7), (69, 56.7),
        (31, 83.3), (69, 83.3), (50, 97), (31, 110), (69, 110),
    ),
}  # fmt: skip

# The court cards' emblems above the letter: a crown (king), a coronet with pearls (queen), a
# feathered cap (jack); simple shapes in the suit's colour on a pale panel.
EMBLEMS = {
    "K": '<path d="M36 46 34 30l9 8 7-12 7 12 9-8-2 16z" fill="{c}"/>'
    '<rect x="36" y="47" width="28" height="4" rx="1" fill="{c}"/>',
    "Q": '<path d="M37 46 35 33l7 6 8-9 8 9 7-6-2 13z" fill="{c}"/>'
    '<circle cx="35" cy="31" r="2.6" fill="{c}"/><circle cx="50" cy="28" r="2.6" fill="{c}"/>'
    '<circle cx="65" cy="31" r="2.6" fill="{c}"/>',
    "J": '<path d="M37 48c0-8 6-13 13-13s13 5 13 13z" fill="{c}"/>'
    '<path d="M58 36c6-6 12-7 15-6-3 2-7 6-11 9z" fill="{c}"/>',
}

NAMES = {"T": "10", "J": "J", "Q": "Q", "K": "K", "A": "A"}
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "S": "spades", "H": "hearts"}
RANK_NAMES = {"T": "10", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}


@dataclass(frozen=True)
class Face:
    """One card's file: its name (``QS.svg``) and its SVG text."""

    name: str
    svg: str


def _number(value: float) -> str:
    return f"{value:g}"


def _pip(x: float, y: float, size: float, flip: bool) -> str:
    """The suit (the file's ``#suit``) centred on (x, y), ``size`` wide, turned if ``flip``."""
    turn = f"rotate(180 {_number(x)} {_number(y)}) " if flip else ""
    move = f"translate({_number(x - size / 2)} {_number(y - size / 2)})"
    return f'<use href="#suit" transform="{turn}{move} scale({_number(size / 100)})"/>'


def _index(rank: str, colour: str) -> str:
    """The corner index: the rank over a small suit, top left and (turned) bottom right."""
    label = NAMES.get(rank, rank)
    squeeze = ' textLength="17" lengthAdjust="spacingAndGlyphs"' if label == "10" else ""
    corner = (
        f'<text x="11.5" y="21" text-anchor="middle" font-family="system-ui, Arial, sans-serif" '
        f'font-weight="700" font-size="20" fill="{colour}"{squeeze}>{label}</text>'
        + _pip(11.5, 30, 11, False)
    )
    return f'<g>{corner}</g><g transform="rotate(180 50 70)">{corner}</g>'


def _court(rank: str, colour: str) -> str:
    panel = (
        f'<rect x="24" y="20" width="52" height="100" rx="4" fill="#fbf3dc" stroke="{colour}" '
        'stroke-width="1.5"/>'
    )
    letter = (
        f'<text x="50" y="82" text-anchor="middle" font-family="Georgia, serif" font-weight="700" '
        f'font-size="34" fill="{colour}">{rank}</text>'
    )
    # The suit under the letter; no mirrored portrait: a clean face reads faster at this size.
    return panel + EMBLEMS[rank].format(c=colour) + letter + _pip(50, 101, 16, False)


def face(card: str) -> Face:
    """The SVG of one card (``"QS"``, ``"TD"``)."""
    rank, suit = card[0], card[1]
    colour = RED if suit in "DH" else BLACK
    title = f"{RANK_NAMES.get(rank, rank)} of {SUIT_NAMES[suit]}"
    if rank in "JQK":
        middle = _court(rank, colour)
    elif rank == "A":
        middle = _pip(50, 70, 46, False)
    else:
        middle = "".join(_pip(x, y, 19, y > 72) for x, y in PIPS[rank])
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{title}">'
        f"<title>{title}</title>"
        f'<defs><path id="suit" d="{SUIT_PATHS[suit]}" fill="{colour}"/></defs>'
        f'<rect x="0.75" y="0.75" width="{WIDTH - 1.5}" height="{HEIGHT - 1.5}" rx="7" '
        'fill="#fff" stroke="#9aa1ab" stroke-width="1.5"/>'
        f"{_index(rank, colour)}{middle}</svg>\n"
    )
    return Face(f"{card}.svg", svg)


def back() -> Face:
    """The back of a card: a blue lattice in a white border."""
    lines = "".join(
        f'<path d="M{x} 8 {x + 124} 132" stroke="#5b86c9" stroke-width="2"/>'
        f'<path d="M{x + 124} 8 {x} 132" stroke="#5b86c9" stroke-width="2"/>'
        for x in range(-116, 100, 12)
    )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}">'
        '<defs><clipPath id="inner"><rect x="8" y="8" width="84" height="124" rx="4"/>'
        "</clipPath></defs>"
        f'<rect x="0.75" y="0.75" width="{WIDTH - 1.5}" height="{HEIGHT - 1.5}" rx="7" '
        'fill="#fff" stroke="#9aa1ab" stroke-width="1.5"/>'
        '<rect x="8" y="8" width="84" height="124" rx="4" fill="#234e8a"/>'
        f'<g clip-path="url(#inner)">{lines}</g></svg>\n'
    )
    return Face("back.svg", svg)


def suit_icon(suit: str) -> Face:
    """A suit alone (``suit-H.svg``): the small cards of a replay's hands and of a sentence."""
    colour = RED if suit in "DH" else BLACK
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="100" height="100">'
        f'<path d="{SUIT_PATHS[suit]}" fill="{colour}"/></svg>\n'
    )
    return Face(f"suit-{suit}.svg", svg)


def all_faces() -> list[Face]:
    cards = [face(rank + suit) for suit in SUITS for rank in RANKS]
    return cards + [suit_icon(suit) for suit in SUITS] + [back()]


def write(folder: Path = OUT) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for item in all_faces():
        path = folder / item.name
        path.write_text(item.svg, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    paths = write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
    print(f"wrote {len(paths)} card faces to {paths[0].parent}")
