"""The event store a CLI command works on: REDIS_URL's, or the embedded default's."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

from service.store.event_store import RedisEventStore

UNUSABLE = 2  # exit status: no Redis to use (or no such game, unreadable file)


@contextlib.contextmanager
def open_store(check_layout: bool = True) -> Iterator[RedisEventStore]:
    """The configured event store, or SystemExit(2) if there is no real Redis to use, or if
    its data was written with another partition count than HEARTS_PARTITIONS
    (service/store/layout.py).

    ``check_layout=False`` (only ``hearts partitions change``, which reads the recorded count
    itself) skips that check. Without REDIS_URL it starts the embedded redis-server on the
    default data dir, as `hearts serve` does; without redis-server either there is nothing to
    work on.
    """
    from service.settings import Settings, archive_url
    from service.store import archive, redis_server

    settings = Settings.from_env()
    started = None
    url = settings.redis_url
    if url is None:
        try:
            started = redis_server.start(settings.data_dir)
        except redis_server.NoRedis as exc:
            print(f"hearts: {exc}", file=sys.stderr)
            raise SystemExit(UNUSABLE) from None
        url = started.url
    if url == redis_server.FAKE_URL:
        print("hearts: fakeredis:// holds no games outside its process", file=sys.stderr)
        raise SystemExit(UNUSABLE)
    client = redis_server.client_for(url)
    try:
        store = RedisEventStore(
            client,
            prefix=settings.key_prefix,
            partitions=settings.partitions,
            min_replicas=settings.min_replicas,
            replica_timeout_ms=settings.replica_timeout_ms,
        )
        if check_layout:
            _check_layout(store)
        archive.attach(store, archive_url(settings))  # archived games read as before
        yield store
    finally:
        client.close()
        if started is not None:
            started.stop()


def _check_layout(store: RedisEventStore) -> None:
    """SystemExit(2) with the message if the store's partition count is not its data's. A
    Redis that cannot be reached yet (the projector waits for it) is checked by a thread as
    soon as it answers, which ends the process (SIGTERM) on a mismatch."""
    from service.store.layout import LayoutMismatch, check_layout
    from service.store.outage import unreachable

    try:
        check_layout(store)
    except LayoutMismatch as exc:
        print(f"hearts: {exc}", file=sys.stderr)
        raise SystemExit(UNUSABLE) from None
    except Exception as exc:
        if not unreachable(exc):
            raise
        threading.Thread(target=_check_later, args=(store,), daemon=True).start()


def _check_later(store: RedisEventStore) -> None:
    from service.store.layout import LayoutMismatch, check_layout
    from service.store.outage import unreachable

    delay = 0.5
    while True:
        time.sleep(delay)
        try:
            check_layout(store)
            return
        except LayoutMismatch as exc:
            print(f"hearts: {exc}", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGTERM)  # a long-running command stops as on SIGTERM
            return
        except Exception as exc:
            if not unreachable(exc):
                print(f"hearts: partition layout not checked: {exc}", file=sys.stderr)
                return
        delay = min(delay * 2, 30.0)
