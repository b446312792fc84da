"""URL rules whose URL builders are compiled once per process, not once per app.

Werkzeug compiles two Python functions per rule (``url_for``'s builders, from an AST) when a rule
is added to an app's map: ~140 rules, 0.03 s of CPU per app, a third of building one. A
``hearts serve`` worker builds one app, but the test suite builds about a thousand. A builder
depends only on the rule's parsed parts (its ``_trace``) and whether unknown arguments are
appended, and it reads the rule's converters through its ``self`` when called, so rules with the
same path share one function (each still bound to its own rule). Rules with defaults, whose
builders fold converted default values in, are compiled as werkzeug does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from flask import Flask
from werkzeug.routing import Rule


class SharedBuilderRule(Rule):
    """A werkzeug Rule whose compiled builders are shared by every rule of the same path."""

    _builders: ClassVar[dict[tuple[Any, ...], Callable[..., tuple[str, str]]]] = {}

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        if self.defaults:
            return super()._compile_builder(append_unknown)
        key = (self.rule, tuple(self._trace), append_unknown)
        builder = self._builders.get(key)
        if builder is None:
            builder = self._builders[key] = super()._compile_builder(append_unknown)
        return builder


class HeartsFlask(Flask):
    url_rule_class = SharedBuilderRule
