"""bench/common.py `checkout`: a revision's tree, for `--before REV` (bench.api, bench.capacity)."""

from __future__ import annotations

import subprocess

from bench.common import ROOT, checkout


def test_a_revision_is_extracted_and_removed_after() -> None:
    with checkout("HEAD") as root:
        assert root is not None
        committed = subprocess.run(
            ["git", "-C", str(ROOT), "show", "HEAD:service/__init__.py"],
            check=True,
            capture_output=True,
        ).stdout
        assert (root / "service" / "__init__.py").read_bytes() == committed
        assert (root / "bench" / "baseline_app.py").exists()
    assert not root.exists()


def test_no_revision_is_no_directory() -> None:
    with checkout(None) as root:
        assert root is None
