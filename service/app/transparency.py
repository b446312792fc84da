"""Audits that do not trust the server: signed game heads and the public log of games.

- **Heads.** Every answer about a game carries the head it reflects (the game's version and the
  chain hash of that event) signed by the service's Ed25519 key, as a C2SP signed note
  (:mod:`hearts_client.note`). A player keeps the latest; :meth:`TransparencyLog.verify_head`
  (``POST /games/{id}/verify``) says whether the game's log still extends it.
- **The public log.** Each finished game's final head is one leaf of an append-only Merkle tree
  (:mod:`service.store.game_tree`), appended once by the projector that applies its
  ``GameEnded``. Checkpoints (c2sp.org/tlog-checkpoint) are signed on request for the current
  size (Ed25519 is deterministic: the same size gives the same note); witnesses cosign them
  (``hearts witness``) and post the cosignature back; inclusion and consistency proofs are made
  by :mod:`hearts_client.merkle`, the module the verifier checks them with. The tree is kept as
  tiles (c2sp.org/tlog-tiles) in the blob store (``HEARTS_ARCHIVE_URL``), cut as checkpoints are
  signed, and served as they are by ``GET /log/tile/...``.

The signing key is a PEM file (``Settings.log_key_file``, else ``log-key.pem`` in the data
directory), made on first start. See docs/verify.md for what each check proves.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)
from hearts_client import tiles
from hearts_client.note import (
    COSIGNATURE,
    Checkpoint,
    Head,
    Note,
    NoteError,
    Signer,
    Verifier,
    b64_hashes,
    blind,
    open_head,
    sign_head,
)

from domain.events import GameEnded
from service.app.errors import (
    BadTreeSize,
    CorruptGame,
    GameNotFound,
    HeadNotExtended,
    InvalidCosignature,
    InvalidHead,
    NotInLog,
    TileNotFound,
)
from service.settings import ConfigError, Settings, archive_url, data_directory
from service.store.blobs import (
    BlobConflict,
    BlobStore,
    BlobStoreError,
    MemoryBlobStore,
    blob_store_from_url,
)
from service.store.envelope import verify_chain
from service.store.errors import NotReplicated
from service.store.event_store import RedisEventStore
from service.store.game_tree import GameTree, Leaf

KEY_FILE = "log-key.pem"
# A checkpoint's request cuts at most this many tiles (a few ms each): a log written before
# tiles, or one whose store was down, is moved out over the next checkpoints.
TILES_PER_CHECKPOINT = 16
CUT_RETRY_SECONDS = 60.0  # after the blob store failed, the next try at cutting tiles
log = logging.getLogger(__name__)
HEAD_HEADER = "Hearts-Head"
HEAD_CACHE = 4096  # signed heads kept per process (TransparencyLog.head): ~2 MB at most


def load_or_create_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 key in ``path`` (PEM, PKCS#8), made there first if there is none.

    Several workers may start at once: the new key is written to a temporary file and linked
    into place (os.link fails if the name exists), so every process ends up with the one key
    that won, never a half-written file.
    """
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        pem = Ed25519PrivateKey.generate().private_bytes(
            Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
        )
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".log-key-")
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, pem)
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
        os.unlink(temporary)
    key = load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} does not hold an Ed25519 private key")
    return key


class Appender:
    """Appends finished games to the public log (the projector does, as it applies each
    ``GameEnded``: at least once per game, and the append is idempotent). It needs the log's
    origin, not its key: a leaf is a head's text, unsigned."""

    def __init__(self, store: RedisEventStore, origin: str) -> None:
        self.store = store
        self.origin = origin
        self.tree = GameTree(store.redis, store.prefix)

    def record_ended(self, game_id: str, seq: int) -> Leaf | None:
        """Append the game that ended at event ``seq``; None if that event is not there."""
        events = self.store.read(game_id, after=seq - 1, limit=1)
        if not events or events[0].seq != seq:
            return None
        head = Head(self.origin, game_id, seq, events[0].hash)
        leaf, _ = self.tree.append(game_id, head.text())
        return leaf

    def backfill(self, batch: int = 1000) -> int:
        """Append every game whose end is in the partition logs (games that ended before the
        public log existed, or while no projector appended); how many were added."""
        before = self.tree.size()
        for partition in range(self.store.partitions):
            after = "0-0"
            while entries := self.store.read_log(partition, after, batch):
                for entry in entries:
                    if entry.type == GameEnded.__name__:  # read without decoding the envelope
                        self.record_ended(entry.game_id, entry.seq)
                after = entries[-1].id
        return self.tree.size() - before


