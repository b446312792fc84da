"""Immutable named objects outside Redis: where archived games and the public log's tiles live.

One narrow interface (:class:`BlobStore`), chosen by one URL setting (``HEARTS_ARCHIVE_URL``):

- ``file:///path`` (and a bare path): the embedded default, files under a directory (the data
  directory's ``archive/`` when no URL is given). Each object is written to a temporary file in
  the same directory, fsynced, renamed into place and the directory fsynced, so a reader sees
  an object whole or not at all, and a crash never leaves half of one under its name.
- ``s3://bucket/prefix?endpoint=http://host:port``: an S3-compatible object store
  (``S3BlobStore``, added beside this one).

Objects are written once: ``put`` of a name that exists with other bytes raises
:class:`BlobConflict` (the same bytes again is a no-op, so a crashed writer can simply redo its
step). Two exceptions, both the public log's (service/store/game_tree.py): its signed
checkpoint is the one object replaced (``replace``) as the log grows, and its partial tiles are
deleted (``delete``) once their full tile is stored (c2sp.org/tlog-tiles allows it). Names are
``/``-separated paths of ``[A-Za-z0-9._-]`` segments (never ``..``).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlparse

_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class BlobConflict(Exception):
    """An object was written again with other bytes: objects are immutable."""


class BlobStoreError(Exception):
    """The blob store could not be reached or refused an operation."""


def check_name(name: str) -> str:
    """``name`` if it is a valid object name, else ValueError (no traversal, no odd bytes)."""
    parts = name.split("/")
    if not name or len(name) > 512 or not all(_SEGMENT.fullmatch(p) for p in parts):
        raise ValueError(f"invalid object name: {name[:80]!r}")
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"invalid object name: {name[:80]!r}")
    return name


class BlobStore(Protocol):
    """Write-once named objects."""

    url: str

    def put(self, name: str, data: bytes) -> None:
        """Store ``data`` under ``name`` durably; BlobConflict if it holds other bytes."""

    def get(self, name: str) -> bytes | None:
        """The object's bytes, or None if there is none."""

    def exists(self, name: str) -> bool: ...

    def names(self, prefix: str = "") -> Iterator[str]:
        """Every object name starting with ``prefix``, in no particular order."""

    def size(self, name: str) -> int | None:
        """The object's size in bytes, or None if there is none."""

    def replace(self, name: str, data: bytes) -> None:
        """Store ``data`` under ``name`` durably, whatever it held (a reader sees the old
        object or the new one whole): only the public log's checkpoint."""

    def delete(self, name: str) -> None:
        """Remove the object, if there is one: only the public log's obsolete partial tiles
        (and, by an operator after a restore, its tiles past the restored log)."""


class DiskBlobStore:
    """Objects as files under ``root`` (the embedded default)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.url = self.root.resolve().as_uri()

    def _path(self, name: str) -> Path:
        return self.root.joinpath(*check_name(name).split("/"))

    def put(self, name: str, data: bytes) -> None:
        path = self._path(name)
        existing = self._read(path)
        if existing is not None:
            if existing != data:
                raise BlobConflict(name)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            # link(2), not rename(2): it fails if the name exists, so two writers racing on one
            # name cannot replace each other's object (the loser compares bytes instead).
            try:
                os.link(tmp, path)
            except FileExistsError:
                if self._read(path) != data:
                    raise BlobConflict(name) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        _fsync_dir(path.parent)

    def replace(self, name: str, data: bytes) -> None:
        path = self._path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)  # atomic: the old object or the new one, never half
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        _fsync_dir(path.parent)

    def delete(self, name: str) -> None:
        path = self._path(name)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            path.unlink()
            _fsync_dir(path.parent)

    @staticmethod
    def _read(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            # Not an object: nothing there, or a name under an object's name ("a/b" when "a"
            # is one), or a prefix of other objects' names (a directory here, nothing on S3).
            return None

    def get(self, name: str) -> bytes | None:
        return self._read(self._path(name))

    def exists(self, name: str) -> bool:
        return self._path(name).is_file()

    def size(self, name: str) -> int | None:
        path = self._path(name)
        try:
            return path.stat().st_size if path.is_file() else None
        except (FileNotFoundError, NotADirectoryError):
            return None

    def names(self, prefix: str = "") -> Iterator[str]:
        if not self.root.is_dir():
            return
        for dirpath, _dirs, files in os.walk(self.root):
            for file in files:
                if file.startswith(".tmp-"):
                    continue
                rel = Path(dirpath, file).relative_to(self.root).as_posix()
                if rel.startswith(prefix):
                    yield rel


class MemoryBlobStore:
    """Objects in this process's memory: for an app whose data lives only as long as the
    process (``hearts serve --ephemeral``, an app handed its Redis in a test)."""

    def __init__(self) -> None:
        self.url = "memory:"
        self._objects: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def put(self, name: str, data: bytes) -> None:
        check_name(name)
        with self._lock:
            existing = self._objects.setdefault(name, bytes(data))
        if existing != data:
            raise BlobConflict(name)

    def get(self, name: str) -> bytes | None:
        return self._objects.get(check_name(name))

    def replace(self, name: str, data: bytes) -> None:
        with self._lock:
            self._objects[check_name(name)] = bytes(data)

    def delete(self, name: str) -> None:
        with self._lock:
            self._objects.pop(check_name(name), None)

    def exists(self, name: str) -> bool:
        return check_name(name) in self._objects

    def size(self, name: str) -> int | None:
        found = self.get(name)
        return None if found is None else len(found)

    def names(self, prefix: str = "") -> Iterator[str]:
        return iter([name for name in list(self._objects) if name.startswith(prefix)])


def _fsync_dir(directory: Path) -> None:
    # The rename (link) is durable only once the directory's entry is on disk (POSIX).
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def blob_store_from_url(url: str) -> BlobStore:
    """The blob store a ``HEARTS_ARCHIVE_URL`` names (``file://`` or a path, ``s3://``),
    guarded: every call timed and counted, a failure ``StoreUnavailable``, a dead store's
    calls cut short by a circuit (service/store/blob_guard.py)."""
    from service.store.blob_guard import GuardedBlobStore  # it imports this module

    parsed = urlparse(url)
    if parsed.scheme in ("", "file"):
        return GuardedBlobStore(DiskBlobStore(unquote(parsed.path) if parsed.scheme else url))
    if parsed.scheme == "s3":
        from service.store.s3_blobs import S3BlobStore  # only deployments that use it pay

        return GuardedBlobStore(S3BlobStore.from_url(url))
    raise ValueError(f"unknown archive URL scheme {parsed.scheme!r}: use file:// or s3://")
