"""Tiled transparency logs (c2sp.org/tlog-tiles): tile paths, entry bundles, and proofs made from
a tree's stored hashes in O(log n) reads.

A tile at level ``l`` holds up to 256 consecutive hashes of that level: level 0 the leaf hashes,
level ``l`` the roots of the full tiles of level ``l - 1`` (each the hash of 256**l leaves). A
full tile is 256 hashes (8,192 bytes) and never changes; the right edge of each level is a
*partial* tile of 1-255 hashes, named with its width. An entry bundle holds the leaves' data of
one level-0 tile, each prefixed with its length (big-endian uint16).

Any subtree of the tree that a proof needs is a run of at most 128 hashes of one tile (a
complete subtree of 2**k leaves is 2**(k % 8) hashes of level k // 8) or a few such runs joined
(the right edge), so a proof reads O(log n) tiles, never the leaves. Pure (hashlib only): the
server makes its proofs with it and a client can make them from the tiles a static host serves
(:func:`tile_reader`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from hearts_client import merkle

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT  # hashes in a full tile
ENTRIES = "entries"  # the "level" of entry bundles in their paths
CHECKPOINT = "checkpoint"  # the signed checkpoint's path, beside ``tile/``
MAX_LEVEL = 63

# (level, start, count) -> the hashes of that level at start .. start + count - 1. A proof only
# asks for runs within one tile (start and count aligned: see subtree_hash).
ReadHashes = Callable[[int, int, int], Sequence[bytes]]

_ELEMENT = re.compile(r"x\d{3}")
_LAST = re.compile(r"\d{3}")
_LEVEL = re.compile(r"0|[1-9]\d?")
_WIDTH = re.compile(r"[1-9]\d{0,2}")


class TileError(ValueError):
    """A path that is not a tile's, or a tile or bundle whose bytes are not one."""


def index_path(index: int) -> str:
    """A tile's index as path elements: 3 digits each, all but the last with an ``x``
    (1234067 -> ``x001/x234/067``)."""
    if index < 0:
        raise ValueError(f"a tile index is not negative: {index}")
    groups = []
    while True:
        groups.append(f"{index % 1000:03d}")
        index //= 1000
        if not index:
            break
    groups.reverse()
    return "/".join([*(f"x{g}" for g in groups[:-1]), groups[-1]])


def tile_path(level: int | str, index: int, width: int | None = None) -> str:
    """``tile/<L>/<N>[.p/<W>]`` (level ``ENTRIES``: an entry bundle); ``width`` for a partial
    tile (1-255), None for a full one."""
    if level != ENTRIES and not (isinstance(level, int) and 0 <= level <= MAX_LEVEL):
        raise ValueError(f"no tile level {level!r}")
    path = f"tile/{level}/{index_path(index)}"
    if width is None:
        return path
    if not 0 < width < TILE_WIDTH:
        raise ValueError(f"a partial tile is 1-255 wide, not {width}")
    return f"{path}.p/{width}"


# A tree's size is a uint64 (c2sp.org/tlog-tiles): no tile index has more digits than 2**64.
MAX_INDEX_DIGITS = len(str(2**64))


def parse_tile_path(path: str) -> tuple[int | str, int, int | None]:
    """(level or ``ENTRIES``, index, width or None) of ``tile/<L>/<N>[.p/<W>]``; TileError
    unless the path is one exactly as the spec writes it (no leading zeros, no other form)."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "tile":
        raise TileError(f"not a tile path: {path[:80]!r}")
    level: int | str
    if parts[1] == ENTRIES:
        level = ENTRIES
    elif _LEVEL.fullmatch(parts[1]) and int(parts[1]) <= MAX_LEVEL:
        level = int(parts[1])
    else:
        raise TileError(f"no tile level {parts[1][:8]!r}")
    rest, width = parts[2:], None
    if len(rest) >= 2 and rest[-2].endswith(".p"):
        if not _WIDTH.fullmatch(rest[-1]) or int(rest[-1]) >= TILE_WIDTH:
            raise TileError(f"a partial tile is 1-255 wide, not {rest[-1][:8]!r}")
        width = int(rest[-1])
        rest = [*rest[:-2], rest[-2][: -len(".p")]]
    if not _LAST.fullmatch(rest[-1]) or not all(_ELEMENT.fullmatch(e) for e in rest[:-1]):
        raise TileError(f"not a tile index: {'/'.join(rest)[:80]!r}")
    digits = "".join(e.lstrip("x") for e in rest)
    if len(digits) > MAX_INDEX_DIGITS:  # before int(): it refuses over 4,300 digits (ValueError)
        raise TileError(f"a tile index past any tree: {len(digits)} digits")
    index = int(digits)
    if index_path(index) != "/".join(rest):  # x000/123: the same index, not its path
        raise TileError(f"not a tile index: {'/'.join(rest)[:80]!r}")
    return level, index, width


def entry_bundle(entries: Sequence[bytes]) -> bytes:
    """The bundle of ``entries``: each prefixed with its length, a big-endian uint16."""
    out = bytearray()
    for entry in entries:
        if len(entry) > 0xFFFF:
            raise ValueError(f"an entry of {len(entry)} bytes does not fit a bundle")
        out += len(entry).to_bytes(2, "big") + entry
    return bytes(out)


def parse_entry_bundle(data: bytes) -> list[bytes]:
    entries, at = [], 0
    while at < len(data):
        if at + 2 > len(data):
            raise TileError("an entry bundle ends inside a length")
        end = at + 2 + int.from_bytes(data[at : at + 2], "big")
        if end > len(data):
            raise TileError("an entry bundle ends inside an entry")
        entries.append(data[at + 2 : end])
        at = end
    return entries


def tile_hashes(data: bytes) -> list[bytes]:
    """A tile's hashes (TileError unless it is 1-256 whole hashes)."""
    size = merkle.HASH_SIZE
    if not data or len(data) % size or len(data) > TILE_WIDTH * size:
        raise TileError(f"a tile of {len(data)} bytes is not 1-256 hashes")
    return [data[i : i + size] for i in range(0, len(data), size)]


