"""docs/replay.md's deal scheme is the server's: its reference code and vectors are checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from domain.dealing import deal_from_seed, dealer_of
from domain.rules import RuleOptions
from domain.shuffle import seed_commitment
from service.app.deal_plan import hand_seed

DOC = Path(__file__).resolve().parents[2] / "docs" / "replay.md"


@pytest.fixture(scope="module")
def reference() -> dict:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- reference-deal -->\n```python\n(.*?)```", text, re.S)
    assert block, "docs/replay.md lost its reference implementation"
    namespace: dict = {}
    exec(compile(block.group(1), str(DOC), "exec"), namespace)  # noqa: S102 - our own doc
    return namespace


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"players": 3},
        {"players": 5},
        {"players": 6},
        {"players": 4, "kitty": True},
        {"players": 3, "kitty": True},
        {"penalty_suit": "diamonds", "players": 3},
        {"players": 3, "removed_cards": ["2S"]},
    ],
)
def test_the_reference_deals_like_the_server(reference, options):
    rules = RuleOptions.from_dict(options)
    for hand_number in range(1, 8):
        seed = hand_seed("doc-seed", hand_number)
        assert reference["hand_seed"]("doc-seed", hand_number) == seed
        assert reference["commitment"](seed) == seed_commitment(seed)
        salt = f"{hand_number:02d}" * 16
        assert reference["commitment"](seed, salt) == seed_commitment(seed, salt)
        hands, kitty = deal_from_seed(rules, dealer_of(hand_number, rules.players), seed)
        theirs, their_kitty = reference["deal"](
            seed,
            hand_number,
            rules.players,
            tuple(str(c) for c in rules.cards_out_of_play),
            rules.kitty_size,
        )
        assert theirs == [[str(c) for c in hand] for hand in hands]
        assert their_kitty == [str(c) for c in kitty]


def test_the_documented_vectors():
    text = DOC.read_text(encoding="utf-8")
    hands, _ = deal_from_seed(RuleOptions(), 0, "hearts")
    for seat, hand in enumerate(hands):
        assert f"seat {seat}: {' '.join(map(str, hand))}" in text
    assert seed_commitment("hearts") in text
    assert seed_commitment("hearts", "0123456789abcdef0123456789abcdef") in text
    assert hand_seed("my-game-seed", 1) in text
