"""Upcasting: turning events stored with an old schema version into the current one.

An upcaster for ``(type, from_version)`` takes the payload of a ``type`` event at
``from_version`` and returns the payload at ``from_version + 1``. The store keeps and returns
events as written; the game log (``service.app.game_log``, the one decoder of stored events)
applies the upcasters in a chain until none is registered for the event's version, so old
events reach the code as the current version.

The upcasters of the events we store are all at the end of this module (one
place to read every schema change), registered in the module-level registry with
:func:`register_upcaster` (usable as a decorator). Tests build their own
:class:`UpcasterRegistry` and hand it to the game log instead of registering
made-up upcasters globally.

Upcasters must be pure: they get a deep copy of the payload and must not depend
on anything but it.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable

Upcaster = Callable[[dict], dict]


class UpcasterRegistry:
    """A set of upcasters keyed by ``(event type, from_version)``."""

    def __init__(self) -> None:
        self._upcasters: dict[tuple[str, int], Upcaster] = {}
        self._lock = threading.Lock()

    def register(self, type: str, from_version: int, fn: Upcaster | None = None):
        """Register ``fn`` as the upcaster of ``type`` from ``from_version``.

        Without ``fn``, returns a decorator. Registering the same
        ``(type, from_version)`` twice is an error.
        """
        if not isinstance(from_version, int) or from_version < 1:
            raise ValueError("from_version must be an integer >= 1")

        def add(f: Upcaster) -> Upcaster:
            with self._lock:
                key = (type, from_version)
                if key in self._upcasters:
                    raise ValueError(f"an upcaster for {type} v{from_version} is registered")
                self._upcasters[key] = f
            return f

        return add if fn is None else add(fn)

    def upcast(self, type: str, version: int, payload: dict) -> tuple[int, dict]:
        """Apply the upcasters of ``type`` from ``version`` on; returns (version, payload).

        The given payload is never modified.
        """
        fn = self._upcasters.get((type, version))
        if fn is None:
            return version, payload
        payload = copy.deepcopy(payload)
        while fn is not None:
            result = fn(payload)
            if not isinstance(result, dict):
                raise TypeError(f"upcaster for {type} v{version} returned {result!r}")
            payload = result
            version += 1
            fn = self._upcasters.get((type, version))
        return version, payload

    def __contains__(self, key: tuple[str, int]) -> bool:
        return key in self._upcasters


default_registry = UpcasterRegistry()


def register_upcaster(type: str, from_version: int, fn: Upcaster | None = None):
    """Register an upcaster in the global registry (see :meth:`UpcasterRegistry.register`)."""
    return default_registry.register(type, from_version, fn)


def upcast(type: str, version: int, payload: dict) -> tuple[int, dict]:
    """Upcast with the global registry (see :meth:`UpcasterRegistry.upcast`)."""
    return default_registry.upcast(type, version, payload)


# -- the upcasters of the events we store -------------------------------------------------------


@register_upcaster("GameCreated", 1)
def _game_created_names(payload: dict) -> dict:
    # v1 games were created before names were checked as RFC 8266 nicknames: their joins keep
    # the rule they had (domain/names.py NameRules), so their audits decide them alike.
    payload["names"] = "as_written"
    return payload


@register_upcaster("HandDealt", 1)
def _hand_dealt_salt(payload: dict) -> dict:
    # v1 hands were committed before salts: SHA-256 of the seed alone (format 1), which the
    # audit still recomputes as such (domain.shuffle.seed_commitment with salt None).
    payload["salt"] = None
    return payload


@register_upcaster("HandDealt", 2)
def _hand_dealt_contributions(payload: dict) -> dict:
    # v2 deals came before players could contribute to the shuffle (issue 21).
    return {**payload, "contributions": []}


@register_upcaster("PlayerJoined", 1)
def _player_joined_guest(payload: dict) -> dict:
    # v1 joins came before players could register (issue 20): every one was a guest's.
    payload["player_id"] = None
    return payload
