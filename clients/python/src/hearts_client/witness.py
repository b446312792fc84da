"""A witness of the public log of games (c2sp.org/tlog-cosignature), as ``hearts witness`` runs.

One round: fetch the log's checkpoint, check its signature with the log's key, check that it
extends the last checkpoint this witness cosigned (a consistency proof, RFC 9162; the same size
must have the same root), cosign it, remember it, and post the cosignature back. A witness never
cosigns two trees that are not one the extension of the other: a log that shows different
histories to different people (a fork) cannot get both cosigned by the same witness.

The state (the log's key, the size and root last cosigned) is a small JSON file, written
atomically. The transport is two callables, so the same logic runs over HTTP or a test client.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_client import merkle
from hearts_client.note import Checkpoint, NoteError, Signer, Verifier, hashes_b64, open_checkpoint

CHECKPOINT_PATH = "/api/v1/log/checkpoint"
CONSISTENCY_PATH = "/api/v1/log/consistency"

Get = Callable[[str], str]  # a path -> the body (raises on an error status)
Post = Callable[[str, dict[str, Any]], Any]  # a path and a JSON body -> the JSON answer


class WitnessRefused(Exception):
    """The checkpoint is not one this witness may cosign (bad signature, rollback, fork)."""


@dataclass(frozen=True)
class Seen:
    size: int
    root: bytes


def load_state(path: Path) -> tuple[str | None, Seen | None]:
    if not path.exists():
        return None, None
    data = json.loads(path.read_text(encoding="utf-8"))
    seen = Seen(int(data["size"]), base64.b64decode(data["root"])) if "size" in data else None
    return data.get("log_key"), seen


def save_state(path: Path, log_key: str, seen: Seen) -> None:
    data = {"log_key": log_key, "size": seen.size, "root": base64.b64encode(seen.root).decode()}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".witness-")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


def check_extends(get: Get, seen: Seen | None, new: Checkpoint) -> None:
    """WitnessRefused unless ``new`` extends ``seen`` (the last checkpoint cosigned)."""
    if seen is None:
        return
    if new.size < seen.size:
        raise WitnessRefused(f"the log went back from size {seen.size} to {new.size}")
    if new.size == seen.size:
        if new.root != seen.root:
            raise WitnessRefused(f"a fork: another tree of size {new.size} than the one cosigned")
        return
    answer = json.loads(get(f"{CONSISTENCY_PATH}?old={seen.size}&new={new.size}"))
    try:
        proof = hashes_b64(answer["proof"])
        merkle.verify_consistency(seen.size, new.size, seen.root, new.root, proof)
    except (NoteError, merkle.ProofError, KeyError, TypeError) as error:
        raise WitnessRefused(
            f"size {new.size} does not extend the cosigned size {seen.size}: {error}"
        ) from None


def witness_once(
    get: Get,
    post: Post,
    state: Path,
    signer: Signer,
    log_key: Verifier,
    *,
    now: Callable[[], float] = time.time,
) -> Checkpoint:
    """One round (see the module docstring); the checkpoint cosigned, or WitnessRefused."""
    pinned, seen = load_state(state)
    if pinned is not None and pinned != log_key.vkey():
        raise WitnessRefused(f"this witness follows the log key {pinned}, not {log_key.vkey()}")
    served = get(CHECKPOINT_PATH)
    try:
        note, checkpoint = open_checkpoint(served, log_key)
    except NoteError as error:
        raise WitnessRefused(f"not a checkpoint of {log_key.name}: {error}") from None
    check_extends(get, seen, checkpoint)
    line = signer.cosign(note.text, int(now()))
    save_state(state, log_key.vkey(), Seen(checkpoint.size, checkpoint.root))
    post(CHECKPOINT_PATH, {"checkpoint": note.with_line(line).serialize()})
    return checkpoint
