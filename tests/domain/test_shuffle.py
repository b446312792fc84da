"""The shuffle: pinned test vectors, and an independent re-implementation of its documented steps.

``reference_shuffle`` below is written from domain/shuffle.py's docstring alone (SHA-256 of
``seed:counter`` blocks, 4-byte big-endian draws, rejection sampling, Fisher-Yates from the top),
so a change to the code that the docstring does not describe fails here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from domain import DECK, RuleOptions
from domain.dealing import cards_in_play, deal_from_seed
from domain.shuffle import _below, seed_commitment, shuffled

from .given import cards, opts

# Computed once with the code, checked by hand for the first two steps and by the reference below.
HEARTS_SHUFFLE = cards(
    "3S 8H JC KD AD QH KS 8C JH AS 2C QD 7H 7D 5H 5D 9C 6H 6S 8S 6C 2H 2S 3H 4H 7S "
    "5C AC 9S TD 5S 4C 2D JD QS TC TS 4D JS QC 7C 3C 8D TH KH 6D 3D KC 9H 4S AH 9D"
)
HEARTS_DEAL = (  # 4 players, seat 0 deals: shuffled card k goes to seat (1 + k) % 4
    cards("4C 8C TC QC KC AC 5D 9D QD KD 8S 3H TH"),
    cards("6C 7C 9C 2D AD 3S 9S TS 4H 7H 9H JH KH"),
    cards("3C 4D 6D 7D TD JD 4S 7S AS 2H 6H 8H QH"),
    cards("2C 5C JC 3D 8D 2S 5S 6S JS QS KS 5H AH"),
)
EMPTY_SEED_SHUFFLE = cards(
    "8C 2D 3C 4H 9S 4D 6H QH 4S AH 6S JD QD 3D 8S TD TH KD 9H 7D 7C JS 5S TC 8H 5D "
    "9C 5C AS 7S 6D AC KC 3S QC 6C 2S KS 4C 8D 5H 7H TS 2H JH JC 9D 3H AD KH 2C QS"
)
UNICODE_SEED_SHUFFLE = cards(  # seed "é♥": the seed's UTF-8 bytes are hashed
    "KS 9D 5D TD 4D 5C 5S 4H 8D QH 9S AH 8H KH 3D 2H QD 4C 3S 6S AD 2C QS 5H QC JH "
    "JS 2S 2D 3C KD 3H 8C AS TS KC 7D AC 6H 7S 9H JC 8S 9C JD 6D TH 6C TC 7H 4S 7C"
)


def reference_draws(seed: str) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        yield from (int.from_bytes(block[k : k + 4], "big") for k in range(0, 32, 4))
        counter += 1


def reference_shuffle(items: list, seed: str) -> list:
    out, draws = list(items), reference_draws(seed)
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        x = next(draws)
        while x >= 2**32 - (2**32 % n):
            x = next(draws)
        j = x % n
        out[i], out[j] = out[j], out[i]
    return out


def test_the_hearts_vector() -> None:
    assert tuple(shuffled(DECK, "hearts")) == HEARTS_SHUFFLE
    assert sorted(HEARTS_SHUFFLE) == sorted(DECK)


def test_the_first_two_swaps_by_hand() -> None:
    block = hashlib.sha256(b"hearts:0").digest()
    first, second = int.from_bytes(block[0:4], "big"), int.from_bytes(block[4:8], "big")
    assert (first, second) == (0xB9E81134, 0x2F07CE75)
    assert first % 52 == 20 and second % 51 == 20
    assert HEARTS_SHUFFLE[51] == DECK[20] == "9D"  # 51 <-> 20
    assert HEARTS_SHUFFLE[50] == DECK[51] == "AH"  # then 50 <-> 20, where AH now is


def test_a_full_four_player_deal_from_a_seed() -> None:
    hands, kitty = deal_from_seed(RuleOptions(), 0, "hearts")
    assert hands == HEARTS_DEAL and kitty == ()
    for k, card in enumerate(HEARTS_SHUFFLE):
        assert card in HEARTS_DEAL[(1 + k) % 4]


@pytest.mark.parametrize(
    ("seed", "vector"), [("", EMPTY_SEED_SHUFFLE), ("é♥", UNICODE_SEED_SHUFFLE)]
)
def test_more_vectors(seed: str, vector: tuple) -> None:
    assert tuple(shuffled(DECK, seed)) == vector


@pytest.mark.parametrize("seed", ["hearts", "", "0", "é♥", "a" * 200, "game-42/hand-7"])
@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_the_code_does_what_the_docstring_says(seed: str, players: int) -> None:
    deck = list(cards_in_play(opts(players=players)))
    assert shuffled(deck, seed) == reference_shuffle(deck, seed)


def test_any_items_shuffle_the_same_way() -> None:
    for n in (0, 1, 2, 7, 60):
        assert shuffled(range(n), "x") == reference_shuffle(list(range(n)), "x")


def test_a_draw_at_or_above_the_limit_is_rejected() -> None:
    # n = 3: 2**32 % 3 == 1, so the limit is 2**32 - 1 and 2**32 - 1 itself is drawn again.
    assert _below(iter([2**32 - 1, 2**32 - 2]), 3) == (2**32 - 2) % 3
    assert _below(iter([2**32 - 1, 5]), 3) == 2
    # n = 52: 2**32 % 52 == 48, so the top 48 values are rejected.
    assert _below(iter([2**32 - 48, 2**32 - 49]), 52) == (2**32 - 49) % 52


def test_the_seed_commitment_is_the_seeds_sha256() -> None:
    assert seed_commitment("hearts") == hashlib.sha256(b"hearts").hexdigest()
    assert seed_commitment("hearts") == (
        "c9b5fcdd10039e8001ab16564b46f7117b96ed78a174a8c8eb60bcf0e97f757d"
    )


def test_different_seeds_give_different_deals() -> None:
    deals = {tuple(shuffled(DECK, str(k))) for k in range(50)}
    assert len(deals) == 50


def test_the_docs_show_the_same_vectors() -> None:
    text = (Path(__file__).parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    for vector in (HEARTS_SHUFFLE, EMPTY_SEED_SHUFFLE, UNICODE_SEED_SHUFFLE):
        assert " ".join(vector[:26]) + "\n" + " ".join(vector[26:]) in text
    for seat, hand in enumerate(HEARTS_DEAL):
        assert f"seat {seat}: {' '.join(hand)}" in text
    assert seed_commitment("hearts") in text
