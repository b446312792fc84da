"""What every benchmark shares: the command line, timing rounds, the output, the machine.

A benchmark measures the project and a baseline in the same run, in alternating rounds, and
reports both and their ratio: the machines are shared, so an absolute time drifts from run to run
while a ratio taken in the same minute mostly does not. Output is plain ``name: value unit`` lines,
or with ``--json`` one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from service.lifeline import die_with_parent

# The throwaway servers' free port (and free cluster bus port) is chosen as the tests choose it.
from tests.redis_helpers import free_port


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    return p


def machine() -> dict[str, Any]:
    """Where the figures came from: cores, Python, CPU model."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "python": platform.python_version(), "cpu": cpu}


@dataclass
class Report:
    """The figures of one benchmark run, printed as lines or as one JSON object."""

    benchmark: str
    figures: dict[str, Any] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, name: str, value: Any, unit: str = "") -> None:
        self.figures[name] = value
        self.units[name] = unit

    def target(self, name: str, met: bool, wanted: str) -> None:
        self.targets[name] = {"met": met, "wanted": wanted}

    def note(self, text: str) -> None:
        self.notes.append(text)

    def emit(self, as_json: bool) -> None:
        if as_json:
            out = {
                "benchmark": self.benchmark,
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": machine(),
                "figures": self.figures,
                "units": self.units,
                "targets": self.targets,
                "notes": self.notes,
            }
            print(json.dumps(out, indent=None, sort_keys=False))
            return
        m = machine()
        print(f"# {self.benchmark}: {m['nproc']} cores, Python {m['python']}, {m['cpu']}")
        width = max((len(k) for k in self.figures), default=0)
        for name, value in self.figures.items():
            unit = self.units.get(name, "")
            print(f"{name:<{width}}  {_fmt(value)}{' ' + unit if unit else ''}")
        for name, t in self.targets.items():
            print(f"target {name}: {'met' if t['met'] else 'MISSED'} (wanted {t['wanted']})")
        for text in self.notes:
            print(f"note: {text}")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value >= 100:
            return f"{value:,.0f}"
        if value >= 1:
            return f"{value:.2f}"
        return f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def alternate(
    runs: dict[str, Callable[[], float]], rounds: int, budget_seconds: float | None = None
) -> dict[str, list[float]]:
    """Run each measurement once per round, in turn, and collect what each returns.

    Alternating puts the project and its baseline in the same moments of a shared machine's
    load. Stops early (after at least one full round) if ``budget_seconds`` runs out.
    """
    results: dict[str, list[float]] = {name: [] for name in runs}
    start = time.perf_counter()
    for _ in range(rounds):
        for name, run in runs.items():
            results[name].append(run())
        if budget_seconds is not None and time.perf_counter() - start > budget_seconds:
            break
    return results


def json_lines(path: str | Path) -> Iterator[Any]:
    """The values of a JSON-lines file (a run's ``--results``), blank lines skipped."""
    for line in Path(path).read_text().splitlines():
        if line.strip():
            yield json.loads(line)


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(sorted_values: list[float], q: float) -> float:
    """The q-th percentile (0..100) of already sorted values, nearest rank."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, round(q / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


# -- a throwaway redis-server ---------------------------------------------------------------------


class RedisServer:
    """A private redis-server on a free loopback port, its files in a temporary directory.

    Never the shared Redis on 6379: benchmarks write and flush freely here. Used as a context
    manager; the server is stopped (and its directory removed) on exit.
    """

    def __init__(self, extra_args: tuple[str, ...] = ()) -> None:
        self.extra_args = extra_args
        self.process: subprocess.Popen | None = None
        self.url = ""
        self._dir = ""

    def __enter__(self) -> RedisServer:
        binary = os.environ.get("HEARTS_REDIS_SERVER") or shutil.which("redis-server")
        if not binary:
            sys.exit("redis-server not found: install it (apt-get install redis-server)")
        self._dir = tempfile.mkdtemp(prefix="hearts-bench-redis-")
        port = free_port(cluster="--cluster-enabled" in self.extra_args)
        self.process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", self._dir]
            + ["--save", "", "--appendonly", "no", "--daemonize", "no", *self.extra_args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # A benchmark stopped by a signal runs no __exit__: the kernel ends its server.
            preexec_fn=die_with_parent(),
        )
        self.url = f"redis://127.0.0.1:{port}/0"
        _wait_for_port(port, self.process)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self._dir, ignore_errors=True)


def _wait_for_port(port: int, process: subprocess.Popen, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


ROOT = Path(__file__).resolve().parents[1]


# -- a throwaway ``hearts serve`` ----------------------------------------------------------------


class RedisClusterServers:
    """A private Redis Cluster: ``masters`` cluster-enabled redis-servers (each a
    :class:`RedisServer`) joined by ``redis-cli --cluster create``, no replicas. ``url`` is the
    service's ``redis+cluster://`` URL for it. A context manager, like :class:`RedisServer`."""

    def __init__(self, masters: int = 3) -> None:
        self.servers = [
            RedisServer(("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"))
            for _ in range(masters)
        ]
        self.url = ""

    def __enter__(self) -> RedisClusterServers:
        import redis

        try:
            for server in self.servers:
                server.__enter__()
            addresses = [server.url.removeprefix("redis://").split("/")[0] for server in self]
            cli = shutil.which("redis-cli")
            if not cli:
                sys.exit("redis-cli not found: install it (apt-get install redis-tools)")
            subprocess.run(
                [cli, "--cluster", "create", *addresses, "--cluster-yes"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 30
            for server in self:
                node = redis.Redis.from_url(server.url)
                while b"cluster_state:ok" not in node.execute_command("CLUSTER", "INFO"):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the bench cluster did not come up")
                    time.sleep(0.05)
                node.close()
        except BaseException:
            self.__exit__()
            raise
        self.url = "redis+cluster://" + addresses[0]
        return self

    def __iter__(self):
        return iter(self.servers)

    def __exit__(self, *exc: object) -> None:
        for server in self.servers:
            server.__exit__()


@contextlib.contextmanager
def checkout(rev: str | None) -> Iterator[Path | None]:
    """The tree of git revision ``rev`` in a temporary directory (None: no revision)."""
    if rev is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="hearts-capacity-before-") as folder:
        tree = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", rev],
            check=True,
            capture_output=True,
            timeout=120,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(tree)) as archive:
            archive.extractall(folder, filter="data")
        yield Path(folder)


