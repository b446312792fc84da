"""The order test files are handed to xdist's workers (tests/conftest.py): the longest first,
each file's tests together and in the file's order."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from tests import conftest

ROOT = Path(__file__).resolve().parent.parent


def test_every_file_listed_as_long_is_there():
    missing = [path for path in conftest.LONGEST_FIRST if not (ROOT / path).is_file()]
    assert not missing, f"renamed or gone: update LONGEST_FIRST in tests/conftest.py: {missing}"
    assert len(set(conftest.LONGEST_FIRST)) == len(conftest.LONGEST_FIRST)


def _config(randomly: bool) -> SimpleNamespace:
    plugins = SimpleNamespace(has_plugin=lambda name: randomly and name == "randomly")
    return SimpleNamespace(pluginmanager=plugins)


def test_long_files_first_then_most_tests_first_each_file_whole_and_in_order():
    longest = conftest.LONGEST_FIRST[0]
    nodeids = ["tests/a.py::one", "tests/b.py::one", "tests/a.py::two", "tests/b.py::two"]
    nodeids += ["tests/b.py::three", "tests/c.py::one", f"{longest}::one", f"{longest}::two"]
    items = [SimpleNamespace(nodeid=n) for n in nodeids]
    conftest.pytest_collection_modifyitems(_config(randomly=False), items)
    assert [i.nodeid for i in items] == [
        f"{longest}::one",
        f"{longest}::two",
        "tests/b.py::one",
        "tests/b.py::two",
        "tests/b.py::three",
        "tests/a.py::one",
        "tests/a.py::two",
        "tests/c.py::one",
    ]


def test_a_shuffled_run_keeps_its_shuffle():
    items = [SimpleNamespace(nodeid=n) for n in ("tests/a.py::x", "tests/b.py::x", "tests/a.py::y")]
    conftest.pytest_collection_modifyitems(_config(randomly=True), items)
    assert [i.nodeid for i in items] == ["tests/a.py::x", "tests/b.py::x", "tests/a.py::y"]


def test_auto_runs_two_workers_a_core(request):
    """`-n auto` (pyproject.toml) asks this hook through xdist: a misspelt hook would be ignored
    and leave one worker a core."""
    cores = len(os.sched_getaffinity(0))
    workers = request.config.hook.pytest_xdist_auto_num_workers(config=request.config)
    assert workers == conftest.WORKERS_PER_CORE * cores == 2 * cores
