"""One finished game as one immutable compressed object: the archive's format.

What is kept is everything the hash chain covers and nothing it can recompute: each event's
``type``, ``schema_version``, ``time``, ``command_id`` and ``payload`` in stored order (``game_id``
once, ``seq`` implied by the order), plus each event's partition-log entry id, so a projection
rebuild can merge archived entries with the live logs in their original order. The per-event
``hash`` and ``prev_hash`` (two 64-hex strings per event, most of a compressed game) are not
stored: decoding recomputes the chain from the genesis hash (:mod:`service.store.envelope`) and
checks it against the final head stored once in the object. So a decoded game is exactly the
:class:`RecordedEvent` list the store returned for it, or :class:`ArchiveCorrupt`.

The document (format 1), before compression, is canonical JSON (members sorted, no spaces)::

    {"format": 1, "game_id": "...", "version": N, "head": "<hash of event N>",
     "types": [[type, schema_version, count], ...],       runs, in order
     "times": [[time, count], ...],                        runs, in order
     "commands": [[command_id, count], ...],               runs, in order
     "payloads": [payload, ...],
     "log": [[ms, seq], ...]}                              ms as a delta from the previous id

An append writes one time and one command id for all its events, so runs make them nearly
free. The document is compressed with zstd (:data:`LEVEL`) with a content checksum, deterministic:
the same game makes the same bytes (a crashed archiver can put its object again: the blob store
takes the same bytes twice and refuses others).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import zstandard

from service.store.envelope import (
    GENESIS_HASH,
    RecordedEvent,
    canonical_body,
    canonical_json,
    chain_hash,
)

FORMAT = 1
# zstd level 15: measured on service games to 100 (docs/operations.md): 8.3 KB in 90 ms, where
# level 19 takes 8.1 KB in 270 ms and level 12 9.6 KB in 46 ms.
LEVEL = 15
# A bound on what decompression may produce (a hostile or damaged object claiming a huge size):
# far above any game the service lets be played.
MAX_DOCUMENT = 512 * 1024 * 1024


class ArchiveCorrupt(ValueError):
    """An archived object that does not decode, or whose chain does not end at its head."""


@dataclass(frozen=True, slots=True)
class ArchivedGame:
    """A decoded archived game: its events as stored and their partition-log entry ids."""

    game_id: str
    events: tuple[RecordedEvent, ...]
    log_ids: tuple[str, ...]

    @property
    def version(self) -> int:
        return len(self.events)

    @property
    def head(self) -> str:
        return self.events[-1].hash if self.events else GENESIS_HASH


def _runs(values: Sequence[Any]) -> list[list[Any]]:
    runs: list[list[Any]] = []
    for value in values:
        if runs and runs[-1][:-1] == list(value):
            runs[-1][-1] += 1
        else:
            runs.append([*value, 1])
    return runs


def _unruns(runs: Any, width: int, total: int, name: str) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if not isinstance(runs, list):
        raise ArchiveCorrupt(f"{name} is not a list")
    for run in runs:
        if not isinstance(run, list) or len(run) != width + 1:
            raise ArchiveCorrupt(f"malformed run in {name}")
        count = run[-1]
        if type(count) is not int or count < 1 or len(out) + count > total:
            raise ArchiveCorrupt(f"bad run length in {name}")
        out += [tuple(run[:-1])] * count
    if len(out) != total:
        raise ArchiveCorrupt(f"{name} covers {len(out)} events, not {total}")
    return out


def _split_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq)


def encode(events: Sequence[RecordedEvent], log_ids: Sequence[str]) -> bytes:
    """The archived object of a game's events (all of them, seq 1 on, as stored) and their
    partition-log entry ids; ValueError if the events are not one unbroken chain."""
    if not events:
        raise ValueError("an archived game has events")
    if len(log_ids) != len(events):
        raise ValueError("one partition-log entry id per event")
    game_id = events[0].game_id
    prev = GENESIS_HASH
    for seq, event in enumerate(events, start=1):
        if event.seq != seq or event.game_id != game_id or event.prev_hash != prev:
            raise ValueError(f"game {game_id!r}: seq {event.seq} does not follow the chain")
        prev = event.hash
    log: list[list[int]] = []
    last_ms = 0
    for entry_id in log_ids:
        ms, sub = _split_id(entry_id)
        log.append([ms - last_ms, sub])
        last_ms = ms
    document = {
        "format": FORMAT,
        "game_id": game_id,
        "version": len(events),
        "head": prev,
        "types": _runs([(e.type, e.schema_version) for e in events]),
        "times": _runs([(e.time,) for e in events]),
        "commands": _runs([(e.command_id,) for e in events]),
        "payloads": [e.payload for e in events],
        "log": log,
    }
    raw = canonical_json(document).encode("utf-8")
    compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True, write_content_size=True)
    return compressor.compress(raw)


def decode(data: bytes, game_id: str | None = None) -> ArchivedGame:
    """The game an archived object holds, its chain recomputed and checked against the stored
    head (and its id against ``game_id`` if given); ArchiveCorrupt if anything is amiss."""
    try:
        raw = zstandard.ZstdDecompressor().decompress(data, max_output_size=MAX_DOCUMENT)
        document = json.loads(raw)
    except (zstandard.ZstdError, ValueError, UnicodeDecodeError) as exc:
        raise ArchiveCorrupt(f"undecodable archived object: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ArchiveCorrupt("not an archived game of a known format")
    stored_id, version = document.get("game_id"), document.get("version")
    head = document.get("head")
    if not isinstance(stored_id, str) or type(version) is not int or version < 1:
        raise ArchiveCorrupt("archived game lacks its id or version")
    if game_id is not None and stored_id != game_id:
        raise ArchiveCorrupt(f"archived object holds game {stored_id!r}, not {game_id!r}")
    payloads, log = document.get("payloads"), document.get("log")
    if not isinstance(payloads, list) or len(payloads) != version:
        raise ArchiveCorrupt("archived payloads do not match the version")
    if not isinstance(log, list) or len(log) != version:
        raise ArchiveCorrupt("archived log ids do not match the version")
    types = _unruns(document.get("types"), 2, version, "types")
    times = _unruns(document.get("times"), 1, version, "times")
    commands = _unruns(document.get("commands"), 1, version, "commands")
    events: list[RecordedEvent] = []
    log_ids: list[str] = []
    prev = GENESIS_HASH
    ms = 0
    for i in range(version):
        (type_, schema), (time,), (command_id,) = types[i], times[i], commands[i]
        payload = payloads[i]
        try:
            body = canonical_body(
                type=type_,
                schema_version=schema,
                game_id=stored_id,
                seq=i + 1,
                time=time,
                command_id=command_id,
                payload=payload,
            )
            delta, sub = log[i]
        except (TypeError, ValueError) as exc:
            raise ArchiveCorrupt(f"seq {i + 1}: {exc}") from None
        if type(delta) is not int or type(sub) is not int or delta < 0 or sub < 0:
            raise ArchiveCorrupt(f"seq {i + 1}: malformed log id")
        ms += delta
        log_ids.append(f"{ms}-{sub}")
        digest = chain_hash(prev, body)
        # The values as the store returns them: the document is canonical JSON too, so each
        # payload reads back as the stored envelope's does (same members, same order).
        events.append(
            RecordedEvent(type_, schema, stored_id, i + 1, time, command_id, payload, prev, digest)
        )
        prev = digest
    if prev != head:
        raise ArchiveCorrupt(f"archived game {stored_id!r}: the chain ends at {prev}, not {head}")
    return ArchivedGame(stored_id, tuple(events), tuple(log_ids))
