"""Processes a test starts, tied to the test process that started them.

A test that starts a server (``hearts serve``, a redis-server, a projector) stops it in its
fixture's finalizer, but an interrupted run may never get there: Ctrl-C on ``python -m pytest``
ends pytest-xdist's workers before their finalizers run, and a server in a session of its own
(``start_new_session``, so that a test can signal its whole group) never sees the Ctrl-C at all.
It was then left running with parent 1 (issue 44). So every process a test starts goes through
:func:`start`, which asks the kernel to send it SIGTERM when the test process ends, however it
ends (the project's own lifeline, service/lifeline.py, as ``hearts serve`` does for its
children); ``tests/test_children.py`` interrupts a run and looks for survivors.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from service.lifeline import die_with_parent


def tied(then: Callable[[], None] | None = None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that ties the child to this process (then runs ``then``, if any).

    The kernel ties it to the *thread* that forks: start children from the test's own thread (a
    fixture or the test), or from a thread that outlives them."""
    lifeline = die_with_parent()
    if lifeline is None or then is None:
        return lifeline or then

    def both() -> None:
        lifeline()
        then()

    return both


def start(args: Sequence[str], **kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen(args, **kwargs)`` for a child that ends with this test process."""
    kwargs["preexec_fn"] = tied(kwargs.get("preexec_fn"))
    return subprocess.Popen(args, **kwargs)


def run(args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess:
    """``subprocess.run(args, **kwargs)`` for a child that ends with this test process."""
    kwargs["preexec_fn"] = tied(kwargs.get("preexec_fn"))
    return subprocess.run(args, **kwargs)
