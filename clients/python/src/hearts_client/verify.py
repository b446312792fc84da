"""``hearts-verify``: check a game's export without trusting the server (docs/verify.md).

    hearts-verify game.json --log-key 'hearts.example/log+1a2b3c4d+AR...' \\
        [--head HEAD ...] [--proof proof.json] [--witness VKEY ...] [--min-witnesses N]

Checks, each reported on its own line (``ok`` or ``FAIL``):

- ``deals``: each hand's seed commitment is SHA-256 of its revealed salt and seed; a hand that
  took players' contributions had the server's seed committed before the first of them, and
  was dealt from it; and each hand's cards are the deal those seeds give (the shuffle written
  again here from the server's docs/rules.md);
- ``chain``: the export's events hash-chain from the genesis value (the algorithm is the one
  documented in the server's service/store/envelope.py, written again here from that text), and
  its ``version`` and ``last_hash`` are its last event's;
- ``head``: for each ``--head`` (a ``Hearts-Head`` header's value a player kept, or a file of
  them, one a line), its signature by the log's key, and that the export extends it: its event at
  the head's version has the head's hash (heads given during a game are blinded with the game's
  salt, revealed once it is over: ``--salt``, or the ``--proof``'s ``head_salt``). A game
  rewritten after the head was given fails here, whatever hashes were recomputed;
- ``log``: ``--proof`` (the answer of ``GET /api/v1/log/games/{id}``, kept from any time after the
  game ended) holds a checkpoint signed by the log's key, cosigned by at least
  ``--min-witnesses`` of the ``--witness`` keys, and an inclusion proof of a leaf that is the
  export's own final head under the checkpoint's root.

Uses only this package (hashlib, ``cryptography``): no server code. Exit status 0 if every check
passed, 1 if one failed, 2 if the input could not be read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_client import merkle
from hearts_client.note import (
    COSIGNATURE,
    Head,
    NoteError,
    Verifier,
    hashes_b64,
    open_checkpoint,
    open_head,
)

GENESIS_HASH = "0" * 64
BODY_FIELDS = ("type", "schema_version", "game_id", "seq", "time", "command_id", "payload")


@dataclass(frozen=True)
class Finding:
    check: str
    ok: bool
    message: str

    def __str__(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.check}: {self.message}"


class AmbiguousJson(ValueError):
    """JSON that two readers may read apart (I-JSON, RFC 7493): refused, never guessed at."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        names = [name for name, _ in pairs]
        twice = next(name for i, name in enumerate(names) if name in names[:i])
        raise AmbiguousJson(f"the name {json.dumps(twice[:40])} appears twice in one object")
    return members


def _not_json(constant: str) -> Any:
    raise AmbiguousJson(f"{constant} is not a JSON number")


def read_json(text: str) -> Any:
    """An export or a proof, read as every JSON reader reads it. Python keeps the last of a
    name given twice, other readers the first: an event with ``"card": "AS", "card": "2C"``
    would hash-chain here as the 2C and show as the AS elsewhere, so such a file is refused."""
    return json.loads(text, object_pairs_hook=_object, parse_constant=_not_json)


def _canonical(obj: Any) -> bytes:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def check_chain(document: dict[str, Any]) -> list[Finding]:
    events = document.get("events") or []
    prev, problems = GENESIS_HASH, []
    for expected_seq, event in enumerate(events, start=1):
        seq = event.get("seq")
        if seq != expected_seq:
            problems.append(f"seq {seq}: expected seq {expected_seq}")
        if event.get("prev_hash") != prev:
            problems.append(f"seq {seq}: prev_hash is not the hash of the event before")
        try:
            body = _canonical({name: event[name] for name in BODY_FIELDS})
        except (KeyError, TypeError, ValueError) as error:
            problems.append(f"seq {seq}: unhashable ({error})")
        else:
            recomputed = hashlib.sha256(str(event.get("prev_hash")).encode() + body).hexdigest()
            if recomputed != event.get("hash"):
                problems.append(f"seq {seq}: hash mismatch")
        prev = event.get("hash")
    last = events[-1] if events else {}
    if document.get("version") != last.get("seq", 0) or document.get("last_hash") != last.get(
        "hash"
    ):
        problems.append("version / last_hash are not the last event's")
    if problems:
        return [Finding("chain", False, p) for p in problems[:20]]
    return [Finding("chain", True, f"{len(events)} events chain from the genesis hash")]


# -- the deals: recomputed from what the finished game's log reveals ------------------------------
#
# Written again from the server's documentation (docs/rules.md "The shuffle", docs/verify.md),
# not imported from it: SHA-256 counter-mode draws, rejection sampling, Fisher-Yates over the
# cards in play in deck order, dealt one at a time from the dealer's left.

SUITS, RANKS = "CDSH", "23456789TJQKA"
_SPAN = 1 << 32


def _deck_order(card: str) -> int:
    return SUITS.index(card[-1]) * 13 + RANKS.index(card[:-1])


def _draws(seed: str) -> Any:
    counter = 0
    while True:
        block = hashlib.sha256(seed.encode("utf-8") + b":" + str(counter).encode()).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(block[i : i + 4], "big")
        counter += 1


