"""``hearts archive status|run|backfill|prune-tiles|backup|restore``: ended games and the archive
(service/app/archiver.py; backup and restore: service/store/archive_copy.py)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from service.cli.connection import open_store

OK = 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("archive", help="ended games in the archive: status, or move them")
    sub = p.add_subparsers(dest="archive_command", required=True)
    s = sub.add_parser(
        "status", help="games hot and archived, archived bytes, the oldest ended game's wait (JSON)"
    )
    s.set_defaults(func=run_status)
    r = sub.add_parser(
        "run",
        help="move the ended games that are ready to the archive (in the partitions that no "
        "running archiver holds)",
    )
    r.add_argument(
        "--once", action="store_true", help="one pass, then exit (the only mode: required)"
    )
    r.add_argument(
        "--after",
        type=float,
        help="seconds an ended game stays hot (default: HEARTS_ARCHIVE_AFTER)",
    )
    r.set_defaults(func=run_once)
    b = sub.add_parser(
        "backfill",
        help="find the games that ended before the archiver kept its index (reads every log)",
    )
    b.set_defaults(func=run_backfill)
    t = sub.add_parser(
        "prune-tiles",
        help="after a restore: list (or with --yes delete) the public log's tiles in the archive "
        "that reach past the restored log (docs/operations.md, backup and restore)",
    )
    t.add_argument("--yes", action="store_true", help="delete them (default: only list them)")
    t.set_defaults(func=run_prune_tiles)
    c = sub.add_parser(
        "backup",
        help="copy the archive's objects that DIR lacks into DIR (a directory or an S3 store "
        "alike; after the Redis copy: docs/operations.md, backup and restore)",
    )
    c.add_argument("directory", help="the backup's directory (made if missing)")
    c.set_defaults(func=run_backup)
    rs = sub.add_parser(
        "restore",
        help="put a backup's objects (DIR) into the archive of HEARTS_ARCHIVE_URL",
    )
    rs.add_argument("directory", help="a directory `hearts archive backup` made")
    rs.set_defaults(func=run_restore)


def _blob_store() -> Any:
    """The archive store of HEARTS_ARCHIVE_URL (else the data directory's): no Redis needed."""
    from service.settings import Settings, archive_url
    from service.store.blobs import blob_store_from_url

    return blob_store_from_url(archive_url(Settings.from_env()))


def run_backup(args: argparse.Namespace) -> int:
    from service.store.archive_copy import backup
    from service.store.blobs import BlobStoreError

    store = _blob_store()
    try:
        done = backup(store, args.directory)
    except BlobStoreError as error:  # run it again: what was copied is whole and kept
        print(f"hearts archive backup: the archive store failed: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"archive": store.url, **done.to_dict()}))
    return OK


def run_restore(args: argparse.Namespace) -> int:
    from service.store.archive_copy import restore
    from service.store.blobs import BlobStoreError

    store = _blob_store()
    try:
        done = restore(args.directory, store)
    except (BlobStoreError, FileNotFoundError) as error:
        print(f"hearts archive restore: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"archive": store.url, **done.to_dict()}))
    if done.conflicts:
        print(
            f"hearts archive restore: {len(done.conflicts)} object(s) in the archive hold other "
            "bytes than the backup's (not replaced): restore into an empty archive",
            file=sys.stderr,
        )
        return 1
    return OK


def run_backfill(args: argparse.Namespace) -> int:
    from service.app.archiver import Archiver

    with open_store() as store:
        archiver = Archiver(store, store.archive, after_seconds=0)
        found = archiver.backfill()
        over = archiver.tournaments.backfill()  # tournaments over before their index
    print(json.dumps({"ended": found, "tournaments_over": over}))
    return OK


def run_prune_tiles(args: argparse.Namespace) -> int:
    from service.store.game_tree import GameTree

    with open_store() as store:
        tree = GameTree(store.redis, store.prefix, store.archive.blobs)
        if args.yes:
            print(json.dumps({"size": tree.size(), "deleted": tree.forget_tiles_past_tree()}))
        else:
            print(json.dumps({"size": tree.size(), "past": tree.tiles_past_tree()}))
    return OK


def run_status(args: argparse.Namespace) -> int:
    with open_store() as store:
        from service.app.archiver import Archiver
        from service.settings import Settings

        archiver = Archiver(store, store.archive, after_seconds=Settings.from_env().archive_after)
        print(json.dumps({"archive": store.archive.blobs.url, **archiver.status()}, indent=1))
    return OK


def run_once(
    args: argparse.Namespace,
    on_step: Callable[[str, str], None] | None = None,
    lease_ms: int | None = None,
) -> int:
    """One pass over the partitions no running archiver holds (its leases given back at its
    end); ``on_step``: see ``Archiver`` (the crash tests kill the process from there, with a
    short ``lease_ms`` so that the next pass need not wait long for the dead one's leases)."""
    if not args.once:
        print(
            "hearts archive run: only --once is supported (hearts serve archives continuously)",
            file=sys.stderr,
        )
        return 2
    from service.app.archiver import Archiver
    from service.settings import Settings
    from service.store.blobs import BlobStoreError

    settings = Settings.from_env()
    with open_store() as store:
        archiver = Archiver(
            store,
            store.archive,
            after_seconds=settings.archive_after if args.after is None else args.after,
            on_step=on_step,
            **({} if lease_ms is None else {"lease_ms": lease_ms}),
        )
        try:
            done = archiver.run_once()
        except BlobStoreError as error:  # its leases given back; the games stay in Redis
            print(f"hearts archive run: the archive store failed: {error}", file=sys.stderr)
            return 1
        members = store.redis.zcard(f"{store.prefix}:archivers")
    if not done.partitions:
        # Every partition's lease is held by a running archiver (or one that stopped without
        # giving it back: it lapses within its lease, 30 s): nothing was covered.
        print(
            f"hearts archive run: covered no partition: all {store.partitions} are held by "
            f"running archivers ({members} announced in {store.prefix}:archivers; they move "
            "the games themselves). Stop them first (a stopped one's leases are given back, "
            "or lapse within 30 s) and run it again",
            file=sys.stderr,
        )
    print(
        json.dumps(
            {
                "archived": len(done.archived),
                "bytes": done.bytes,
                "waiting": len(done.waiting),
                "failed": done.failed,
                "partitions": done.partitions,
            }
        )
    )
    return 1 if done.failed or not done.partitions else OK
