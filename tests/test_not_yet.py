"""The README's "Not yet" list stays true (issue 34: it said matchmaking and per-player streams
were not built long after they were). Each item carries a marker naming what the code would
have once it is built; this fails when the code has it, or when an item has no marker.

Markers: ``<!-- absent: route /api/v1/... -->`` (no URL rule of the app starts with it),
``<!-- absent: command Name -->`` (no such command in domain/commands.py),
``<!-- absent: module path/to/file.py -->`` (no such file)."""

from __future__ import annotations

import re
from pathlib import Path

import fakeredis
import pytest

import domain.commands
from service.api.factory import create_app
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!-- absent: (route|command|module) (\S+) -->")


def not_yet_items() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Not yet\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


@pytest.fixture(scope="module")
def routes() -> list[str]:
    app = create_app(Settings(), redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    rules = [rule.rule for rule in app.url_map.iter_rules()]
    app.extensions["hearts.stop"]()
    return rules


def test_the_list_has_items_each_with_one_marker() -> None:
    items = not_yet_items()
    assert items, "README.md has a Not yet list"
    for item in items:
        assert len(MARKER.findall(item)) == 1, f"no marker (or more than one) in: {item}"


@pytest.mark.parametrize("item", not_yet_items())
def test_each_item_is_still_not_built(item: str, routes: list[str]) -> None:
    found = MARKER.search(item)
    assert found, item
    kind, name = found.groups()
    if kind == "route":
        assert not [r for r in routes if r.startswith(name)], f"built now: {item}"
    elif kind == "command":
        assert not hasattr(domain.commands, name), f"built now: {item}"
    else:
        assert not (ROOT / name).exists(), f"built now: {item}"


def test_the_markers_would_see_what_is_built(routes: list[str]) -> None:
    # The check is no formality: what the list once named (matchmaking, one stream per
    # player) would have failed it.
    assert [r for r in routes if r.startswith("/api/v1/seeks")]
    assert [r for r in routes if r.startswith("/api/v1/players/me/events")]
    assert hasattr(domain.commands, "PlayCard")