def shuffled(cards: Sequence[str], seed: str) -> list[str]:
    out, draws = list(cards), _draws(seed)
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        limit = _SPAN - (_SPAN % n)
        x = next(draws)
        while x >= limit:
            x = next(draws)
        j = x % n
        out[i], out[j] = out[j], out[i]
    return out


def mixed_seed(seed: str, contributions: Sequence[Sequence[Any]]) -> str:
    if not contributions:
        return seed
    parts = "|".join(f"{seat}={text}" for seat, text in sorted(tuple(c) for c in contributions))
    return hashlib.sha256(f"deal:{seed}|{parts}".encode()).hexdigest()


def commitment(seed: str, salt: str | None) -> str:
    text = seed if salt is None else f"{salt}:{seed}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_deals(document: dict[str, Any]) -> list[Finding]:
    """Each hand's commitment is SHA-256 of its revealed salt and seed; a hand with
    contributions had its server seed committed (``SeedCommitted``) before the first of them,
    and was dealt from that very seed; and each hand not dealt as given is the deal that the
    server's seed mixed with the contributions gives."""
    problems: list[str] = []
    pledged: dict[int, tuple[int, dict[str, Any]]] = {}
    first: dict[int, int] = {}
    hands = 0
    for event in document.get("events") or []:
        kind, p, seq = event.get("type"), event.get("payload") or {}, event.get("seq")
        if kind == "SeedCommitted":
            pledged.setdefault(p.get("hand_number"), (seq, p))
        elif kind == "SeedContributed":
            first.setdefault(p.get("hand_number"), seq)
            if p.get("hand_number") not in pledged:
                problems.append(f"seq {seq}: a contribution before the server's seed was committed")
        elif kind == "HandDealt":
            hands += 1
            problems += _check_hand(seq, p, pledged.get(p.get("hand_number")))
    if problems:
        return [Finding("deals", False, p) for p in problems[:20]]
    return [Finding("deals", True, f"{hands} hands: commitments and deals recomputed")]


def _check_hand(
    seq: int, p: dict[str, Any], pledge: tuple[int, dict[str, Any]] | None
) -> list[str]:
    number, seed, salt = p.get("hand_number"), p.get("seed"), p.get("salt")
    if not isinstance(seed, str):
        return [f"seq {seq}: hand {number}'s seed is not revealed"]
    out = []
    if commitment(seed, salt) != p.get("seed_commitment"):
        out.append(f"seq {seq}: hand {number}'s commitment is not SHA-256 of its salt and seed")
    contributions = p.get("contributions") or []
    if pledge is not None:
        if (pledge[1].get("seed"), pledge[1].get("salt")) != (seed, salt):
            out.append(f"seq {seq}: hand {number} was not dealt from the seed committed ahead")
    elif contributions:
        out.append(f"seq {seq}: hand {number} took contributions with no seed committed ahead")
    if not p.get("explicit"):
        dealt = [list(hand) for hand in p.get("hands") or []]
        kitty = list(p.get("kitty") or [])
        in_play = sorted([c for hand in dealt for c in hand] + kitty, key=_deck_order)
        deck = shuffled(in_play, mixed_seed(seed, contributions))
        n = len(dealt)
        size = len(dealt[0]) if dealt else 0
        again: list[list[str]] = [[] for _ in range(n)]
        for k in range(n * size):
            again[(p.get("dealer", 0) + 1 + k) % n].append(deck[k])
        same = all(
            sorted(a, key=_deck_order) == sorted(d, key=_deck_order)
            for a, d in zip(again, dealt, strict=True)
        )
        if not same or sorted(deck[n * size :], key=_deck_order) != sorted(kitty, key=_deck_order):
            out.append(f"seq {seq}: hand {number}'s cards are not the deal its seeds give")
    return out


def final_head(document: dict[str, Any], origin: str) -> Head:
    return Head(origin, document["game_id"], document["version"], document["last_hash"])


def check_head(
    document: dict[str, Any], value: str, log_key: Verifier, salt: str | None = None
) -> Finding:
    try:
        head = open_head(value, log_key)
    except NoteError as error:
        return Finding("head", False, f"not a head signed by {log_key.name}: {error}")
    if head.game_id != document.get("game_id"):
        return Finding("head", False, f"the head is of game {head.game_id}, not this export's")
    events = document.get("events") or []
    if head.version > len(events):
        return Finding(
            "head",
            False,
            f"the head names event {head.version}; the export has {len(events)}: cut short",
        )
    if head.blinded and salt is None:
        return Finding("head", False, "a blinded head needs the game's salt (--proof or --salt)")
    if not head.matches(str(events[head.version - 1].get("hash")), salt):
        return Finding(
            "head",
            False,
            f"REWRITTEN: event {head.version} is not the one the server signed when it gave "
            f"this head; the log was changed at or before seq {head.version}",
        )
    return Finding("head", True, f"the export extends the signed head at version {head.version}")


