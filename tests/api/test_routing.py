"""The app's URL rules share their compiled builders across apps (service/api/routing.py) and
build the URLs werkzeug's own rules build."""

from __future__ import annotations

import fakeredis
from flask import Flask
from werkzeug.routing import Map, Rule

from service.api.factory import create_app
from service.api.routing import SharedBuilderRule
from service.settings import Settings


def _app(prefix: str) -> Flask:
    settings = Settings(key_prefix=prefix, bot_runner=False, sweep_on_start=False)
    return create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))


def _values(rule: Rule) -> dict[str, object]:
    return {
        name: 7 if type(rule._converters[name]).__name__ == "IntegerConverter" else "a b/é"
        for name in rule.arguments
    }


def test_every_rule_builds_what_werkzeugs_own_rule_builds():
    first, second = _app("routing-1"), _app("routing-2")
    plain = Map()
    for rule, again in zip(first.url_map.iter_rules(), second.url_map.iter_rules(), strict=True):
        assert isinstance(rule, SharedBuilderRule)
        own = Rule(rule.rule, endpoint=rule.endpoint, defaults=rule.defaults, methods=rule.methods)
        plain.add(own)
        values = _values(rule)
        for unknown in (False, True):
            extra = {"q": "x y"} if unknown else {}
            assert rule.build({**values, **extra}, unknown) == own.build(
                {**values, **extra}, unknown
            )
        if not rule.defaults:
            assert rule._build.__func__ is again._build.__func__  # compiled once
            assert rule._build.__self__ is rule and again._build.__self__ is again


def test_a_url_is_built_with_the_apps_own_rule():
    app = _app("routing-3")
    with app.test_request_context():
        urls = {r.endpoint: r for r in app.url_map.iter_rules()}
        static = urls["static"]
        assert app.url_for("static", filename="a b.css") == static.rule.replace(
            "<path:filename>", "a%20b.css"
        )
