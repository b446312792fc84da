"""RFC 9162 (RFC 6962) Merkle trees: roots, inclusion and consistency proofs, made and checked.

Pure and standalone (hashlib only), so a verifier needs nothing of the server: the server imports
this module to make its proofs, the client and ``hearts-verify`` to check them.

Hashing (RFC 9162 section 2.1.1)::

    leaf hash = SHA-256(0x00 || leaf data)
    node hash = SHA-256(0x01 || left || right)
    root of the empty tree = SHA-256("")

The tree of n leaves splits at k, the largest power of two below n: root(D[0:n]) =
node(root(D[0:k]), root(D[k:n])). The functions that *make* proofs take the leaves' hashes
(``leaf_hash`` of each leaf, in order); the functions that *check* proofs take one leaf hash or
two roots and the proof, and never the tree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()


class ProofError(ValueError):
    """A proof that does not check out (wrong length, wrong hashes, impossible sizes)."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def root(leaves: Sequence[bytes]) -> bytes:
    """The root hash of the tree whose leaf hashes are ``leaves``."""
    n = len(leaves)
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return leaves[0]
    # Bottom up, level by level: the same tree as the recursive definition (a lone last node
    # is carried up unchanged), without recursion.
    level = list(leaves)
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


# MTH(D[lo:hi]): the hash of the subtree over leaves lo..hi-1. The proofs below ask for the
# subtrees they need through it, so the same code makes proofs from a list of leaf hashes (here)
# or from a tiled log's stored hashes (hearts_client.tiles), reading O(log n) of them.
Subtree = Callable[[int, int], bytes]


def _over(leaves: Sequence[bytes]) -> Subtree:
    return lambda lo, hi: root(leaves[lo:hi])


def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """PATH(index, D[n]) of RFC 9162 section 2.1.3.1, for the leaf hashes ``leaves``."""
    return inclusion_proof_of(_over(leaves), len(leaves), index)


def inclusion_proof_of(subtree: Subtree, size: int, index: int) -> list[bytes]:
    """PATH(index, D[size]), the subtrees' hashes given by ``subtree``."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    return _path(subtree, 0, size, index)


def _path(subtree: Subtree, lo: int, hi: int, index: int) -> list[bytes]:
    if hi - lo == 1:
        return []
    k = _split(hi - lo)
    if index < lo + k:
        return [*_path(subtree, lo, lo + k, index), subtree(lo + k, hi)]
    return [*_path(subtree, lo + k, hi, index), subtree(lo, lo + k)]


def consistency_proof(leaves: Sequence[bytes], old_size: int) -> list[bytes]:
    """PROOF(m, D[n]) of RFC 9162 section 2.1.4.1: the tree of ``leaves`` extends its first
    ``old_size`` leaves. Empty when ``old_size`` is 0 or the whole tree."""
    return consistency_proof_of(_over(leaves), len(leaves), old_size)


def consistency_proof_of(subtree: Subtree, size: int, old_size: int) -> list[bytes]:
    """PROOF(old_size, D[size]), the subtrees' hashes given by ``subtree``."""
    if not 0 <= old_size <= size:
        raise ValueError(f"size {old_size} is not within a tree of {size}")
    if old_size in (0, size):
        return []
    return _subproof(subtree, 0, size, old_size, True)


def _subproof(subtree: Subtree, lo: int, hi: int, m: int, whole: bool) -> list[bytes]:
    if m == hi - lo:
        return [] if whole else [subtree(lo, hi)]
    k = _split(hi - lo)
    if m <= k:
        return [*_subproof(subtree, lo, lo + k, m, whole), subtree(lo + k, hi)]
    return [*_subproof(subtree, lo + k, hi, m - k, False), subtree(lo, lo + k)]


def root_from_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes]) -> bytes:
    """The root that ``proof`` puts ``leaf`` (a leaf hash) under at ``index`` of a tree of
    ``size`` (RFC 9162 section 2.1.3.2); ProofError if the proof cannot be one."""
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is not in a tree of {size}")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        _check_hash(p)
        if sn == 0:
            raise ProofError("the inclusion proof is too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is too short")
    return r


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], expected_root: bytes
) -> None:
    """Raise ProofError unless ``proof`` shows ``leaf`` at ``index`` under ``expected_root``."""
    if root_from_inclusion(leaf, index, size, proof) != expected_root:
        raise ProofError(f"leaf {index} is not under that root of a tree of {size}")


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Raise ProofError unless ``proof`` shows the tree (``new_size``, ``new_root``) extends
    (``old_size``, ``old_root``) (RFC 9162 section 2.1.4.2)."""
    if not 0 <= old_size <= new_size:
        raise ProofError(f"a tree of {new_size} cannot extend one of {old_size}")
    for p in proof:
        _check_hash(p)
    if old_size == new_size:
        if proof:
            raise ProofError("a proof between equal sizes must be empty")
        if old_root != new_root:
            raise ProofError(f"two different roots for the same size {old_size}: a fork")
        return
    if old_size == 0:
        if proof:
            raise ProofError("a proof from the empty tree must be empty")
        if old_root != EMPTY_ROOT:
            raise ProofError("the empty tree has another root")
        return
    if not proof:
        raise ProofError("the consistency proof is empty")
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is a node of the new tree
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is too long")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the consistency proof is too short")
    if fr != old_root:
        raise ProofError(f"the proof does not lead to the old root of size {old_size}")
    if sr != new_root:
        raise ProofError(f"the proof does not lead to the new root of size {new_size}")


def _check_hash(value: bytes) -> None:
    if not isinstance(value, bytes) or len(value) != HASH_SIZE:
        raise ProofError("a proof hash must be 32 bytes")
