"""Where the event store keeps a game in Redis: its partition and the keys of the layout.

Partitions
----------
A game belongs to partition ``crc32(utf8(game_id)) % partitions`` (zlib's CRC-32,
unsigned). The partition count is part of the data layout: every key below
embeds it, so ``partitions`` must not change for existing data (doing so would
strand games and idempotency records in partitions nobody reads), except by
``hearts partitions change`` (service/store/partitions_change.py): offline, to a multiple.

Key layout (``<N>`` is the partition number, ``{p<N>}`` is a Redis Cluster hash
tag, so every key an append touches lives in the same cluster slot)::

    <prefix>:{p<N>}:game:<game_id>  stream, one entry per event, entry id "<seq>-0",
                                    fields: hash (the event's hash), event (envelope JSON),
                                    log (its partition-log entry id; absent in games
                                    written before the archive existed)
    <prefix>:{p<N>}:log             stream, every event of the partition's games in
                                    commit order, auto ids,
                                    fields: game_id, seq, event (envelope JSON)
    <prefix>:{p<N>}:games           sorted set of game ids, score = creation time in
                                    microseconds since the Unix epoch (the time of the
                                    append that created the game)
    <prefix>:{p<N>}:waiting         sorted set of the ids of games waiting for players,
                                    score = creation time (as in games): kept by the
                                    appends that open and close the wait (``waiting``),
                                    so expiring old ones reads no other game
    <prefix>:{p<N>}:deadlines       sorted set of the ids of games whose turn clock runs,
                                    score = the first deadline in microseconds since the
                                    epoch: kept by every append (``deadline``), so the
                                    timekeeper reads only the games that are due
    <prefix>:{p<N>}:silent          sorted set of the ids of games in play without a turn
                                    clock, score = their last append's time (us): kept by
                                    every append (``silent``), so the abandonment sweep
                                    (service/app/abandonment.py) reads only games long silent
    <prefix>:{p<N>}:archived        hash, game id -> JSON record of an archived game,
    <prefix>:{p<N>}:ended           sorted set of ended games not archived yet,
    <prefix>:{p<N>}:archived-entries count of log entries moved to the archive
                                    (the three kept by service/store/archive.py)
    <prefix>:{p<N>}:idem:<scope>    string "<fingerprint>\\n<response>" with a TTL:
                                    an idempotency record, in the partition of the
                                    game whose append wrote it
    <prefix>:{p<N>}:fence           a number written before a WAIT (service/store/append.py)
    <prefix>:{p<N>}:private         hash, game id -> its join code's hash: the private tables
                                    (service/store/invitations.py)
    <prefix>:{p<N>}:tournament:<id> stream, one entry per tournament event, entry id
                                    "<seq>-0", fields: event (JSON), at (the append's time);
                                    the partition is the tournament id's, as for a game
                                    (service/store/tournaments.py, docs/tournaments.md)
    <prefix>:tournaments            sorted set of tournament ids, score = creation time (us)
    <prefix>:tournament-games       hash, a table game's id -> JSON {tournament, round, table}
    <prefix>:tournaments-running    set of the ids of running tournaments (the sweep's)
    (a tournament's games set, its index over and its archive records:
    service/store/tournament_archive.py)

Redis Cluster: every key an append, a read or a log read names carries one ``{p<N>}`` tag, so
each command stays in one slot; only listing games (a pipeline of one ZRANGEBYSCORE per
partition) spans slots, and the client sends each node its own.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def check_game_id(game_id: str) -> None:
    if not isinstance(game_id, str) or not game_id:
        raise ValueError("game_id must be a non-empty string")


def check_count(name: str, value: Any, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}")


def utc_now_iso() -> str:
    """The current UTC time as ISO-8601 with microseconds and a ``Z`` suffix."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def time_score(time: str) -> int:
    """Microseconds since the Unix epoch of an ISO-8601 UTC time string: the score of the
    indexes (games, waiting, deadlines, silent)."""
    if not isinstance(time, str):
        raise ValueError("time must be an ISO-8601 UTC string")
    try:
        parsed = datetime.fromisoformat(time)
    except ValueError as exc:
        raise ValueError(f"time {time!r} is not ISO-8601") from exc
    if parsed.utcoffset() != timedelta(0):
        raise ValueError(f"time {time!r} is not UTC (needs a Z or +00:00 offset)")
    return (parsed - _EPOCH) // timedelta(microseconds=1)


@dataclass(frozen=True)
class KeyLayout:
    """The keys of one deployment (``prefix``) split in ``partitions``: see the module
    docstring."""

    prefix: str
    partitions: int

    def __post_init__(self) -> None:
        prefix = self.prefix
        if not isinstance(prefix, str) or not prefix or "{" in prefix or "}" in prefix:
            raise ValueError("prefix must be a non-empty string without braces")
        check_count("partitions", self.partitions, 1)

    def partition_of(self, game_id: str) -> int:
        check_game_id(game_id)
        return zlib.crc32(game_id.encode("utf-8")) % self.partitions

    def partition_prefix(self, partition: int) -> str:
        if not isinstance(partition, int) or not 0 <= partition < self.partitions:
            raise ValueError(f"partition must be in 0..{self.partitions - 1}")
        return f"{self.prefix}:{{p{partition}}}"

    def game_key(self, game_id: str) -> str:
        return f"{self.partition_prefix(self.partition_of(game_id))}:game:{game_id}"

    def log_key(self, partition: int) -> str:
        return f"{self.partition_prefix(partition)}:log"

    def games_key(self, partition: int) -> str:
        return f"{self.partition_prefix(partition)}:games"

    def waiting_key(self, partition: int) -> str:
        return f"{self.partition_prefix(partition)}:waiting"

    def deadlines_key(self, partition: int) -> str:
        return f"{self.partition_prefix(partition)}:deadlines"

    def silent_key(self, partition: int) -> str:
        return f"{self.partition_prefix(partition)}:silent"

    def archived_key(self, partition: int) -> str:
        return f"{self.partition_prefix(partition)}:archived"

    def idem_key(self, game_id: str, scope: str) -> str:
        return f"{self.partition_prefix(self.partition_of(game_id))}:idem:{scope}"

    def fence_key(self, game_id: str) -> str:
        return f"{self.partition_prefix(self.partition_of(game_id))}:fence"

    def tournament_key(self, tournament_id: str) -> str:
        partition = self.partition_prefix(self.partition_of(tournament_id))
        return f"{partition}:tournament:{tournament_id}"

    def tournaments_key(self) -> str:
        return f"{self.prefix}:tournaments"

    def tournaments_running_key(self) -> str:
        return f"{self.prefix}:tournaments-running"

    def tournament_games_key(self) -> str:
        return f"{self.prefix}:tournament-games"

    def partition_log_keys(self) -> list[str]:
        return [self.log_key(p) for p in range(self.partitions)]
