"""The compose stack on podman, for tests/test_container.py (issue 43).

``scripts/build-image`` builds the image (``localhost/hearts:test``) and writes podman's
settings for this machine (``containers.conf``: the runc runtime, rlimits within the machine's
hard limits) into its cache; :class:`Stack` runs docker-compose.yml's services on that image
with ``podman-compose`` under a project name of its own, on a free host port.

Containers are not children of the test: conmon keeps them running whatever happens to the
process that started them. So a stack is always taken down by a *reaper*, a small process tied
to the test (tests/children.py) that waits, then removes every container, volume and network
carrying the project's label: when the test closes its stdin (the normal end), or on SIGINT
(a terminal's Ctrl-C reaches the whole process group) or SIGTERM (the kernel's signal when the
test process dies, as an interrupted pytest-xdist worker does). Run as
``python -m tests.podman_stack reap PROJECT``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from service.lifeline import running
from tests import children
from tests.redis_helpers import free_port

ROOT = Path(__file__).resolve().parents[1]
IMAGE = os.environ.get("HEARTS_IMAGE", "localhost/hearts:test")
CACHE = Path(os.environ.get("HEARTS_IMAGE_CACHE", "/var/cache/hearts-image"))
SERVICES = ["redis", "api", "projector"]  # the default profile (podman-compose 1.0 has none)
LABEL = "io.podman.compose.project"


def podman_env() -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(CACHE / "containers.conf")}


def missing() -> str | None:
    """Why the stack cannot run here, or None."""
    for tool in ("podman", "podman-compose"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install podman podman-compose runc)"
    if not (CACHE / "containers.conf").is_file():
        return f"no {CACHE / 'containers.conf'}: run scripts/build-image"
    found = subprocess.run(
        ["podman", "image", "exists", IMAGE], env=podman_env(), capture_output=True, timeout=60
    )
    if found.returncode != 0:
        return f"no image {IMAGE}: run scripts/build-image"
    return None


def podman(*args: str, check: bool = True, timeout: float = 120) -> str:
    done = subprocess.run(
        ["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=timeout
    )
    if check and done.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)}: {done.stdout}{done.stderr}")
    return done.stdout.strip()


def teardown(project: str) -> None:
    """Every container (with its anonymous volumes), volume and network of ``project``."""
    owned = f"label={LABEL}={project}"
    containers = podman("ps", "--all", "--quiet", "--filter", owned, check=False).split()
    if containers:
        podman("rm", "--force", "--volumes", "--time", "0", *containers, check=False)
    volumes = podman("volume", "ls", "--quiet", "--filter", owned, check=False).split()
    if volumes:
        podman("volume", "rm", "--force", *volumes, check=False)
    networks = podman("network", "ls", "--quiet", "--filter", owned, check=False).split()
    if networks:
        podman("network", "rm", "--force", *networks, check=False)


PREFIX = "hearts-test-"


def sweep() -> None:
    """Takes down the stacks of test processes that are gone (a run killed with SIGKILL, which
    leaves its reaper no time): a stack's project name carries its test process's pid."""
    label = f'{{{{index .Labels "{LABEL}"}}}}'
    projects = set(podman("ps", "--all", "--format", label, check=False).split())
    projects |= set(podman("volume", "ls", "--format", label, check=False).split())
    for network in podman("network", "ls", "--format", "{{.Name}}", check=False).split():
        projects.add(network.removesuffix("_default"))
    for project in projects:
        pid = project.removeprefix(PREFIX).split("-")[0]
        if project.startswith(PREFIX) and pid.isdigit() and not running(int(pid)):
            teardown(project)


class Stack:
    """docker-compose.yml's default services, up under a project name of its own."""

    def __init__(self) -> None:
        sweep()
        self.project = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **podman_env(),
            "HEARTS_IMAGE": IMAGE,
            "HEARTS_REDIS_IMAGE": IMAGE,  # Debian's redis-server, inside the same image
            "HEARTS_API_PORT": str(self.port),
        }
        # The reaper first: whatever happens from here on, it takes the stack down.
        self.reaper = children.start(
            [sys.executable, "-m", "tests.podman_stack", "reap", self.project],
            cwd=ROOT,
            env={**self.env, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def compose(self, *args: str, timeout: float = 300) -> None:
        command = ["podman-compose", "-p", self.project, "-f", str(ROOT / "docker-compose.yml")]
        done = children.run(
            [*command, *args], cwd=ROOT, env=self.env, capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    def up(self, *services: str) -> None:
        self.compose("up", "--detach", "--no-build", *(services or SERVICES))

    def container(self, service: str) -> str:
        return f"{self.project}_{service}_1"  # podman-compose 1.0's names

    def wait_ready(self, timeout: float = 120) -> None:
        """Until /readyz answers 200 (the API serves and reaches Redis)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the API was not ready in {timeout} s:\n{self.logs('api')}")
            time.sleep(0.2)

    def wait_healthy(self, service: str, timeout: float = 120) -> None:
        """Until the service's health check (the compose file's) passes, run by hand."""
        deadline = time.monotonic() + timeout
        while True:
            done = subprocess.run(
                ["podman", "healthcheck", "run", self.container(service)],
                env=self.env, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            if done.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{service}'s health check failed for {timeout} s: {done.stdout}"
                    f"{done.stderr}\n{self.logs(service)}"
                )
            time.sleep(1)

    def logs(self, service: str) -> str:
        done = subprocess.run(
            ["podman", "logs", "--tail", "40", self.container(service)],
            env=self.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return done.stdout + done.stderr

    def down(self) -> None:
        """Takes the stack down (the reaper does it) and waits until it is gone."""
        if self.reaper.poll() is None:
            assert self.reaper.stdin is not None
            self.reaper.stdin.close()
            self.reaper.wait(timeout=180)


class _Interrupted(Exception):
    pass


def _reap(project: str) -> None:
    def interrupted(signum: int, frame: object) -> None:
        raise _Interrupted

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, interrupted)
    try:
        sys.stdin.buffer.read()  # until the test closes it, or a signal
    except _Interrupted:
        pass
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)  # the clean-up itself is not interrupted
        teardown(project)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "reap":
        sys.exit("usage: python -m tests.podman_stack reap PROJECT")
    _reap(sys.argv[2])
