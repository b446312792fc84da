"""Parsing our own source in tests, safely beside background threads.

CPython 3.11 keeps the AST constructor's recursion depth per interpreter, not per thread, so an
``ast.parse`` here while another thread builds an AST (a background thread of an earlier test's
app logging a traceback: 3.11's traceback formatting parses the failing line) can fail with a
spurious ``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905; seen
in this suite under load). The source is ours and parses; a second try gives its tree.
"""

from __future__ import annotations

import ast

TRIES = 5


def parse_python(source: str) -> ast.Module:
    for _ in range(TRIES - 1):
        try:
            return ast.parse(source)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc):
                raise
    return ast.parse(source)
