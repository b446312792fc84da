"""Every hand-kept list against its source (issue 24): docs/api.md's error table against the
problem catalogue, docs/projections.md's figures table and the web leaderboard's columns against
``FIGURES``, docs/rules.md's options table against ``OPTIONS``, docs/api.md's views list against
the views' declaration (domain/views.py). A failure names what is missing where, so a new
problem type, figure, option or view field is caught the moment it exists, whoever adds it."""

from __future__ import annotations

import re
from pathlib import Path

from domain.rules import OPTIONS
from domain.views import VIEWS
from domain.wire import json_fields
from projections.stats import FIGURES
from service.api.problems import CATALOGUE

ROOT = Path(__file__).resolve().parent.parent
CODE = re.compile(r"`([a-z0-9_-]+)`")

# Figures the web leaderboard does not show yet (issue 24 found them missing; service/web/ is
# another change's). A new figure fails below until it is a column or named here on purpose.
NOT_IN_THE_WEB_LEADERBOARD: set[str] = set()  # a figure the web table deliberately leaves out


def table(path: Path, header: str) -> list[list[str]]:
    """The rows (cells stripped) of the markdown table whose header line starts with ``header``."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_the_api_doc_error_table_lists_every_problem_type_with_its_status() -> None:
    listed: dict[str, str] = {}
    for status, codes, _ in table(ROOT / "docs" / "api.md", "| Status | `code` |"):
        for code in CODE.findall(codes):
            listed[code] = status
    missing = sorted(code for code in CATALOGUE if code not in listed)
    assert not missing, f"docs/api.md's error table has no row for: {', '.join(missing)}"
    wrong = {c: (listed[c], p.status) for c, p in CATALOGUE.items() if listed[c] != str(p.status)}
    assert not wrong, f"docs/api.md's error table: (status there, status served): {wrong}"
    unknown = sorted(set(listed) - set(CATALOGUE))
    assert not unknown, f"docs/api.md's error table lists codes the server never sends: {unknown}"


def test_the_projections_doc_lists_every_figure() -> None:
    listed = set()
    for cells in table(ROOT / "docs" / "projections.md", "| Figure | Meaning |"):
        listed.update(CODE.findall(cells[0]))
    missing = sorted(set(FIGURES) - listed)
    assert not missing, f"docs/projections.md's figures table has no row for: {missing}"
    unknown = sorted(listed - set(FIGURES))
    assert not unknown, f"docs/projections.md lists figures FIGURES does not have: {unknown}"
    for name, figure in FIGURES.items():
        rows = table(ROOT / "docs" / "projections.md", "| Figure |")
        row = next(c for c in rows if name in CODE.findall(c[0]))
        assert row[-1] == figure.better, f"{name}: the doc says {row[-1]}, FIGURES {figure.better}"


def test_the_web_leaderboard_has_a_column_for_every_figure() -> None:
    scripts = "\n".join(p.read_text() for p in (ROOT / "service/web/static").glob("*.js"))
    shown = {name for name in FIGURES if f'"{name}"' in scripts or f"'{name}'" in scripts}
    missing = sorted(set(FIGURES) - shown - NOT_IN_THE_WEB_LEADERBOARD)
    assert not missing, f"service/web/static (boards.js FIGURES) has no column for: {missing}"
    assert set(FIGURES) >= NOT_IN_THE_WEB_LEADERBOARD, "a figure named here no longer exists"


def test_the_rules_doc_lists_every_option() -> None:
    listed = [CODE.findall(cells[0]) for cells in table(ROOT / "docs" / "rules.md", "| Option |")]
    names = [name for found in listed for name in found]
    missing = sorted(set(OPTIONS) - set(names))
    assert not missing, f"docs/rules.md's options table has no row for: {missing}"
    unknown = sorted(set(names) - set(OPTIONS))
    assert not unknown, f"docs/rules.md's options table lists options OPTIONS lacks: {unknown}"


def test_the_api_doc_views_list_names_every_view_field() -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    start = text.index("- **Views** carry")
    listed = set(re.findall(r"`([a-z_]+)`", text[start : text.index("\n- **", start + 1)]))
    for name, parts in VIEWS.items():
        missing = [f.name for f in json_fields(*parts) if f.name not in listed]
        assert not missing, f"docs/api.md's **Views** list does not name {name}'s {missing}"