STOP_SECONDS = 1.0  # HeartsServer's wait for its quick shutdown, then SIGKILL
# Where a server keeps what outlives its Redis: a benchmark's server gets its own, unless the
# benchmark names one (``env``).
OWN_STORAGE = ("HEARTS_ARCHIVE_URL", "HEARTS_LOG_KEY_FILE")


class HeartsServer:
    """``hearts serve`` (gunicorn, its default worker class) on a free loopback port.

    Runs in its own session so that stopping it stops the master and its workers; talks to the
    Redis at ``redis_url`` (a throwaway one), never the shared one. ``env`` adds variables;
    ``app`` is serve's ``--app`` (e.g. bench/baseline_app.py's); ``root``: run the code of
    another checkout (first on the path), e.g. the code before a change. Its output goes to a
    log file, shown if it fails to start.
    """

    def __init__(
        self,
        redis_url: str,
        workers: int = 2,
        env: dict[str, str] | None = None,
        app: str | None = None,
        root: Path | None = None,
    ) -> None:
        self.redis_url = redis_url
        self.root = root
        self.workers = workers
        self.env = env or {}
        self.app = app
        self.port = 0
        self.process: subprocess.Popen | None = None
        # Lives as long as the server; read back only if it fails to start.
        self._log = tempfile.TemporaryFile(prefix="hearts-bench-serve-")  # noqa: SIM115
        # Its data directory (the archive of its ended games and the public log's tiles, the
        # log's key) is thrown away with it, as its Redis is: never the user's own, where a
        # server of theirs would meet the benchmark's tiles as another log's.
        self._data = tempfile.TemporaryDirectory(prefix="hearts-bench-data-")

    def __enter__(self) -> HeartsServer:
        self.port = free_port()
        env = {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "HEARTS_KEY_PREFIX": "bench",
            "HEARTS_SWEEP_ON_START": "0",
            "HEARTS_RATE_LIMITS": "0",  # a benchmark is a flood by design; a run may set its own
            "HEARTS_DATA_DIR": self._data.name,
            **self.env,
        }
        for name in OWN_STORAGE:  # the shell's, if set, would point it at the user's
            if name not in self.env:
                env.pop(name, None)
        if self.root is not None:  # another checkout's code (e.g. the code before a change)
            paths = [str(self.root), env.get("PYTHONPATH", "")]
            env["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)
        command = [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--workers", str(self.workers), "--no-projector"]
        if self.app is not None:
            command += ["--app", self.app]
        self.process = subprocess.Popen(
            command,
            env=env,
            cwd=self.root or ROOT,  # the workers import bench.* from the repository's root
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent(),  # as the redis-server's: a killed benchmark's ends
        )
        try:
            _wait_for_port(self.port, self.process, timeout=60)
            self._wait_for_workers()
        except RuntimeError as failed:
            self._log.seek(0)
            output = self._log.read().decode(errors="replace")[-3000:]
            self.__exit__()
            raise RuntimeError(f"hearts serve did not start ({failed}):\n{output}") from None
        return self

    def _wait_for_workers(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(self.worker_pids()) < self.workers and time.monotonic() < deadline:
            time.sleep(0.1)

    def worker_pids(self) -> list[int]:
        """The gunicorn workers: children of the master (which is our child)."""
        assert self.process is not None
        try:
            text = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def __exit__(self, *exc: object) -> None:
        try:
            self._stop()
        finally:
            self._log.close()
            self._data.cleanup()

    def _stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        try:
            # Our session: master and workers. SIGINT is gunicorn's quick shutdown (TERM's
            # graceful one waits for its timeout, ~10 s, if a worker is still booting); a
            # benchmark's server has nothing to finish and its Redis is thrown away: KILL after
            # STOP_SECONDS.
            os.killpg(self.process.pid, signal.SIGINT)
            self.process.wait(timeout=STOP_SECONDS)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def rss_kib(pid: int) -> int:
    """Resident memory of a process (VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")
