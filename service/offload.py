"""Long work in a process of its own, at the lowest CPU priority.

An audit, export or import of a 15,000-event game is ~0.1-1 s of pure-Python CPU. Run inside a
gevent worker it holds the worker's only thread: the pacing of ``service/cooperative.py`` lets the
worker's other requests in between slices, but they still share two cores with it, and the big
import body's parse, its garbage and the collector's passes over it stay in the worker. Handed to
a child process instead, the worker just waits on a pipe (cooperatively under gevent, whose
monkey-patching makes ``subprocess`` pipes yield), and the child runs at ``nice 19``: whenever an
ordinary request wants a core, the kernel gives it that core first (a nice-19 task weighs 15
against a nice-0 task's 1,024 in Linux's scheduler).

The protocol is private to this module: a frame is a 4-byte big-endian length and a pickle. The
child is started as ``python -c "import <module>; <module>.main()"`` (``main`` calls
``serve_child``), gets the bootstrap (whatever the jobs need to build their service) as its
first frame, then answers one call frame ``(name, args)`` with one frame
``("ok", value)`` or ``("error", exception)``; an exception that cannot be pickled comes back as
:class:`OffloadFailed`. A child that dies is replaced on the next call, and the call that was in
it fails with :class:`OffloadFailed` (never a silent retry: an import may have appended).
Pickle is safe here: both ends are this program, on a pipe only they hold.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, Protocol

log = logging.getLogger(__name__)

_LENGTH = struct.Struct(">I")
NICE = 19
# A child with nothing to do for this long exits (its memory is the big game's it last held);
# the parent starts a fresh one rather than reuse one idle for half of that, so it never writes
# to a child that is just leaving.
IDLE_SECONDS = 300.0


class OffloadFailed(RuntimeError):
    """The child process died or answered something this end could not read."""


class Offload(Protocol):
    def call(self, name: str, *args: Any) -> Any: ...

    def close(self) -> None: ...


def write_frame(stream: BinaryIO, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: BinaryIO) -> Any:
    head = _read_exactly(stream, _LENGTH.size)
    return pickle.loads(_read_exactly(stream, _LENGTH.unpack(head)[0]))


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            raise EOFError("the other end closed the pipe")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


class InlineOffload:
    """The same calls, run in this process (tests on fakeredis, ``HEARTS_LONG_WORK=inline``)."""

    def __init__(self, jobs: Mapping[str, Callable[..., Any]]) -> None:
        self._jobs = jobs

    def call(self, name: str, *args: Any) -> Any:
        return self._jobs[name](*args)

    def close(self) -> None:
        pass


class _Child:
    def __init__(self, module: str, bootstrap: Any) -> None:
        self.process = subprocess.Popen(
            # -c, not -m: the module is imported by its package already (runpy would warn).
            [sys.executable, "-c", f"import {module} as jobs; jobs.main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: BinaryIO = self.process.stdin
        self.stdout: BinaryIO = self.process.stdout
        write_frame(self.stdin, bootstrap)
        self.used = time.monotonic()

    def call(self, name: str, args: tuple[Any, ...]) -> Any:
        try:
            write_frame(self.stdin, (name, args))
            status, value = read_frame(self.stdout)
            self.used = time.monotonic()
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError) as error:
            raise OffloadFailed(f"the long-work process failed: {error}") from error
        if status == "error":
            raise _rebuild(*value)
        return value

    def alive(self) -> bool:
        fresh = time.monotonic() - self.used < IDLE_SECONDS / 2
        return fresh and self.process.poll() is None

    def close(self) -> None:
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class ProcessOffload:
    """Calls run by child processes (``module.main()``), one call per child at a time; up to
    ``size`` children, started when first needed. Callers beyond ``size`` wait for a child."""

    def __init__(self, module: str, bootstrap: Any, size: int = 1) -> None:
        self._module = module
        self._bootstrap = bootstrap
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._idle: list[_Child] = []
        self._all: list[_Child] = []

    def call(self, name: str, *args: Any) -> Any:
        with self._slots:
            child = self._take()
            broken = False
            try:
                return child.call(name, args)
            except OffloadFailed:
                broken = True
                raise
            finally:
                self._give_back(child, broken)

    def _take(self) -> _Child:
        with self._lock:
            while self._idle:
                child = self._idle.pop()
                if child.alive():
                    return child
                self._all.remove(child)
                child.close()
        child = _Child(self._module, self._bootstrap)
        with self._lock:
            self._all.append(child)
        return child

    def _give_back(self, child: _Child, broken: bool) -> None:
        with self._lock:
            if broken or not child.alive():
                if child in self._all:
                    self._all.remove(child)
            else:
                self._idle.append(child)
                return
        child.close()

    def close(self) -> None:
        with self._lock:
            children, self._all, self._idle = self._all, [], []
        for child in children:
            child.close()


def serve_child(build: Callable[[Any], Mapping[str, Callable[..., Any]]]) -> None:
    """The child's loop: lowest CPU priority, the jobs from ``build(bootstrap)``, one call at a
    time until the parent closes the pipe. Only pickling problems are caught around a job's
    own exception: anything a job raises goes back to the caller, who maps it as if it had run
    the job itself."""
    os.nice(NICE)
    # Unbuffered in: no read-ahead that ``select`` below would not see.
    stdin: BinaryIO = os.fdopen(sys.stdin.fileno(), "rb", buffering=0)
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the frames
    jobs = build(read_frame(stdin))
    while True:
        if not select.select([stdin], [], [], IDLE_SECONDS)[0]:
            return
        try:
            name, args = read_frame(stdin)
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = ("ok", jobs[name](*args))
        except Exception as error:  # noqa: BLE001 - every failure goes back to the caller
            answer = ("error", _portable(error))
        try:
            _answer(stdout, answer)
        except OSError as error:
            # The worker that asked is gone (killed, timed out, shut down) and its end of the
            # pipe with it: nobody is left to answer, so one line and out, no traceback (issue
            # 34, "quiet failure"). The next call starts a fresh child.
            log.warning(
                "long-work child: the worker left before %r was answered (%s); exiting",
                name,
                error.strerror or error,
            )
            _leave_pipe(stdout)
            return


def _answer(stdout: BinaryIO, answer: tuple[str, Any]) -> None:
    try:
        write_frame(stdout, answer)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        failed = OffloadFailed(f"unpicklable answer: {error!r}")
        write_frame(stdout, ("error", _portable(failed)))


def _leave_pipe(stdout: BinaryIO) -> None:
    """Point the broken pipe at /dev/null: nothing is left for the interpreter to flush into
    it at exit (which would print an "Exception ignored ... BrokenPipeError" of its own)."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout.fileno())
        os.close(devnull)


def _portable(error: BaseException) -> tuple[type[BaseException], tuple[Any, ...], dict]:
    """An exception as its class, args and attributes. Pickling the exception itself calls
    ``cls(*args)`` to rebuild it, which breaks for the many exceptions whose ``__init__`` takes
    other arguments than they pass up (``GameNotFound(game_id)`` keeps only the message)."""
    return type(error), error.args, dict(getattr(error, "__dict__", {}))


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict) -> BaseException:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error
