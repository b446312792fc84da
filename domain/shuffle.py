"""The shuffle: Fisher-Yates driven by SHA-256 of the seed and a counter.

Language independent, so anyone can re-derive a deal from its seed:

1. Random bytes: block ``k`` (k = 0, 1, 2, ...) is ``SHA-256(seed_utf8 || ":" || decimal(k))``;
   the byte stream is block 0, then block 1, and so on. Each draw takes the next 4 bytes as an
   unsigned 32-bit big-endian integer ``x``.
2. A uniform integer below ``n``: draw ``x``; if ``x >= 2**32 - (2**32 % n)`` draw again
   (rejection, so there is no modulo bias); the result is ``x % n``.
3. Fisher-Yates: for ``i`` from ``len(cards) - 1`` down to 1, draw ``j`` uniform below ``i + 1``
   and swap positions ``i`` and ``j``.

The input order is the deck order (clubs 2..A, diamonds, spades, hearts), less any cards out of
play. The deal then gives shuffled card ``k`` to seat ``(dealer + 1 + k) % players`` (one at a
time, clockwise from the dealer's left) until every seat has its hand; the rest is the kitty.

Test vectors (the full ones are in docs/rules.md and tests/domain/test_shuffle.py):
``SHA-256("hearts:0")`` starts ``b9e81134 2f07ce75``, so the first two swaps are 51<->20 and
50<->20, and ``shuffled(DECK, "hearts")`` starts ``3S 8H JC KD AD`` and ends ``AH 9D``.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import TypeVar

T = TypeVar("T")

_SPAN = 1 << 32
_BLOCK = struct.Struct(">8I")  # a SHA-256 block as eight unsigned 32-bit big-endian draws


def _draws(seed: str, counter: int = 0) -> Iterator[int]:
    """The draws of step 1, from block ``counter`` on."""
    prefix = seed.encode("utf-8") + b":"
    sha256 = hashlib.sha256
    while True:
        # A block's eight draws unpacked at once (every deal runs this loop).
        yield from _BLOCK.unpack(sha256(prefix + str(counter).encode("ascii")).digest())
        counter += 1


def _below(draws: Iterator[int], n: int) -> int:
    limit = _SPAN - (_SPAN % n)
    while True:
        x = next(draws)
        if x < limit:
            return x % n


def shuffled(items: Sequence[T], seed: str) -> list[T]:
    """A new list: ``items`` shuffled by the seed, exactly as the module docstring says."""
    out = list(items)
    swaps = len(out) - 1
    if swaps < 1:
        return out
    # Every deal runs this: the blocks a shuffle needs without a rejection (one draw per swap)
    # hashed and unpacked at once, more blocks only if a rejection (rare) uses them up; the
    # draw of ``_below`` written in the loop, since a call per swap was half the shuffle's time.
    blocks = (swaps + 7) // 8
    prefix = seed.encode("utf-8") + b":"
    sha256 = hashlib.sha256
    digests = b"".join([sha256(prefix + b"%d" % k).digest() for k in range(blocks)])
    draws = chain(struct.unpack(f">{8 * blocks}I", digests), _draws(seed, blocks))
    span = _SPAN
    for i in range(swaps, 0, -1):
        n = i + 1
        limit = span - span % n
        x = next(draws)
        while x >= limit:
            x = next(draws)
        j = x % n
        out[i], out[j] = out[j], out[i]
    return out


SALT_HEX_DIGITS = 32  # 128 bits: no dictionary of seeds can be tried against every salt
_SALT = re.compile(r"[0-9a-f]{32,128}")


def is_salt(salt: str) -> bool:
    return isinstance(salt, str) and _SALT.fullmatch(salt) is not None


def seed_commitment(seed: str, salt: str | None = None) -> str:
    """The commitment published with the deal (the seed and salt come after the hand).

    Format 2 (salted, every deal the service makes): lowercase hex of
    ``SHA-256(UTF-8(salt + ":" + seed))``, the salt being 32+ random lowercase hex digits. The
    salt hides the seed: a seed someone could guess ("bluebird42") cannot be tested against the
    commitment while the salt is secret, and the salt is revealed with the seed.

    Format 1 (``salt`` None, games dealt before salts): ``SHA-256(UTF-8(seed))``, which anyone
    can test guesses against. Still computed, so old logs audit as they were committed.
    """
    if salt is None:
        return hashlib.sha256(seed.encode("utf-8")).hexdigest()
    return hashlib.sha256(f"{salt}:{seed}".encode()).hexdigest()


# A player's contribution to a hand's shuffle: short, unambiguous text (the web table and the
# client make up 32 random hex digits).
CONTRIBUTION = re.compile(r"[A-Za-z0-9_-]{1,64}")


def is_contribution(text: object) -> bool:
    return isinstance(text, str) and CONTRIBUTION.fullmatch(text) is not None


def mixed_seed(seed: str, contributions: Sequence[tuple[int, str]] = ()) -> str:
    """The seed a hand is shuffled by: the server's ``seed`` itself when no player contributed
    (and for every hand dealt before contributions), else lowercase hex of
    ``SHA-256(UTF-8("deal:" + seed + "|" + "|".join(seat + "=" + contribution)))`` over the
    contributions in seat order. The server's seed was committed before any contribution was
    accepted, and stays secret until the hand is over: the server cannot choose the deal after
    seeing the contributions, and no player can without knowing the server's seed."""
    if not contributions:
        return seed
    parts = "|".join(f"{seat}={text}" for seat, text in sorted(contributions))
    return hashlib.sha256(f"deal:{seed}|{parts}".encode()).hexdigest()
