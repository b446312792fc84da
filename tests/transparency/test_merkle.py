"""The Merkle tree module (hearts_client.merkle) against a naive RFC 9162 implementation written
here from the RFC's recursive definitions: roots, proofs made, proofs checked, tampering caught."""

from __future__ import annotations

import hashlib

import pytest
from hearts_client import merkle
from hypothesis import given, settings
from hypothesis import strategies as st

# -- the naive reference: the RFC's definitions, recursion on the data, nothing shared ---------


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def naive_mth(data: list[bytes]) -> bytes:
    n = len(data)
    if n == 0:
        return _sha(b"")
    if n == 1:
        return _sha(b"\x00" + data[0])
    k = 1
    while k * 2 < n:
        k *= 2
    return _sha(b"\x01" + naive_mth(data[:k]) + naive_mth(data[k:]))


def naive_path(m: int, data: list[bytes]) -> list[bytes]:
    n = len(data)
    if n == 1:
        return []
    k = 1
    while k * 2 < n:
        k *= 2
    if m < k:
        return naive_path(m, data[:k]) + [naive_mth(data[k:])]
    return naive_path(m - k, data[k:]) + [naive_mth(data[:k])]


def naive_subproof(m: int, data: list[bytes], b: bool) -> list[bytes]:
    n = len(data)
    if m == n:
        return [] if b else [naive_mth(data)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return naive_subproof(m, data[:k], b) + [naive_mth(data[k:])]
    return naive_subproof(m - k, data[k:], False) + [naive_mth(data[:k])]


def naive_consistency(m: int, data: list[bytes]) -> list[bytes]:
    return [] if m in (0, len(data)) else naive_subproof(m, data, True)


def _data(n: int, salt: int = 0) -> list[bytes]:
    return [f"leaf {i} {salt}".encode() for i in range(n)]


def _leaves(data: list[bytes]) -> list[bytes]:
    return [merkle.leaf_hash(d) for d in data]


sizes = st.integers(min_value=1, max_value=300)


@settings(deadline=None)  # a shared machine's pauses are not a failure
@given(n=st.integers(min_value=0, max_value=300))
def test_the_root_is_the_rfc_root(n: int) -> None:
    data = _data(n)
    assert merkle.root(_leaves(data)) == naive_mth(data)


@settings(deadline=None)  # a shared machine's pauses are not a failure
@given(n=sizes, pick=st.integers(min_value=0))
def test_an_inclusion_proof_is_the_rfc_path_and_verifies(n: int, pick: int) -> None:
    data = _data(n)
    index = pick % n
    proof = merkle.inclusion_proof(_leaves(data), index)
    assert proof == naive_path(index, data)
    merkle.verify_inclusion(merkle.leaf_hash(data[index]), index, n, proof, naive_mth(data))


@settings(deadline=None)  # a shared machine's pauses are not a failure
@given(n=sizes, pick=st.integers(min_value=0))
def test_a_consistency_proof_is_the_rfc_proof_and_verifies(n: int, pick: int) -> None:
    data = _data(n)
    m = pick % (n + 1)
    proof = merkle.consistency_proof(_leaves(data), m)
    assert proof == naive_consistency(m, data)
    merkle.verify_consistency(m, n, naive_mth(data[:m]), naive_mth(data), proof)


@settings(deadline=None)  # a shared machine's pauses are not a failure
@given(n=st.integers(min_value=2, max_value=200), pick=st.integers(min_value=0), data=st.data())
def test_a_tampered_inclusion_proof_fails(n: int, pick: int, data: st.DataObject) -> None:
    leaves = _data(n)
    index = pick % n
    proof = merkle.inclusion_proof(_leaves(leaves), index)
    root = naive_mth(leaves)
    leaf = merkle.leaf_hash(leaves[index])
    at = data.draw(st.integers(min_value=0, max_value=len(proof) - 1))
    bad = [*proof]
    bad[at] = bytes([bad[at][0] ^ 1]) + bad[at][1:]
    for args in (
        (leaf, index, n, bad),  # one hash changed
        (leaf, index, n, proof[:-1]),  # too short
        (leaf, index, n, [*proof, proof[0]]),  # too long
        (merkle.leaf_hash(b"other"), index, n, proof),  # another leaf
        (leaf, (index + 1) % n, n, proof),  # another place
    ):
        with pytest.raises(merkle.ProofError):
            merkle.verify_inclusion(*args, root)


@settings(deadline=None)  # a shared machine's pauses are not a failure
@given(n=st.integers(min_value=2, max_value=200), pick=st.integers(min_value=0), data=st.data())
def test_a_tampered_consistency_proof_fails(n: int, pick: int, data: st.DataObject) -> None:
    leaves = _data(n)
    m = 1 + pick % (n - 1)  # 1 .. n-1: a proof with content
    proof = merkle.consistency_proof(_leaves(leaves), m)
    old, new = naive_mth(leaves[:m]), naive_mth(leaves)
    at = data.draw(st.integers(min_value=0, max_value=len(proof) - 1))
    bad = [*proof]
    bad[at] = bytes([bad[at][0] ^ 1]) + bad[at][1:]
    forked = naive_mth([*leaves[: m - 1], b"rewritten", *leaves[m:]])
    for args in (
        (m, n, old, new, bad),
        (m, n, old, new, proof[:-1]),
        (m, n, old, new, [*proof, proof[0]]),
        (m, n, old, forked, proof),  # a rewritten old leaf: a fork
        (m, n, naive_mth(_data(m, salt=1)), new, proof),  # another old tree
    ):
        with pytest.raises(merkle.ProofError):
            merkle.verify_consistency(*args)


def test_equal_sizes_with_different_roots_are_a_fork() -> None:
    a, b = naive_mth(_data(5)), naive_mth(_data(5, salt=1))
    merkle.verify_consistency(5, 5, a, a, [])
    with pytest.raises(merkle.ProofError, match="fork"):
        merkle.verify_consistency(5, 5, a, b, [])


def test_impossible_sizes_and_hashes_are_refused() -> None:
    root = naive_mth(_data(4))
    with pytest.raises(merkle.ProofError):
        merkle.verify_inclusion(merkle.leaf_hash(b"x"), 4, 4, [], root)
    with pytest.raises(merkle.ProofError):
        merkle.verify_consistency(5, 4, root, root, [])
    with pytest.raises(merkle.ProofError):
        merkle.verify_consistency(2, 4, root, root, [b"short"])
    with pytest.raises(ValueError):
        merkle.inclusion_proof([], 0)
