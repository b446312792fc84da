"""Long loops share their worker with the requests that wait behind them.

Under ``hearts serve`` a request is a greenlet of a gevent worker: a loop that never waits on I/O
(the audit of a 15,000-event game, an import) holds the whole worker, and every other request of
that worker waits until it ends. ``pause()`` lets them in: under gevent it is ``gevent.idle()``,
which returns once the event loop has polled for I/O and run every other greenlet ready to run
(``sleep(0)`` would not do: it lets the loop run callbacks without polling for I/O, so a request
waiting on its socket or on Redis still waits). Without gevent (threads, tests) it is
``time.sleep(0)``, a chance for another thread to take the GIL.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

# Items between two pauses: about a millisecond of the slowest per-item loop (the audit's walk,
# ~40 us an event). A request waits for one such slice of each long request of its worker at
# each of its own waits on I/O (three or four), so the slice must be short; a pause costs a few
# microseconds when nothing else is ready.
EVERY = 32


@functools.cache  # a gevent worker patches before it loads the app; nothing unpatches
def _gevent_idle() -> Callable[[], object] | None:
    try:
        from gevent import idle, monkey
    except ImportError:
        return None
    return idle if monkey.is_module_patched("time") else None


def pause() -> None:
    """Let the other greenlets (threads) of this process run, if any are ready."""
    idle = _gevent_idle()
    if idle is not None:
        idle()
    else:
        time.sleep(0)


def paced(items: Iterable[T], every: int = EVERY) -> Iterator[T]:
    """``items``, pausing after every ``every`` of them."""
    for i, item in enumerate(items, 1):
        yield item
        if i % every == 0:
            pause()
