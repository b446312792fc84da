"""Child processes that end with their parent, even when the parent is killed with SIGKILL.

``hearts serve`` starts an embedded redis-server and a projector beside gunicorn. A master killed
with SIGKILL runs no clean-up of its own, so each child is tied to it from the child's side:

- on Linux, ``die_with_parent`` (a ``preexec_fn``) asks the kernel to send the child SIGTERM when
  its parent ends (``prctl(PR_SET_PDEATHSIG)``; kept across ``exec``, so it works for a
  redis-server we cannot modify). The kernel ties it to the *thread* that forked the child: fork
  from a thread that lives as long as the process (the main thread, or a supervisor thread that
  only ends at shutdown);
- everywhere, a Python child can also ``watch_parent``: a thread that notices the parent pid
  change (re-parented to init or a subreaper) and calls back.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl


def die_with_parent(signum: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess.Popen`` that has the child receive ``signum`` when this
    process ends; None where the kernel offers no such thing (not Linux)."""
    # Loaded here, before the fork: the child of a threaded parent should do as little as it can.
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child, between fork and exec
        prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: too late for the kernel
            os.kill(os.getpid(), signum)

    return preexec


def end_with_parent(parent: int, signum: int = signal.SIGTERM) -> bool:
    """This (already forked) process receives ``signum`` when ``parent`` ends; False where the
    kernel offers no such thing."""
    prctl = _prctl()
    if prctl is None:
        return False
    prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signum)
    return True


def watch_parent(parent: int, on_gone: Callable[[], None], interval: float = 0.5) -> None:
    """Call ``on_gone`` (once, from a daemon thread) when this process's parent is no longer
    ``parent``."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        on_gone()

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def running(pid: int) -> bool:
    """Whether a process ``pid`` runs (another user's counts; so does a pid the system gave to
    another program since: what waits on its end then waits longer, never too little)."""
    if pid <= 0:
        return True  # a process group or every process: not one process's end to act on
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