@dataclass(frozen=True, slots=True)
class HeadCheck:
    """A head the game's log extends, and where the game is now."""

    game_id: str
    head_version: int
    version: int
    blinded: str  # the chain hash at ``version``, blinded with the game's salt
    chain_hash: str  # the same, plain: for the answer's own signed head, never shown

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "extends": True,
            "head_version": self.head_version,
            "version": self.version,
            "blinded": self.blinded,
        }


@dataclass(frozen=True, slots=True)
class Chain:
    """What checking a head needs of a game's log, read and its hash chain verified once: its
    length, the hash at the head's version (None beyond the log) and its last hash."""

    length: int
    at_head: str | None
    last: str


def read_chain(store: RedisEventStore, game_id: str, head_version: int) -> Chain:
    """The game's whole log read and its chain verified (GameNotFound, CorruptGame): the long
    part of a head's check, which the API runs as a long-work job (service/api/long_work.py)."""
    events = store.read(game_id)
    if not events:
        raise GameNotFound(game_id)
    problems = verify_chain(events)
    if problems:
        raise CorruptGame(game_id, str(problems[0]))
    at_head = events[head_version - 1].hash if head_version <= len(events) else None
    return Chain(len(events), at_head, events[-1].hash)


class TransparencyLog:
    def __init__(
        self,
        store: RedisEventStore,
        signer: Signer,
        witnesses: Sequence[Verifier] = (),
        *,
        publish_every: float = 0.0,
        blobs: BlobStore | None = None,
    ) -> None:
        self.store = store
        # The checkpoint GET /log/checkpoint serves is published at most once per this many
        # seconds (0: the tree as it is at each request), so every reader and witness sees the
        # same one between two publications.
        self.publish_every = publish_every
        self.signer = signer
        self.witnesses = tuple(w for w in witnesses if w.sig_type == COSIGNATURE)
        # Full tiles go to ``blobs`` as checkpoints are signed (None: the tree stays in Redis).
        self.tree = GameTree(store.redis, store.prefix, blobs)
        self._cut_after = 0.0  # time.monotonic() before which no cut is tried (store failing)
        # Each game's head salt: HMAC of its id under a key derived from the signing key, so
        # every process of the service has the same salts and nothing more to keep.
        raw = signer.key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        self._salt_key = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=None, info=b"hearts head salt v1"
        ).derive(raw)
        self._heads: dict[tuple[str, int, str], str] = {}  # see head
        self._heads_lock = threading.Lock()

    def salt(self, game_id: str) -> str:
        """The game's head salt (secret until the game is over: see hearts_client.note.blind)."""
        return hmac.new(self._salt_key, game_id.encode(), "sha256").hexdigest()

    @property
    def origin(self) -> str:
        return self.signer.name

    @property
    def vkey(self) -> str:
        return self.signer.verifier.vkey()

    # -- heads ----------------------------------------------------------------------------------

    def head(self, game_id: str, version: int, chain_hash: str) -> str:
        """The ``Hearts-Head`` value for the game at ``version`` (base64 of the signed note).

        Kept for the latest ``HEAD_CACHE`` heads asked for: an Ed25519 signature is the same
        for the same note, and the answers about one version come in runs (a command's answer,
        then the next seat's view of the same version; bench/README.md, issue 36)."""
        key = (game_id, version, chain_hash)
        with self._heads_lock:
            found = self._heads.get(key)
        if found is not None:
            return found
        blinded = blind(chain_hash, self.salt(game_id))
        signed = sign_head(self.signer, Head(self.origin, game_id, version, blinded, blinded=True))
        with self._heads_lock:
            self._heads[key] = signed
            if len(self._heads) > HEAD_CACHE:
                del self._heads[next(iter(self._heads))]  # the oldest
        return signed

    def verify_head(
        self, game_id: str, value: str, chain: Callable[[str, int], Chain] | None = None
    ) -> HeadCheck:
        """Whether the game's log, as stored now, extends the signed head ``value``.
        ``chain(game_id, head_version)``: how the log is read (default :func:`read_chain`
        here; the API hands it to a long-work job)."""
        try:
            head = open_head(value, self.signer.verifier)
        except NoteError as error:
            raise InvalidHead(f"not a head this server signed: {error}") from None
        if head.game_id != game_id:
            raise InvalidHead(f"the head is of game {head.game_id!r}, not {game_id!r}")
        if chain is None:
            found_chain = read_chain(self.store, game_id, head.version)
        else:
            found_chain = chain(game_id, head.version)
        length = found_chain.length
        if head.version > length:
            raise HeadNotExtended(
                f"the head names event {head.version}, but the log has {length}: "
                "events were removed",
                seq=head.version,
                expected=head.hash,
                found=None,
            )
        salt = self.salt(game_id)
        found = found_chain.at_head
        assert found is not None  # head.version is within the log (checked above)
        if not head.matches(found, salt):
            raise HeadNotExtended(
                f"event {head.version} has another hash than the head signed: the log was "
                f"rewritten at or before seq {head.version}",
                seq=head.version,
                expected=head.hash,
                found=blind(found, salt) if head.blinded else found,
            )
        last = found_chain.last
        return HeadCheck(game_id, head.version, length, blind(last, salt), last)

    # -- the public log -------------------------------------------------------------------------

    def record_ended(self, game_id: str, seq: int) -> Leaf | None:
        return Appender(self.store, self.origin).record_ended(game_id, seq)

    def _size(self, size: int | None) -> int:
        current = self.tree.size()
        if size is None:
            return current
        if not 0 <= size <= current:
            raise BadTreeSize(f"the log has {current} games; there is no tree of size {size}")
        return size

    def checkpoint(self, size: int | None = None) -> str:
        """The signed checkpoint of the tree at ``size`` (None: the one published now), with
        the cosignatures witnesses posted for it. The published one (no ``size`` asked) is
        mirrored to the blob store too; a size asked for is signed on request only."""
        # Decided before ``size`` is filled in: under a checkpoint interval (hearts serve) the
        # published size comes from published_size(), and that one is still the published one.
        published = size is None
        if published and self.publish_every > 0:
            size = self.tree.published_size(int(self.publish_every * 1000))
        size = self._size(size)
        self._await_replicas(size)
        self._cut_tiles(size)
        text = Checkpoint(self.origin, size, self.tree.root(size)).text()
        note = text + "\n" + self.signer.sign(text) + "".join(self.tree.cosignatures(size))
        if published:
            self._mirror(size, note)
        return note

    def _mirror(self, size: int, note: str) -> None:
        """The published checkpoint and its partial tiles into the blob store too, so that the
        store alone is a complete static mirror of the log (GameTree.mirror); a store that
        fails leaves its copy at an older checkpoint, brought up to date at a later one."""
        if time.monotonic() < self._cut_after:
            return
        try:
            self.tree.mirror(size, note)
        except BlobStoreError as error:
            self._cut_after = time.monotonic() + CUT_RETRY_SECONDS
            log.warning("the public log's checkpoint was not put in the store: %s", error)
        except BlobConflict as conflict:  # the store holds another tree's tile: never silent
            self._cut_after = time.monotonic() + CUT_RETRY_SECONDS
            log.error(
                "the public log's store holds another tile or checkpoint at %s: not mirrored",
                conflict,
            )

    def _cut_tiles(self, size: int) -> None:
        """Move the full tiles of the tree of ``size`` (its replicas hold it: a failover cannot
        reorder its leaves) to the blob store. A store that fails leaves them in Redis, to be
        cut at a later checkpoint: proofs read them there meanwhile."""
        if time.monotonic() < self._cut_after:
            return
        try:
            self.tree.cut_tiles(size, most=TILES_PER_CHECKPOINT)
        except BlobStoreError as error:
            # Not at every checkpoint while the store is down: each try costs its timeouts.
            self._cut_after = time.monotonic() + CUT_RETRY_SECONDS
            log.warning("the public log's tiles were not cut (retried later): %s", error)
        except BlobConflict as conflict:  # a restored log meets the lost future's tiles
            self._cut_after = time.monotonic() + CUT_RETRY_SECONDS
            log.error(
                "the public log's store holds another tile at %s: not cut (after a restore, "
                "`hearts archive prune-tiles`: docs/operations.md)",
                conflict,
            )

    def _await_replicas(self, size: int) -> None:
        """Sign a size only once HEARTS_MIN_REPLICAS replicas hold it (else NotReplicated:
        503), so a failover cannot lose a leaf a witness has cosigned."""
        wanted = self.store.min_replicas
        if wanted:
            held = self.tree.replicas_holding(size, wanted, self.store.replica_timeout_ms)
            if held < wanted:
                raise NotReplicated("(the public log)", size, wanted, held)

    def inclusion(self, game_id: str, size: int | None = None) -> dict[str, Any]:
        leaf = self.tree.leaf(game_id)
        if leaf is None:
            raise NotInLog(f"game {game_id!r} is not in the public log (yet)")
        size = self._size(size)
        if leaf.index >= size:
            raise BadTreeSize(f"game {game_id!r} is leaf {leaf.index}, not in a tree of {size}")
        return {
            "game_id": game_id,
            "index": leaf.index,
            "tree_size": size,
            "head": leaf.head,
            "head_salt": self.salt(game_id),  # the game is over: its heads may be unblinded
            "proof": b64_hashes(self.tree.inclusion(leaf.index, size)),
            "checkpoint": self.checkpoint(size),
        }

    def consistency(self, old: int, new: int | None = None) -> dict[str, Any]:
        new = self._size(new)
        if not 0 <= old <= new:
            raise BadTreeSize(f"a consistency proof goes from a size to a larger one, not {old}")
        proof = b64_hashes(self.tree.consistency(old, new))
        return {"old_size": old, "new_size": new, "proof": proof}

    def add_cosignatures(self, note: str) -> list[str]:
        """Keep the known witnesses' cosignatures on a checkpoint of this log; the names of
        those kept. InvalidCosignature unless at least one is valid."""
        try:
            parsed = Note.parse(note)
            parsed.verify(self.signer.verifier)
            checkpoint = Checkpoint.parse(parsed.text)
        except NoteError as error:
            raise InvalidCosignature(f"not a checkpoint this log signed: {error}") from None
        size = self._size(checkpoint.size)
        if checkpoint.origin != self.origin or self.tree.root(size) != checkpoint.root:
            raise InvalidCosignature("the checkpoint is not this log's tree of its size")
        kept = []
        for witness in self.witnesses:
            for signature in parsed.signatures:
                if (signature.name, signature.id) != (witness.name, witness.id):
                    continue
                try:
                    Note(parsed.text, (signature,)).verify(witness)
                except NoteError:
                    raise InvalidCosignature(
                        f"the cosignature of {witness.name} does not verify"
                    ) from None
                self.tree.add_cosignature(size, witness.name, signature.line())
                kept.append(witness.name)
        if not kept:
            raise InvalidCosignature("no cosignature of a witness this log knows")
        return kept

    def tile(self, path: str) -> tuple[bytes, bool]:
        """A tile or entry bundle of the tree (c2sp.org/tlog-tiles: ``tile/<L>/<N>[.p/<W>]``,
        ``tile/entries/<N>[.p/<W>]``): its bytes, and whether it is within the checkpoint
        published last (then it never changes: a failover cannot reorder what was published).
        TileNotFound for a path that is not a tile's, or a tile the tree does not have yet."""
        try:
            level, index, width = tiles.parse_tile_path(path)
        except tiles.TileError as error:
            raise TileNotFound(str(error)) from None
        size = self.tree.size()
        data = self.tree.tile(level, index, width, size)
        if data is None:
            raise TileNotFound(f"{path}: the log of {size} games has no such tile (yet)")
        published = self.tree.last_published() if self.publish_every > 0 else size
        return data, tiles.tile_exists(level, index, width, published or 0)


