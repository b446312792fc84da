"""A child process kept running: ``hearts serve`` supervises its projector with it.

The child is restarted whenever it exits (a crash, a kill, an exit status of any kind) after a
back-off that doubles from ``first_delay`` to ``max_delay`` and starts again from ``first_delay``
once a child has lived ``stable_after`` seconds. The child is forked from the supervisor's own
thread, which lives until :meth:`Supervisor.stop`, so the kernel's parent-death signal
(``service.lifeline.die_with_parent``) reaches it when the supervising process dies, even by
SIGKILL. The child runs in its own process group: a Ctrl-C at the terminal reaches the master,
which stops the child itself, instead of the child ending (and being restarted) on its own.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence

from service.lifeline import die_with_parent

log = logging.getLogger(__name__)


class Supervisor:
    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        *,
        first_delay: float = 0.5,
        max_delay: float = 30.0,
        stable_after: float = 60.0,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.stable_after = stable_after
        self.restarts = 0
        self.process: subprocess.Popen | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"supervise-{name}", daemon=True)

    def start(self) -> Supervisor:
        self._thread.start()
        return self

    @property
    def pid(self) -> int | None:
        with self._lock:
            return self.process.pid if self.process is not None else None

    def _run(self) -> None:
        delay = self.first_delay
        while not self._stop.is_set():
            started = time.monotonic()
            with self._lock:
                if self._stop.is_set():
                    return
                self.process = subprocess.Popen(
                    self.argv,
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    process_group=0,
                    preexec_fn=die_with_parent(),
                )
            log.info("%s started (pid %d)", self.name, self.process.pid)
            # If gunicorn's arbiter reaps it first (waitpid(-1)), wait() says 0: still an exit.
            status = self.process.wait()
            if self._stop.is_set():
                return
            if time.monotonic() - started >= self.stable_after:
                delay = self.first_delay
            self.restarts += 1
            log.warning("%s exited (status %s); restarting in %.1f s", self.name, status, delay)
            self._stop.wait(delay)
            delay = min(delay * 2, self.max_delay)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop supervising and end the child (SIGTERM, then SIGKILL after ``timeout``)."""
        self._stop.set()
        with self._lock:
            process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._thread.is_alive():
            self._thread.join(timeout)
