"""The web's bot levels agree with bots/levels.py, the one place they are defined: the lobby's
seat choices, its default, and the level shown by each strategy's seat."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bots.levels import DEFAULT_LEVEL, LEVELS, level_names, level_of

UI = Path(__file__).resolve().parents[2] / "service" / "web" / "static" / "ui.js"


def _constant(source: str, name: str) -> str:
    found = re.search(rf"export const {name} = (.+?);\n", source)
    assert found, name
    return found.group(1)


def test_the_web_offers_the_levels_and_defaults_to_the_second_strongest() -> None:
    source = UI.read_text()
    assert json.loads(_constant(source, "LEVELS")) == level_names()
    assert json.loads(_constant(source, "DEFAULT_LEVEL")) == DEFAULT_LEVEL


def test_the_web_shows_the_level_each_strategy_plays_at() -> None:
    found = re.search(r"const STRATEGY_LEVEL = \{(.+?)\};", UI.read_text())
    assert found
    pairs = dict(re.findall(r"(\w+): \"(\w+)\"", found.group(1)))
    strategies = {level.spec for level in LEVELS if ":" not in level.spec}
    assert set(pairs) == strategies
    assert all(level_of(name) == level for name, level in pairs.items())


def test_the_lobby_offers_levels_and_the_table_shows_them(browser, web_server: str) -> None:
    from playwright.sync_api import expect

    from tests.web.console import watch

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = watch(page)
    page.goto(web_server + "/")
    choice = page.locator("select[name='seat1']")
    options = choice.locator("option").all_inner_texts()
    assert options[: len(LEVELS)] == [f"bot: {name}" for name in level_names()]
    assert choice.input_value() == DEFAULT_LEVEL
    page.locator("select[name='seat2']").select_option("master")
    page.get_by_label("Your name").fill("lev")
    page.get_by_role("button", name="Create and sit down").click()
    expect(page.locator(".hand .card")).to_have_count(13)
    tags = page.locator(".seat .name .tag.level")
    expect(tags).to_have_count(3)
    assert sorted(tags.all_inner_texts()) == ["master", "strong", "strong"]
    assert errors == []
