"""The layers import only downwards, and only service/settings.py reads the environment."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.python_source import parse_python

ROOT = Path(__file__).resolve().parents[1]
OURS = ("domain", "bots", "projections", "service", "bench", "tests")

# What each package may import of ours (docs/architecture.md).
ALLOWED = {
    "domain": {"domain"},
    "bots": {"bots", "domain"},
    "projections": {"projections", "domain"},
    "service/store": {"service", "domain", "projections"},
    "service/app": {"service", "domain", "bots", "projections"},
}
ENVIRON_PENDING: set[str] = set()  # modules allowed to read os.environ for now: none


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(parse_python(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_each_layer_imports_only_what_is_below_it(folder: str) -> None:
    wrong = []
    for path in _modules(folder):
        for name in _imports(path):
            top = name.split(".")[0]
            if top in OURS and top not in ALLOWED[folder]:
                wrong.append(f"{path.relative_to(ROOT)}: {name}")
    assert wrong == []


def test_the_application_layer_speaks_no_http_and_uses_no_edge() -> None:
    # The edges (service/api, service/cli) sit on top of the application; never the reverse.
    wrong = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _modules("service/app") + _modules("service/store")
        for name in _imports(path)
        if name.startswith(("service.api", "service.cli", "flask", "werkzeug"))
    ]
    assert wrong == []


def test_only_the_settings_read_the_environment() -> None:
    readers = {
        str(path.relative_to(ROOT))
        for path in _modules("service")
        if "os.environ" in path.read_text(encoding="utf-8")
    }
    assert readers - ENVIRON_PENDING == {"service/settings.py"}


def test_the_client_package_imports_nothing_of_the_server() -> None:
    # hearts_client (clients/python) is the independent verifier: the server imports its merkle
    # and note modules, never the reverse (docs/verify.md).
    wrong = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _modules("clients/python/src/hearts_client")
        for name in _imports(path)
        if name.split(".")[0] in OURS
    ]
    assert wrong == []
