"""Audit reports kept: the audit of a game that cannot change any more, computed once.

An audit re-decides every event of a game's log: seconds of CPU for a long game (issue 42: one
of a 4,884-event game took 15 s, and nothing stopped a client asking again and again). A game
that is over never changes, so its report is kept, named by the game and the hash its log ends
with (the chain's head: the whole log it audited), in the blob store of the archive
(service/store/archive.py), where the game's own object goes when it leaves Redis::

    audits/p<N>/<stem>/<head>.json    the report (JSON), written once

``<stem>`` is the game's, as in its archived object's name. No Redis byte: a report lives where
the archive does and is kept as long (a few kilobytes a game, beside its object). A log that
ends elsewhere (restored, rewritten) names another object, so a report is never served for a log
it did not audit; reports with faults are not kept (a damaged log is audited afresh each time).

A kept report answers for an archived game only after its stored object is read again and its
chain recomputed to the same head (``GameArchive.check``): the report stands for that log, and
an object altered since (issue 42) fails the check and is audited again, where the damage shows.
A game still in Redis is its stream, whose last hash the name already holds.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from service.store.blobs import BlobStoreError
from service.store.errors import CorruptStore
from service.store.event_store import RedisEventStore

log = logging.getLogger(__name__)

# Part of the name: a report of another form (a later audit with more checks) is another object.
FORM = "v1"


class KeptAudits:
    """The kept audit reports of ``store``'s games (none if it has no archive)."""

    def __init__(self, store: RedisEventStore) -> None:
        self.store = store

    def name(self, game_id: str, head: str) -> str | None:
        archive = self.store.archive
        if archive is None or not head.isalnum():
            return None
        stem = archive.blob_name(game_id).removeprefix("games/").removesuffix(".zst")
        return f"audits/{stem}/{FORM}-{head}.json"

    def get(self, game_id: str, head: str) -> dict[str, Any] | None:
        name = self.name(game_id, head)
        if name is None:
            return None
        try:
            data = self.store.archive.blobs.get(name)
            report = json.loads(data) if data is not None else None
        except (BlobStoreError, ValueError) as error:  # unreadable: computed again
            log.warning("kept audit %s unreadable: %s", name, error)
            return None
        ok = isinstance(report, dict) and report.get("ok") is True
        if not ok or report.get("game_id") != game_id:
            return None
        return report if self._stored_log_ends_at(game_id, head) else None

    def _stored_log_ends_at(self, game_id: str, head: str) -> bool:
        """Whether the game's stored log is still the one ``head`` names. An archived game's
        object is read from the store again (not the copy decoded in memory) and its chain
        recomputed: cheap beside an audit, and what makes a report valid only for the log it
        audited."""
        archive = self.store.archive
        try:
            record = archive.record_of(game_id)
            if record is None:
                return True  # in Redis only: the head came from its stream
            archive.forget_decoded(game_id)
            return record.head == head and archive.load(game_id, record) is not None
        except (CorruptStore, BlobStoreError) as error:  # the audit says what is wrong
            log.warning("kept audit of %s not used: %s", game_id, error)
            return False

    def put(self, game_id: str, head: str, report: dict[str, Any]) -> None:
        name = self.name(game_id, head)
        if name is None or report.get("ok") is not True:
            return
        data = json.dumps(report, sort_keys=True, separators=(",", ":")).encode()
        try:
            self.store.archive.blobs.put(name, data)
        except Exception as error:  # noqa: BLE001 - kept or not, the answer is the same
            log.warning("audit of %s not kept: %s", game_id, error)
