"""What docs/operations.md gives an operator to run hearts outside a container: the systemd
units (deploy/systemd/, checked by ``systemd-analyze verify`` when the machine has it, else
read for their syntax) and the Redis settings (deploy/redis/hearts.conf, loaded by a real
redis-server, with its ACL user running the service)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from service.api.factory import create_app
from service.settings import Settings
from tests import children
from tests.api.helpers import Hearts
from tests.redis_helpers import free_port, redis_server_binary

ROOT = Path(__file__).resolve().parents[1]
UNITS = sorted((ROOT / "deploy" / "systemd").glob("*.service"))
INSTALLED = "/opt/hearts/venv/bin/hearts"  # where the units expect the installed command


def test_there_are_units_for_the_api_and_the_projector():
    commands = {unit.name: _exec_start(unit) for unit in UNITS}
    assert commands == {
        "hearts-projector.service": f"{INSTALLED} project",
        "hearts.service": f"{INSTALLED} serve --no-projector",
    }
    assert "docs/operations.md" in (ROOT / "deploy" / "systemd" / "hearts.service").read_text()
    assert "deploy/systemd/" in (ROOT / "docs" / "operations.md").read_text()


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_systemd_accepts_the_unit(unit, tmp_path):
    # The command must exist for systemd-analyze: the one this test process would run.
    hearts = shutil.which("hearts") or sys.executable
    copy = tmp_path / unit.name
    copy.write_text(unit.read_text().replace(INSTALLED, hearts))
    analyze = shutil.which("systemd-analyze")
    if analyze is None:  # no systemd here: the syntax, read as systemd reads it
        _check_syntax(copy)
        return
    done = subprocess.run(
        [analyze, "verify", str(copy)], capture_output=True, text=True, timeout=120
    )
    # A setting systemd does not know or cannot parse is a warning (status 0): none wanted.
    said = [line for line in (done.stdout + done.stderr).splitlines() if unit.name in line]
    assert done.returncode == 0 and said == [], done.stdout + done.stderr


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_the_unit_has_only_known_sections_and_settings(unit):
    _check_syntax(unit)  # what a machine without systemd still checks


def _exec_start(unit: Path) -> str:
    return next(
        line.split("=", 1)[1]
        for line in unit.read_text().splitlines()
        if line.startswith("ExecStart=")
    )


_KNOWN = {
    "Unit": {"Description", "Wants", "After", "Requires", "Documentation"},
    "Service": {
        "Type", "User", "Group", "EnvironmentFile", "Environment", "ExecStart", "KillMode",
        "KillSignal", "TimeoutStopSec", "Restart", "RestartSec", "StateDirectory",
        "StateDirectoryMode", "LimitNOFILE", "NoNewPrivileges", "PrivateTmp", "ProtectSystem",
        "ProtectHome", "ProtectKernelTunables", "ProtectControlGroups", "RestrictSUIDSGID",
    },
    "Install": {"WantedBy"},
}  # fmt: skip


def _check_syntax(unit: Path) -> None:
    section = None
    for number, line in enumerate(unit.read_text().splitlines(), 1):
        if not line.strip() or line.startswith(("#", ";")):
            continue
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            section = header.group(1)
            assert section in _KNOWN, f"{unit.name}:{number}: unknown section {line}"
            continue
        key, sep, value = line.partition("=")
        assert section and sep and value, f"{unit.name}:{number}: not key=value: {line}"
        assert key in _KNOWN[section], f"{unit.name}:{number}: unknown setting {key}"


def test_the_redis_settings_load_and_their_acl_user_runs_the_service(tmp_path, key_prefix):
    """deploy/redis/hearts.conf as documented (the ACL lines uncommented, a password set):
    redis-server loads it, and the service plays a game as the `hearts` user, who cannot wipe
    the data."""
    conf = (ROOT / "deploy" / "redis" / "hearts.conf").read_text()
    conf = conf.replace("# user default off", "user default off")
    conf = conf.replace("# user hearts on ><password>", "user hearts on >s3cret")
    conf += "\nuser operator on >operator ~* &* +@all\n"  # this test's own look at the settings
    (tmp_path / "redis.conf").write_text(conf)
    port = free_port()
    process = children.start(
        [redis_server_binary(), str(tmp_path / "redis.conf")]
        + ["--port", str(port), "--dir", str(tmp_path), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    operator = redis.Redis(port=port, username="operator", password="operator")
    client = redis.Redis.from_url(f"redis://hearts:s3cret@127.0.0.1:{port}/0")
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                operator.ping()
                break
            except redis.ConnectionError:
                assert process.poll() is None, "redis-server refused the settings"
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        settings = {
            k: v
            for k in ("maxmemory-policy", "appendonly", "appendfsync", "save", "protected-mode")
            for k, v in operator.config_get(k).items()
        }
        assert settings == {
            "maxmemory-policy": "noeviction",
            "appendonly": "yes",
            "appendfsync": "everysec",
            "save": "",
            "protected-mode": "yes",
        }
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port).ping()  # the default user is off
        app = create_app(Settings(key_prefix=key_prefix), redis=client)
        hearts = Hearts(app.test_client())
        game = hearts.create([{"bot": "random"}] * 4, rules={"score_limit": 30})
        hearts.wait_for(game["id"], lambda view: view["phase"] == "finished", timeout=120)
        for wipe in (client.flushall, client.flushdb, lambda: client.keys("*")):
            with pytest.raises(redis.exceptions.NoPermissionError):
                wipe()
        app.extensions["hearts.stop"]()
    finally:
        client.close()
        operator.close()
        process.terminate()
        process.wait(timeout=20)