def check_proof(
    document: dict[str, Any],
    proof: dict[str, Any],
    log_key: Verifier,
    witnesses: Sequence[Verifier],
    min_witnesses: int,
) -> list[Finding]:
    try:
        note, checkpoint = open_checkpoint(proof["checkpoint"], log_key)
    except (NoteError, KeyError, TypeError) as error:
        return [Finding("log", False, f"the checkpoint is not signed by {log_key.name}: {error}")]
    findings = []
    cosigners = note.cosigners(w for w in witnesses if w.sig_type == COSIGNATURE)
    if len(cosigners) < min_witnesses:
        findings.append(
            Finding(
                "log",
                False,
                f"the checkpoint has {len(cosigners)} of the {min_witnesses} witness "
                "cosignatures required",
            )
        )
    elif witnesses:
        findings.append(Finding("log", True, f"cosigned by {', '.join(cosigners) or 'nobody'}"))
    leaf = proof.get("head", "")
    expected = final_head(document, checkpoint.origin).text()
    if leaf != expected:
        findings.append(
            Finding(
                "log",
                False,
                "REWRITTEN: the game the log holds (its final head) is not this export's: "
                "the export's events differ from the game as it ended",
            )
        )
        return findings
    try:
        merkle.verify_inclusion(
            merkle.leaf_hash(leaf.encode()),
            int(proof["index"]),
            checkpoint.size,
            hashes_b64(proof["proof"]),
            checkpoint.root,
        )
    except (merkle.ProofError, NoteError, KeyError, TypeError, ValueError) as error:
        findings.append(Finding("log", False, f"the inclusion proof fails: {error}"))
        return findings
    findings.append(
        Finding(
            "log",
            True,
            f"the game is leaf {proof['index']} of the checkpoint of size {checkpoint.size}",
        )
    )
    return findings


def verify(
    document: dict[str, Any],
    log_key: Verifier,
    *,
    heads: Sequence[str] = (),
    proof: dict[str, Any] | None = None,
    witnesses: Sequence[Verifier] = (),
    min_witnesses: int = 0,
    salt: str | None = None,
) -> list[Finding]:
    findings = check_chain(document) + check_deals(document)
    if salt is None and proof is not None:
        salt = proof.get("head_salt")
    findings += [check_head(document, value, log_key, salt) for value in heads]
    if proof is not None:
        findings += check_proof(document, proof, log_key, witnesses, min_witnesses)
    return findings


def value_or_file(value: str) -> str:
    """The text of the file ``value`` names, else ``value`` itself: an option given either way
    (``--head "$(cat head.txt)"`` or ``--head head.txt``). A value is no file name whatever the
    check of it as a path raises (a head is longer than a file name may be: ENAMETOOLONG; a NUL
    is a ValueError), so only a file that exists is read, and one that cannot be read is an
    error, not a value."""
    try:
        is_file = Path(value).is_file()
    except (OSError, ValueError):
        is_file = False
    return Path(value).read_text(encoding="utf-8") if is_file else value


def _heads(values: Sequence[str]) -> list[str]:
    """The heads given, one a line (a file or an inline value may hold several)."""
    out = []
    for value in values:
        out += [line.strip() for line in value_or_file(value).splitlines() if line.strip()]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hearts-verify", description="Check a hearts game export without the server."
    )
    parser.add_argument("export", type=Path, help="the export (GET /api/v1/games/{id}/export)")
    parser.add_argument(
        "--log-key",
        help="the server's log key (vkey), or a file holding it; not for a tournament's export",
    )
    parser.add_argument("--head", action="append", default=[], help="a kept head, or a file")
    parser.add_argument("--proof", type=Path, help="GET /api/v1/log/games/{id}'s answer (JSON)")
    parser.add_argument(
        "--witness", action="append", default=[], help="a witness's vkey, or a file"
    )
    parser.add_argument("--min-witnesses", type=int, default=0)
    parser.add_argument("--salt", help="the game's head salt (else the --proof's head_salt)")
    args = parser.parse_args(argv)
    # A tournament's checks build on this module's: imported here, not at the top.
    from hearts_client.verify_tournament import is_tournament, verify_tournament

    try:
        document = read_json(args.export.read_text(encoding="utf-8"))
        if is_tournament(document):  # docs/tournaments.md: its boards, results and standings
            findings = verify_tournament(document)
            for finding in findings:
                print(finding)
            return 0 if all(f.ok for f in findings) else 1
        if args.log_key is None:
            raise ValueError("--log-key is needed for a game's export")
        proof = read_json(args.proof.read_text(encoding="utf-8")) if args.proof else None
        log_key = Verifier.parse(value_or_file(args.log_key).strip())
        witnesses = [Verifier.parse(value_or_file(w).strip()) for w in args.witness]
        heads = _heads(args.head)
    except (OSError, ValueError) as error:
        print(f"hearts-verify: {error}", file=sys.stderr)
        return 2
    findings = verify(
        document,
        log_key,
        heads=heads,
        proof=proof,
        witnesses=witnesses,
        min_witnesses=args.min_witnesses,
        salt=args.salt,
    )
    for finding in findings:
        print(finding)
    return 0 if all(f.ok for f in findings) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
