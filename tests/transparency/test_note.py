"""Signed notes, checkpoints, cosignatures and game heads (hearts_client.note), against the
C2SP signed-note example and against tampering."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hearts_client import note as n

# c2sp.org/signed-note's example: this verifier key verifies this note.
EXAMPLE_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
EXAMPLE_NOTE = (
    "This is an example message.\n\n\u2014 example.com/foo "
    "Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
)


def test_the_c2sp_example_verifies_and_a_changed_text_does_not() -> None:
    verifier = n.Verifier.parse(EXAMPLE_VKEY)
    assert verifier.vkey() == EXAMPLE_VKEY
    n.Note.parse(EXAMPLE_NOTE).verify(verifier)
    changed = EXAMPLE_NOTE.replace("example", "altered", 1)
    with pytest.raises(n.NoteError):
        n.Note.parse(changed).verify(verifier)


def test_a_signer_signs_what_its_verifier_accepts_and_others_do_not() -> None:
    signer = n.Signer("hearts.test/log", Ed25519PrivateKey.generate())
    other = n.Signer("hearts.test/log", Ed25519PrivateKey.generate())
    text = n.Checkpoint("hearts.test/log", 3, b"\x01" * 32).text()
    note = n.Note.parse(text + "\n" + signer.sign(text))
    note.verify(n.Verifier.parse(signer.verifier.vkey()))
    with pytest.raises(n.NoteError):
        note.verify(other.verifier)  # same name, another key: no signature of it
    assert n.Checkpoint.parse(note.text).size == 3


def test_a_cosignature_is_timestamped_and_bound_to_the_checkpoint() -> None:
    log = n.Signer("hearts.test/log", Ed25519PrivateKey.generate())
    witness = n.Signer("witness.test/w1", Ed25519PrivateKey.generate(), n.COSIGNATURE)
    text = n.Checkpoint("hearts.test/log", 7, b"\x02" * 32).text()
    note = n.Note.parse(text + "\n" + log.sign(text)).with_line(witness.cosign(text, 1700000000))
    assert note.verify(witness.verifier) == 1700000000
    assert note.cosigners([witness.verifier, log.verifier]) == [witness.verifier.name, log.name]
    # The same line on another checkpoint does not verify.
    other = n.Checkpoint("hearts.test/log", 8, b"\x02" * 32).text()
    moved = n.Note(other, note.signatures)
    with pytest.raises(n.NoteError):
        moved.verify(witness.verifier)
    assert n.Note.parse(note.serialize()) == note


def test_a_head_round_trips_and_is_never_a_checkpoint() -> None:
    signer = n.Signer("hearts.test/log", Ed25519PrivateKey.generate())
    head = n.Head("hearts.test/log", "g1", 12, "ab" * 32)
    value = n.sign_head(signer, head)
    assert n.open_head(value, signer.verifier) == head
    with pytest.raises(n.NoteError):
        n.Checkpoint.parse(head.text())
    text = base64.b64decode(value).decode().replace("version 12", "version 13")
    with pytest.raises(n.NoteError):
        n.open_head(base64.b64encode(text.encode()).decode(), signer.verifier)


@pytest.mark.parametrize(
    "bad",
    [
        "no blank line\n\u2014 a AAAAAAA=\n",
        "text\n\n\u2014 a\n",
        "text\n\nnot a signature\n",
        "text\n\n\u2014 a !!!!\n",
        "text\x01\n\n\u2014 a AAAAAAA=\n",
    ],
)
def test_malformed_notes_are_refused(bad: str) -> None:
    with pytest.raises(n.NoteError):
        n.Note.parse(bad)
