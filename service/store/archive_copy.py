"""A copy of the archive store in a local directory, and back (``hearts archive backup`` and
``restore``): the backup of docs/operations.md with nothing but the service's own store client,
for a directory or any S3-compatible store alike (no ``aws`` CLI, no rclone).

Objects are written once (service/store/blobs.py), so a later backup into the same directory
copies only the objects it lacks; the public log's ``checkpoint``, the one object replaced, is
copied every time. Files are written to a temporary name, fsynced and renamed into place, so a
backup killed halfway leaves whole files only (and is finished by running it again).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from service.store.blobs import BlobConflict, BlobStore, check_name

REPLACED = frozenset({"checkpoint"})  # the objects the service replaces (the rest: write-once)


@dataclass(frozen=True)
class Copied:
    copied: int
    skipped: int  # already there (write-once objects with the same size)
    bytes: int
    conflicts: tuple[str, ...] = ()  # restore: names the store holds with other bytes

    def to_dict(self) -> dict[str, object]:
        return {
            "copied": self.copied,
            "skipped": self.skipped,
            "bytes": self.bytes,
            "conflicts": list(self.conflicts),
        }


def backup(store: BlobStore, directory: str | os.PathLike[str]) -> Copied:
    """Copy every object of ``store`` that ``directory`` lacks into it (``checkpoint`` always)."""
    root = Path(directory)
    copied = skipped = total = 0
    for name in sorted(store.names("")):
        path = root.joinpath(*check_name(name).split("/"))
        if name not in REPLACED and path.is_file():
            skipped += 1
            continue
        data = store.get(name)
        if data is None:  # a partial tile deleted since the listing: nothing to keep
            continue
        _write(path, data)
        copied += 1
        total += len(data)
    return Copied(copied, skipped, total)


def restore(directory: str | os.PathLike[str], store: BlobStore) -> Copied:
    """Put every file under ``directory`` (a backup) into ``store``: write-once objects with
    ``put`` (the same bytes again are a no-op; other bytes are a conflict, listed, never
    replaced), ``checkpoint`` with ``replace``."""
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"no backup directory {root}")
    copied = skipped = total = 0
    conflicts: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.name.startswith(".tmp-"):
            continue  # a write in flight when the copy was made
        name = path.relative_to(root).as_posix()
        data = path.read_bytes()
        if name in REPLACED:
            store.replace(name, data)
        else:
            if store.size(name) == len(data) and store.get(name) == data:
                skipped += 1
                continue
            try:
                store.put(name, data)
            except BlobConflict:
                conflicts.append(name)
                continue
        copied += 1
        total += len(data)
    return Copied(copied, skipped, total, tuple(conflicts))


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
