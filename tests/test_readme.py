"""Issue 44: the README is the new user's path, short enough to read (at most ~200 lines), and
every page it sends the reader to exists (the rest of the documentation lives in docs/)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the detail to docs/"


def test_every_page_the_readme_links_to_is_in_the_repository():
    targets = [t for t in LINK.findall(README.read_text(encoding="utf-8")) if "://" not in t]
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert missing == []