DEFAULT_CHECKPOINT_INTERVAL = 10.0  # seconds between two checkpoints published


def build_log(store: RedisEventStore, settings: Settings, *, injected: bool) -> TransparencyLog:
    """The app's log from its settings. The key is ``log_key_file``, else the data directory's
    ``log-key.pem``; an app handed its Redis (tests, ``--ephemeral``) with neither configured
    signs with a key of its own memory, as its games live only as long as that Redis."""
    if settings.log_key_file:
        key = load_or_create_key(Path(settings.log_key_file).expanduser())
    elif injected and not settings.data_dir:
        key = Ed25519PrivateKey.generate()
    else:
        key = load_or_create_key(data_directory(settings.data_dir)[0] / KEY_FILE)
    try:
        signer = Signer(settings.log_origin, key)
        witnesses = [
            Verifier.parse(vkey) for vkey in settings.log_witnesses.split(",") if vkey.strip()
        ]
    except NoteError as error:
        raise ConfigError(f"HEARTS_LOG_ORIGIN / HEARTS_LOG_WITNESSES: {error}") from None
    every = settings.checkpoint_interval
    if every is None:  # hearts serve publishes every 10 s; an app handed its Redis, at once
        every = 0.0 if injected else DEFAULT_CHECKPOINT_INTERVAL
    return TransparencyLog(
        store, signer, witnesses, publish_every=every, blobs=archive(settings, injected=injected)
    )


def archive(settings: Settings, *, injected: bool) -> BlobStore:
    """The blob store of ``HEARTS_ARCHIVE_URL``, else ``archive/`` in the data directory; an
    app handed its Redis with neither configured keeps its objects in memory, as its games
    live only as long as that Redis."""
    if settings.archive_url:
        try:
            return blob_store_from_url(settings.archive_url)
        except (ValueError, ImportError) as error:
            raise ConfigError(f"HEARTS_ARCHIVE_URL: {error}") from None
    if injected and not settings.data_dir:
        return MemoryBlobStore()
    return blob_store_from_url(archive_url(settings))
