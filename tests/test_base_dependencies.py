"""`pip install -e .` alone runs the server (issue 44: the set-up installed the whole test extra,
minutes of pip, to run `hearts serve`; and the server imported httpx, then only in that extra).

Every module of the installed packages is imported in a process where the distributions only
the optional extras bring (test, s3, ephemeral, bench) cannot be imported, as in a fresh
virtualenv with the base dependencies alone. A module may still use an extra's package inside a
function (boto3 for an s3:// archive, fakeredis for `--ephemeral`), where it says which extra to
install; a module that imports one at its top fails here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def distribution(requirement: str) -> str:
    """The canonical name of a requirement's distribution (``"Flask>=3.0"`` -> ``flask``)."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name, requirement
    return re.sub(r"[-_.]+", "-", name.group(0)).lower()


def installed_with(names: set[str]) -> set[str]:
    """``names`` and every distribution they require (markers and extras aside), as installed."""
    found: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [distribution(r) for r in requires if ";" not in r]
    return found


def modules_of_extras_only() -> list[str]:
    """Top-level modules of the distributions that only the optional extras bring."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = installed_with({distribution(r) for r in project["dependencies"]})
    extras = {distribution(r) for rs in project["optional-dependencies"].values() for r in rs}
    only = installed_with(extras) - base
    return sorted(
        module
        for module, owners in metadata.packages_distributions().items()
        if module.isidentifier() and {distribution(owner) for owner in owners} <= only
    )


IMPORT_ALL = """
import importlib, importlib.abc, json, pkgutil, sys

blocked = set(json.loads(sys.argv[1]))

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"{name} (only an optional extra installs it)", name=name)
        return None

sys.meta_path.insert(0, Absent())
failed = []
for package in ("domain", "bots", "projections", "service", "hearts_client"):
    root = importlib.import_module(package)
    for module in pkgutil.walk_packages(root.__path__, package + "."):
        if module.name.endswith(".__main__"):  # runs a command when imported
            continue
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError as error:
            failed.append(f"{module.name}: {error}")
print("\\n".join(failed))
"""


def test_the_extras_are_told_apart_from_the_base() -> None:
    blocked = modules_of_extras_only()
    assert {"pytest", "fakeredis", "boto3", "hypothesis"} <= set(blocked), blocked
    assert not {"flask", "redis", "gunicorn", "httpx"} & set(blocked), blocked


def test_every_module_imports_with_the_base_dependencies_alone() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, json.dumps(modules_of_extras_only())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    failed = done.stdout.strip()
    assert not failed, f"these need a package only an optional extra installs:\n{failed}"
