"""Hypothesis is seeded in CI and exploring locally (issue 10, defect 4)."""

from __future__ import annotations

import os

from hypothesis import settings


def test_ci_profile_is_derandomized_and_prints_blobs() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize is True
    assert ci.print_blob is True
    assert settings.get_profile("dev").derandomize is False


def test_no_profile_has_a_deadline() -> None:
    # An example's time on a busy machine is not what any property here is about.
    assert settings.get_profile("ci").deadline is None
    assert settings.get_profile("dev").deadline is None


def test_the_profile_in_use_follows_the_ci_variable() -> None:
    wanted = os.environ.get("HYPOTHESIS_PROFILE") or (
        "ci" if os.environ.get("CI") == "true" else "dev"
    )
    assert settings.default.derandomize is settings.get_profile(wanted).derandomize
