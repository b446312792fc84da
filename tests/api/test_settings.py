"""Settings are read once from the environment, and handed to child processes intact."""

from __future__ import annotations

import pytest

from service.api.factory import create_app
from service.settings import ConfigError, Settings


def test_every_setting_comes_from_its_variable() -> None:
    settings = Settings.from_env(
        {
            "HEARTS_PORT": "9001",
            "HEARTS_WORKER_CLASS": "gthread",
            "PROMETHEUS_MULTIPROC_DIR": "/tmp/m",
            "NO_COLOR": "1",
            "HEARTS_SWEEP_ON_START": "0",
        }
    )
    assert (settings.port, settings.worker_class, settings.metrics_dir) == (
        9001,
        "gthread",
        "/tmp/m",
    )
    assert settings.no_color is True and settings.sweep_on_start is False
    assert Settings.from_env({}).sweep_on_start is None  # the caller's default


def test_a_bad_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="HEARTS_PORT"):
        Settings.from_env({"HEARTS_PORT": "zero"})


def test_the_analysis_budget_is_a_setting_of_two_deals_or_more() -> None:
    assert Settings.from_env({}).analysis_samples == 200
    assert Settings.from_env({"HEARTS_ANALYSIS_SAMPLES": "24"}).analysis_samples == 24
    for bad in ("1", "0", "-5", "many"):
        with pytest.raises(ConfigError, match="HEARTS_ANALYSIS_SAMPLES"):
            Settings.from_env({"HEARTS_ANALYSIS_SAMPLES": bad})


def test_a_child_process_reads_back_the_same_settings() -> None:
    settings = Settings(
        redis_url="redis://127.0.0.1:1/0",
        key_prefix="p",
        sweep_on_start=True,
        projector_in_process=True,
        metrics_dir="/tmp/x",
        no_color=False,
        analysis_samples=24,
    )
    assert Settings.from_env(settings.child_env()) == settings


def test_the_production_app_has_no_bench_route(redis_client) -> None:
    app = create_app(Settings(key_prefix="nobench"), redis=redis_client)
    assert not any("bench" in rule.rule for rule in app.url_map.iter_rules())
