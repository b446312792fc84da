"""Errors raised by the event store."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the event store's errors."""


class ConcurrencyConflict(StoreError):
    """The game's version was not the expected one; nothing was written."""

    def __init__(self, expected: int, actual: int, game_id: str | None = None) -> None:
        where = f"game {game_id!r}: " if game_id is not None else ""
        super().__init__(f"{where}expected version {expected}, actual version {actual}")
        self.expected = expected
        self.actual = actual
        self.game_id = game_id


class IdempotencyKeyReused(StoreError):
    """An idempotency record exists for the scope with another request fingerprint.

    Nothing was written. The HTTP layer maps this to 422.
    """

    def __init__(self, scope: str) -> None:
        super().__init__(f"idempotency key {scope!r} was used for a different request")
        self.scope = scope


class ChainMismatch(StoreError):
    """The version matched but the last event's hash was not the expected prev hash.

    Only possible if the caller passed a wrong ``prev_hash`` or the stream was
    rewritten by hand. Nothing was written.
    """

    def __init__(self, game_id: str, version: int, expected_hash: str, actual_hash: str) -> None:
        super().__init__(
            f"game {game_id!r} at version {version}: last hash is {actual_hash}, "
            f"expected {expected_hash}"
        )
        self.game_id = game_id
        self.version = version
        self.expected_hash = expected_hash
        self.actual_hash = actual_hash


class CorruptStore(StoreError):
    """Data in Redis does not have the shape the store writes. Nothing was written."""


class WritesRefused(StoreError):
    """Redis refused to write: out of memory under ``maxmemory`` with ``noeviction`` (OOM), a
    replica (READONLY), or a failed RDB save with ``stop-writes-on-bgsave-error`` (MISCONF).

    Nothing was written: the append script's first write is the one refused, and Redis refuses a
    script only before its first write, so the events, the partition log entries and the
    idempotency receipt are all absent. Retrying later may succeed.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"redis refuses writes ({reason}): {detail}")
        self.reason = reason  # "oom", "readonly" or "misconf"


class NotReplicated(StoreError):
    """The append was written on the master, but fewer replicas than asked acknowledged it in
    time (WAIT): it is recorded, yet a failover now could lose it. Retrying the request with the
    same Idempotency-Key tells whether it survived."""

    def __init__(self, game_id: str, version: int, wanted: int, acknowledged: int) -> None:
        super().__init__(
            f"game {game_id!r} version {version}: {acknowledged} of {wanted} replicas "
            "acknowledged the append in time"
        )
        self.game_id = game_id
        self.version = version
        self.wanted = wanted
        self.acknowledged = acknowledged