def hashes_below(level: int, size: int) -> int:
    """How many hashes of ``level`` a tree of ``size`` leaves has (roots of full subtrees of
    256**level leaves)."""
    return size >> (TILE_HEIGHT * level)


def tile_exists(level: int | str, index: int, width: int | None, size: int) -> bool:
    """Whether a tree of ``size`` has ``tile/<level>/<index>[.p/<width>]`` (level
    ``ENTRIES``: an entry bundle): all of its hashes (entries) are in that tree."""
    count = TILE_WIDTH if width is None else width
    below = size if level == ENTRIES else hashes_below(int(level), size)
    return index * TILE_WIDTH + count <= below


def partial_tiles(size: int) -> list[tuple[int | str, int, int]]:
    """(level or ``ENTRIES``, index, width) of each partial tile and bundle of a tree of
    ``size``: the right edge of every level that does not end on a full tile."""
    found: list[tuple[int | str, int, int]] = []
    level = 0
    while (below := hashes_below(level, size)) > 0:
        index, width = divmod(below, TILE_WIDTH)
        if width:
            found.append((level, index, width))
            if level == 0:
                found.append((ENTRIES, index, width))
        level += 1
    return found


def subtree_hash(read: ReadHashes, lo: int, hi: int) -> bytes:
    """MTH(D[lo:hi]) from the tree's stored hashes: one run of one tile for a complete subtree
    (2**k leaves from a multiple of 2**k), else the RFC's split into such subtrees."""
    n = hi - lo
    if n <= 0:
        raise ValueError(f"no subtree over leaves {lo}..{hi - 1}")
    if n & (n - 1) == 0 and lo % n == 0:
        k = n.bit_length() - 1
        level, run = divmod(k, TILE_HEIGHT)
        hashes = read(level, lo >> (TILE_HEIGHT * level), 1 << run)
        if len(hashes) != 1 << run:
            raise ValueError(f"{len(hashes)} hashes of level {level} read, not {1 << run}")
        return merkle.root(hashes)
    k = 1 << ((n - 1).bit_length() - 1)
    return merkle.node_hash(subtree_hash(read, lo, lo + k), subtree_hash(read, lo + k, hi))


def tree_root(read: ReadHashes, size: int) -> bytes:
    return merkle.EMPTY_ROOT if size == 0 else subtree_hash(read, 0, size)


def inclusion_proof(read: ReadHashes, size: int, index: int) -> list[bytes]:
    return merkle.inclusion_proof_of(lambda lo, hi: subtree_hash(read, lo, hi), size, index)


def consistency_proof(read: ReadHashes, size: int, old_size: int) -> list[bytes]:
    return merkle.consistency_proof_of(lambda lo, hi: subtree_hash(read, lo, hi), size, old_size)


def tile_reader(fetch: Callable[[str], bytes | None], size: int) -> ReadHashes:
    """Reads hashes from the tiles of a tree of ``size`` (a checkpoint's) through ``fetch``
    (a tile's path -> its bytes, None if there is none: a static host, a bucket, a copy of
    either), as a client of c2sp.org/tlog-tiles does: the full tile where the tree has it, else
    the partial tile of its width, else (a log may delete a partial tile once the full one is
    there) the full tile's first hashes."""
    fetched: dict[str, list[bytes]] = {}

    def read(level: int, start: int, count: int) -> list[bytes]:
        index, offset = divmod(start, TILE_WIDTH)
        width = min(TILE_WIDTH, hashes_below(level, size) - index * TILE_WIDTH)
        if offset + count > width:
            raise ValueError(
                f"hashes {start}..{start + count - 1} of level {level} are not in a tree of {size}"
            )
        path = tile_path(level, index, None if width == TILE_WIDTH else width)
        if path not in fetched:
            data = fetch(path)
            if data is None and width != TILE_WIDTH:
                full = fetch(tile_path(level, index))
                if full is not None and len(tile_hashes(full)) == TILE_WIDTH:
                    data = full[: width * merkle.HASH_SIZE]
            if data is None:
                raise TileError(f"{path} is not there")
            hashes = tile_hashes(data)
            if len(hashes) != width:
                raise TileError(f"{path} has {len(hashes)} hashes")
            fetched[path] = hashes
        return fetched[path][offset : offset + count]

    return read
