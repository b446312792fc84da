"""A join's token sealed in its idempotency record: AES-GCM, opened only with the same key and
scope, and an altered record refused rather than read as another token."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.app.auth import SEAL_VERSION, BrokenSeal, _stream, open_token, seal_token

keys = st.text(min_size=1, max_size=64)


@given(token=st.text(min_size=1, max_size=64), key=keys, scope=st.text(max_size=64))
def test_a_sealed_token_opens_with_its_key_and_scope(token, key, scope):
    assert open_token(seal_token(token, key, scope), key, scope) == token


@given(key=keys, other=keys)
def test_another_key_does_not_open_it(key, other):
    if key == other:
        return
    with pytest.raises(BrokenSeal):
        open_token(seal_token("secret-token", key, "scope"), other, "scope")


def test_another_scope_does_not_open_it():
    with pytest.raises(BrokenSeal):
        open_token(seal_token("secret-token", "key", "scope-a"), "key", "scope-b")


def test_an_altered_record_is_refused_not_misread():
    sealed = seal_token("secret-token", "key", "scope")
    data = bytearray(base64.urlsafe_b64decode(sealed[len(SEAL_VERSION) :]))
    data[-1] ^= 1
    altered = SEAL_VERSION + base64.urlsafe_b64encode(bytes(data)).decode()
    with pytest.raises(BrokenSeal):
        open_token(altered, "key", "scope")


def test_sealing_twice_gives_different_records():
    # A fresh nonce each time: equal tokens do not show as equal records.
    assert seal_token("t", "key", "scope") != seal_token("t", "key", "scope")


def test_a_record_sealed_the_old_way_still_opens():
    # Written before AES-GCM (HMAC key stream XOR); such records live at most 24 h.
    token = b"old-token"
    old = base64.urlsafe_b64encode(
        bytes(x ^ y for x, y in zip(token, _stream("key", "scope", len(token)), strict=True))
    ).decode()
    assert open_token(old, "key", "scope") == "old-token"
