"""Bearer tokens: a seat's secret, shown once at join; only its SHA-256 is ever stored.

The credential recorded in ``PlayerJoined`` is ``sha256(token)`` in hex. A request proves its seat
by presenting the token; the comparison is constant-time and looks at every seat, so timing tells
nothing about which seat (if any) matched.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from domain.state import SeatInfo

TOKEN_BYTES = 32


class Unauthorized(Exception):
    """No token, a malformed Authorization header, or a token of no seat of this game."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Forbidden(Exception):
    """A valid token, but for another seat than the one the request acts for."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def new_token() -> tuple[str, str]:
    """A fresh ``(token, credential)``: give the token to the player, record the credential."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    return token, credential_of(token)


def credential_of(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header; None if there is no header."""
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthorized("the Authorization header must be 'Bearer <token>'")
    return token


def seat_of(seats: Sequence[SeatInfo], token: str) -> int | None:
    """The seat whose credential matches the token, or None. Constant time over all seats."""
    presented = credential_of(token).encode("ascii")
    found: int | None = None
    for seat, info in enumerate(seats):
        stored = (info.credential or "").encode("ascii", "replace")
        # compare_digest with a dummy keeps the work the same for open and bot seats.
        if hmac.compare_digest(presented, stored or b"\0" * len(presented)) and stored:
            found = seat
    return found


# -- an idempotent join replays its token without the token being stored --------------------------
#
# A retried join (same Idempotency-Key) must get its token back, but the server keeps only the
# token's hash. So the idempotency record holds the token sealed with AES-GCM under a key derived
# (HKDF) from the Idempotency-Key itself, which Redis never sees (record scopes are hashed too):
# only the client that knows the key can get the token back, and an altered record fails to open
# instead of yielding a wrong token.

SEAL_VERSION = "v2."

# A join's key is the only secret that opens its receipt, so it must not be guessable: at least
# 128 bits if drawn at random. The server cannot measure randomness; it refuses what is visibly
# too little of it: fewer than 22 characters (secrets.token_urlsafe(16) is 22, a UUID 32 hex
# digits), a character outside base64url/hex/UUID's alphabet, or fewer than 8 distinct
# characters ("aaaa...", "abab..."): a random key of 22 such characters has at least 8 with
# near certainty.
JOIN_KEY_MIN_LENGTH = 22
JOIN_KEY_MIN_DISTINCT = 8
_JOIN_KEY_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")


JOIN_CODE_BYTES = 16


def join_code(game_id: str, idempotency_key: str | None) -> str:
    """A private table's join code (128 bits, base64url): random, or (a create with an
    Idempotency-Key) derived from the key, so that a retry of the create gets the same code
    back while the server keeps only its hash (``credential_of``), as it does a seat's token."""
    if idempotency_key is None:
        return secrets.token_urlsafe(JOIN_CODE_BYTES)
    message = f"join-code:{game_id}".encode()
    digest = hmac.new(idempotency_key.encode("utf-8"), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:JOIN_CODE_BYTES]).rstrip(b"=").decode("ascii")


def unguessable_key(key: str) -> bool:
    """Whether ``key`` may seal a join's token: long, base64url/hex/UUID, not repetitive."""
    return (
        len(key) >= JOIN_KEY_MIN_LENGTH
        and set(key) <= _JOIN_KEY_ALPHABET
        and len(set(key.replace("-", ""))) >= JOIN_KEY_MIN_DISTINCT
    )


_NONCE_BYTES = 12


class BrokenSeal(Exception):
    """A sealed token that does not open with this key and scope (altered, or not ours)."""


def seal_token(token: str, idempotency_key: str, scope: str) -> str:
    nonce = secrets.token_bytes(_NONCE_BYTES)
    sealed = AESGCM(_seal_key(idempotency_key, scope)).encrypt(
        nonce, token.encode("utf-8"), scope.encode("utf-8")
    )
    return SEAL_VERSION + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")


def open_token(sealed: str, idempotency_key: str, scope: str) -> str:
    if not sealed.startswith(SEAL_VERSION):
        return _open_legacy(sealed, idempotency_key, scope)
    data = base64.urlsafe_b64decode(sealed[len(SEAL_VERSION) :].encode("ascii"))
    nonce, body = data[:_NONCE_BYTES], data[_NONCE_BYTES:]
    try:
        plain = AESGCM(_seal_key(idempotency_key, scope)).decrypt(
            nonce, body, scope.encode("utf-8")
        )
    except InvalidTag:
        raise BrokenSeal("the sealed token does not open with this key") from None
    return plain.decode("utf-8")


def _seal_key(idempotency_key: str, scope: str) -> bytes:
    return HKDF(
        algorithm=hashes.SHA256(),
        length=32,
        salt=None,
        info=b"hearts-join-token\0" + scope.encode("utf-8"),
    ).derive(idempotency_key.encode("utf-8"))


# Records sealed before AES-GCM (an HMAC key stream XOR, no version prefix) live at most the
# idempotency TTL (24 h): this reader lets a join retried across the upgrade get its token back.
# Delete it (and _stream) one TTL after the upgrade is deployed; nothing writes this form.


def _open_legacy(sealed: str, idempotency_key: str, scope: str) -> str:
    data = base64.urlsafe_b64decode(sealed.encode("ascii"))
    stream = _stream(idempotency_key, scope, len(data))
    return bytes(x ^ y for x, y in zip(data, stream, strict=True)).decode("utf-8")


def _stream(key: str, scope: str, size: int) -> bytes:
    out = b""
    counter = 0
    while len(out) < size:
        message = f"hearts-join-token\0{scope}\0{counter}".encode()
        out += hmac.new(key.encode("utf-8"), message, hashlib.sha256).digest()
        counter += 1
    return out[:size]
