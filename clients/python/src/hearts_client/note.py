"""Signed notes (c2sp.org/signed-note), checkpoints (c2sp.org/tlog-checkpoint), witness
cosignatures (c2sp.org/tlog-cosignature) and the hearts game head, with Ed25519 from
``cryptography`` (never hand-rolled).

A signed note is a text ending in a newline, a blank line, then signature lines::

    — <key name> base64(key ID (4 bytes, big-endian) || signature)

key ID = SHA-256(key name || 0x0A || type || public key)[:4], type 0x01 for a plain Ed25519
signature over the text, 0x04 for a timestamped cosignature. A verifier key ("vkey") is written
``<name>+<hex key ID>+base64(type || public key)``.

The texts signed here:

- a **checkpoint**: ``<origin>\\n<tree size>\\n<base64 root hash>\\n``;
- a **game head** (this project's format, in the same style)::

      <origin>
      game <game id>
      version <n>
      hash <the chain hash of event n, 64 lowercase hex digits>

  The second line is not a number, so a head can never be read as a checkpoint. The
  ``Hearts-Head`` response header carries the whole signed note in base64 (a header value
  cannot hold newlines).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ED25519 = 0x01
COSIGNATURE = 0x04
DASH = "\u2014 "
MAX_SIGNATURES = 64
_NAME = re.compile(r"^[^\s+]+$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class NoteError(ValueError):
    """A note that is malformed, or whose signature from a known key does not verify."""


def _b64decode(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NoteError(f"not base64: {text[:40]!r}") from None


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise NoteError(f"key name {name!r} is empty or holds a space or '+'")


def key_id(name: str, sig_type: int, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + bytes([sig_type]) + public).digest()[:4]


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(Encoding.Raw, PublicFormat.Raw)


@dataclass(frozen=True)
class Verifier:
    """A named Ed25519 public key of one signature type (0x01 a signer, 0x04 a cosigner)."""

    name: str
    public: bytes
    sig_type: int = ED25519

    @property
    def id(self) -> bytes:
        return key_id(self.name, self.sig_type, self.public)

    def vkey(self) -> str:
        material = base64.b64encode(bytes([self.sig_type]) + self.public).decode()
        return f"{self.name}+{self.id.hex()}+{material}"

    @classmethod
    def parse(cls, vkey: str) -> Verifier:
        parts = vkey.strip().split("+", 2)
        if len(parts) != 3:
            raise NoteError("a verifier key is <name>+<hex key id>+<base64 key>")
        name, hex_id, material = parts
        _check_name(name)
        raw = _b64decode(material)
        if len(raw) != 33 or raw[0] not in (ED25519, COSIGNATURE):
            raise NoteError("only Ed25519 verifier keys (types 0x01 and 0x04) are supported")
        verifier = cls(name, raw[1:], raw[0])
        if verifier.id.hex() != hex_id.lower():
            raise NoteError(f"the key id of {name} is {verifier.id.hex()}, not {hex_id}")
        return verifier

    def verify(self, message: bytes, signature: bytes) -> None:
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except (InvalidSignature, ValueError):
            raise NoteError(f"the signature of {self.name} does not verify") from None


@dataclass(frozen=True)
class Signer:
    """A named Ed25519 private key: signs notes (type 0x01) or cosigns checkpoints (0x04)."""

    name: str
    key: Ed25519PrivateKey
    sig_type: int = ED25519

    def __post_init__(self) -> None:
        _check_name(self.name)

    @property
    def verifier(self) -> Verifier:
        return Verifier(self.name, _raw(self.key.public_key()), self.sig_type)

    def sign(self, text: str) -> str:
        """The signature line for ``text`` (a note text, ending in a newline)."""
        _check_text(text)
        signature = self.key.sign(text.encode())
        return _line(self.name, self.verifier.id + signature)

    def cosign(self, text: str, timestamp: int) -> str:
        """A c2sp.org/tlog-cosignature v1 signature line for the checkpoint ``text``."""
        _check_text(text)
        signed = self.key.sign(_cosigned_message(text, timestamp))
        return _line(self.name, self.verifier.id + struct.pack(">Q", timestamp) + signed)


def _line(name: str, blob: bytes) -> str:
    return f"{DASH}{name} {base64.b64encode(blob).decode()}\n"


def _cosigned_message(text: str, timestamp: int) -> bytes:
    if not 0 <= timestamp < 2**63:
        raise NoteError("a cosignature's timestamp must be 0 to 2^63-1")
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def _check_text(text: str) -> None:
    if not text.endswith("\n"):
        raise NoteError("a note text ends with a newline")
    if any(ord(ch) < 0x20 and ch != "\n" for ch in text):
        raise NoteError("a note holds no control characters but newlines")


@dataclass(frozen=True)
class Signature:
    name: str
    id: bytes
    blob: bytes  # what follows the key id

    def line(self) -> str:
        return _line(self.name, self.id + self.blob)


@dataclass(frozen=True)
class Note:
    text: str
    signatures: tuple[Signature, ...]

    @classmethod
    def parse(cls, note: str) -> Note:
        if len(note) > 1_000_000:
            raise NoteError("the note is too long")
        at = note.rfind("\n\n")
        if at < 0:
            raise NoteError("a signed note has a blank line before its signatures")
        text, lines = note[: at + 1], note[at + 2 :]
        _check_text(text)
        if not lines.endswith("\n"):
            raise NoteError("a signed note ends with a newline")
        signatures = []
        for line in lines[:-1].split("\n"):
            if not line.startswith(DASH):
                raise NoteError(f"not a signature line: {line[:40]!r}")
            parts = line[len(DASH) :].split(" ")
            if len(parts) != 2:
                raise NoteError(f"not a signature line: {line[:40]!r}")
            name, encoded = parts
            _check_name(name)
            blob = _b64decode(encoded)
            if len(blob) < 5:
                raise NoteError("a signature is at least 5 bytes")
            signatures.append(Signature(name, blob[:4], blob[4:]))
        if not signatures or len(signatures) > MAX_SIGNATURES:
            raise NoteError(f"a signed note has 1 to {MAX_SIGNATURES} signatures")
        return cls(text, tuple(signatures))

    def serialize(self) -> str:
        return self.text + "\n" + "".join(s.line() for s in self.signatures)

    def with_line(self, line: str) -> Note:
        """This note with one more signature line (a cosignature), if it is not there yet."""
        extra = Note.parse(self.text + "\n" + line).signatures[0]
        if any((s.name, s.id) == (extra.name, extra.id) for s in self.signatures):
            return self
        return Note(self.text, (*self.signatures, extra))

    def verify(self, verifier: Verifier) -> int | None:
        """Check ``verifier``'s signature on this note: NoteError if absent or wrong; for a
        cosignature, its timestamp."""
        for s in self.signatures:
            if s.name != verifier.name or s.id != verifier.id:
                continue
            if verifier.sig_type == COSIGNATURE:
                if len(s.blob) != 8 + 64:
                    raise NoteError(f"the cosignature of {s.name} is not 72 bytes")
                (timestamp,) = struct.unpack(">Q", s.blob[:8])
                verifier.verify(_cosigned_message(self.text, timestamp), s.blob[8:])
                return timestamp
            verifier.verify(self.text.encode(), s.blob)
            return None
        raise NoteError(f"no signature of {verifier.name} ({verifier.id.hex()})")

    def cosigners(self, verifiers: Iterable[Verifier]) -> list[str]:
        """The names of ``verifiers`` whose (co)signature on this note verifies."""
        good = []
        for verifier in verifiers:
            try:
                self.verify(verifier)
            except NoteError:
                continue
            good.append(verifier.name)
        return good


# -- checkpoints --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode()]
        return "\n".join([*lines, *self.extensions]) + "\n"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "" or any(not line for line in lines[:-1]):
            raise NoteError("a checkpoint is at least three non-empty lines")
        origin, size, root = lines[0], lines[1], lines[2]
        if not size.isdigit() or (size != "0" and size.startswith("0")) or not size.isascii():
            raise NoteError(f"tree size {size!r} is not a decimal number")
        raw = _b64decode(root)
        if len(raw) != 32:
            raise NoteError("a checkpoint's root hash is 32 bytes")
        return cls(origin, int(size), raw, tuple(lines[3:-1]))


def open_checkpoint(note: str, signer: Verifier) -> tuple[Note, Checkpoint]:
    """A signed checkpoint checked against the log's key (its origin is the key's name)."""
    parsed = Note.parse(note)
    parsed.verify(signer)
    checkpoint = Checkpoint.parse(parsed.text)
    if checkpoint.origin != signer.name:
        raise NoteError(f"the checkpoint is of {checkpoint.origin!r}, not {signer.name!r}")
    return parsed, checkpoint


# -- game heads ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Head:
    """What a player keeps: the game's version and the chain hash of that event, plain
    (``hash``: a finished game's leaf in the public log) or blinded (``blinded``: every head
    given while playing, see :func:`blind`)."""

    origin: str
    game_id: str
    version: int
    hash: str
    blinded: bool = False

    def text(self) -> str:
        label = "blinded" if self.blinded else "hash"
        return f"{self.origin}\ngame {self.game_id}\nversion {self.version}\n{label} {self.hash}\n"

    @classmethod
    def parse(cls, text: str) -> Head:
        lines = text.split("\n")
        if len(lines) != 5 or lines[-1] != "":
            raise NoteError("a game head is four lines")
        origin, game, version, last = lines[:4]
        if not game.startswith("game ") or not version.startswith("version "):
            raise NoteError("a game head's lines are the origin, game, version and hash")
        number = version[len("version ") :]
        if not number.isdigit() or not number.isascii() or len(number) > 18:
            raise NoteError(f"version {number!r} is not a decimal number")
        label, _, value = last.partition(" ")
        if label not in ("hash", "blinded") or not _HEX64.match(value):
            raise NoteError("a game head ends with 'hash' or 'blinded' and 64 lowercase hex digits")
        return cls(origin, game[len("game ") :], int(number), value, label == "blinded")

    def matches(self, chain_hash: str, salt: str | None) -> bool:
        """Whether this head is of the event whose chain hash is ``chain_hash``."""
        if not self.blinded:
            return chain_hash == self.hash
        return salt is not None and blind(chain_hash, salt) == self.hash


def blind(chain_hash: str, salt: str) -> str:
    """``lowercase_hex(SHA-256(ASCII(salt) || ASCII(chain_hash)))``.

    A head given during a game is blinded with the game's secret salt: the chain hash after a
    hidden event of little entropy (a pass: 3 cards of the 39 a player does not hold) would let
    a player who knows the hash before it try every pass. The salt is revealed once the game is
    over (``head_salt`` of ``GET /api/v1/log/games/{id}``); the server cannot then show another
    salt that makes a rewritten event match (that would be a second preimage of SHA-256).
    """
    return hashlib.sha256(salt.encode("ascii") + chain_hash.encode("ascii")).hexdigest()


def sign_head(signer: Signer, head: Head) -> str:
    """The signed note of ``head``, base64 (the ``Hearts-Head`` header's value)."""
    text = head.text()
    return base64.b64encode((text + "\n" + signer.sign(text)).encode()).decode()


def open_head(value: str, signer: Verifier) -> Head:
    """A ``Hearts-Head`` value checked against the server's key; NoteError if it is not one."""
    try:
        note = _b64decode(value.strip()).decode()
    except UnicodeDecodeError:
        raise NoteError("a head is base64 of UTF-8 text") from None
    parsed = Note.parse(note)
    parsed.verify(signer)
    head = Head.parse(parsed.text)
    if head.origin != signer.name:
        raise NoteError(f"the head is of {head.origin!r}, not {signer.name!r}")
    return head


def b64_hashes(hashes: Sequence[bytes]) -> list[str]:
    return [base64.b64encode(h).decode() for h in hashes]


def hashes_b64(values: Sequence[str]) -> list[bytes]:
    return [_b64decode(v) for v in values]
