"""Every problem an operation's code can raise is documented on that operation (issue 24).

Not fuzzing luck: the exceptions each view can raise are read from the code. From the view
function, every call into our packages is followed (functions, methods through ``self``, the
declared types of parameters, attributes and locals, constructors, tables of functions), and
every ``raise`` collected, minus what an enclosing ``except`` catches without re-raising. Each
exception is turned into its status by the server's own mapping (``problems.to_problem``; a
``Problem`` by its code or ``status=``), and the OpenAPI document must name that status on the
operation. Operations with a body must also name what the body checks answer. An endpoint
added without ``@documented(blp, <its statuses>)`` fails here.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import inspect
import logging
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import fakeredis
import pytest

from service.api import problems
from service.api.factory import create_app
from service.settings import Settings
from tests.python_source import parse_python

OURS = ("service", "domain", "bots", "projections")


@dataclass(frozen=True)
class Raised:
    what: str  # the exception class, or the problem's code
    status: int | None  # None: not mapped, so a 500 (every operation documents 500)
    where: str  # the function that raises it


def _ours(obj: object) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in OURS


@functools.cache
def status_of(cls: type[BaseException]) -> int | None:
    """What the server answers for an exception of this class (problems.to_problem itself, on
    an instance made without its constructor: the mapping reads the class, not the message)."""
    error = cls.__new__(cls)
    error.args = ("",)
    for name, value in {"detail": "", "message": "", "report": None}.items():
        if name not in type(error).__dict__:
            with contextlib.suppress(AttributeError, TypeError):
                object.__setattr__(error, name, value)
    if not hasattr(error, "code") or isinstance(type(error).__dict__.get("code"), property):
        with contextlib.suppress(AttributeError, TypeError):
            object.__setattr__(error, "code", "bad-request")  # InvalidDeal: a rule's code
    logging.disable(logging.CRITICAL)  # the mapping logs what it does not know: not a bug here
    try:
        problem = problems.to_problem(error)
    except Exception:  # noqa: BLE001 - a class the mapping cannot even read: a bug, a 500
        return None
    finally:
        logging.disable(logging.NOTSET)
    return None if problem.status >= 500 and problem.code == "internal-error" else problem.status


def _definition(key: object, fn: Callable[..., Any]) -> ast.stmt | None:
    """A function's parsed definition, read once for all the operations' walks (each walk
    keeps its own memo: a result cut short by a recursion in one walk must not stand in
    another's)."""
    if key not in _DEFINITIONS:
        try:
            source = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError):
            _DEFINITIONS[key] = None
        else:
            _DEFINITIONS[key] = parse_python(source).body[0]
    return _DEFINITIONS[key]


_DEFINITIONS: dict[object, ast.stmt | None] = {}


class Analysis:
    """The exceptions a function can raise, following calls into our packages."""

    def __init__(self) -> None:
        self.memo: dict[object, frozenset[Raised]] = {}

    def of(self, fn: Callable[..., Any], owner: type | None = None) -> frozenset[Raised]:
        fn = inspect.unwrap(fn)
        key = getattr(fn, "__code__", fn)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = frozenset()  # a recursion stops here
        node = _definition(key, fn)
        if node is None:
            return frozenset()
        if owner is None:
            owner = self._owner(fn)
        scope = _Scope(self, fn, owner, node)
        found = frozenset(scope.visit(node))
        self.memo[key] = found
        return found

    @staticmethod
    def _owner(fn: Callable[..., Any]) -> type | None:
        parts = fn.__qualname__.split(".")
        if len(parts) < 2 or "<locals>" in parts:
            return None
        found = inspect.getmodule(fn)
        for part in parts[:-1]:
            found = getattr(found, part, None)
        return found if isinstance(found, type) else None


class _Scope:
    def __init__(self, analysis: Analysis, fn: Callable, owner: type | None, node: ast.AST):
        self.analysis = analysis
        self.fn = fn
        self.owner = owner
        self.globals = getattr(fn, "__globals__", {})
        self.where = f"{fn.__module__}.{fn.__qualname__}"
        self.types: dict[str, Any] = {}
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.annotation is not None:
                    self._bind(arg.arg, self._annotation(arg.annotation))
        for sub in ast.walk(node):  # locals by what they are assigned (good enough: no reuse)
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                target = sub.targets[0]
                if isinstance(target, ast.Name):
                    self._bind(target.id, self.type_of(sub.value))
            elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                self._bind(sub.target.id, self._annotation(sub.annotation))

    def _bind(self, name: str, kind: Any) -> None:
        if isinstance(kind, type):
            self.types[name] = kind

    def _annotation(self, node: ast.AST) -> Any:
        try:
            return eval(ast.unparse(node), dict(self.globals))  # noqa: S307 - our own source
        except Exception:  # noqa: BLE001 - a union, a generic, a name only typing knows
            return None

    # -- what an expression names ----------------------------------------------------------------

    def resolve(self, node: ast.AST) -> Any:
        """The object an expression names (a module, class, function), if it can be known."""
        if isinstance(node, ast.Name):
            if node.id == "self" and self.owner is not None:
                return self.owner
            if node.id in self.types:
                return self.types[node.id]
            return self.globals.get(node.id, getattr(builtins, node.id, None))
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is None:
                base = self.type_of(node.value)
            if base is None:
                return None
            found = inspect.getattr_static(base, node.attr, None)
            if found is None and isinstance(base, type):
                found = _attribute_type(base, node.attr)
            if isinstance(found, staticmethod | classmethod):
                found = found.__func__
            return found
        return None

    def type_of(self, node: ast.AST) -> Any:
        """The class of an expression's value, if it can be known."""
        if isinstance(node, ast.Call):
            called = self.resolve(node.func)
            if isinstance(called, type):
                return called
            if inspect.isfunction(called):
                returns = called.__annotations__.get("return")
                if isinstance(returns, str):
                    try:
                        returns = eval(returns, dict(called.__globals__))  # noqa: S307
                    except Exception:  # noqa: BLE001
                        return None
                return returns if isinstance(returns, type) else None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value) or self.type_of(node.value)
            if isinstance(base, type):
                return _attribute_type(base, node.attr)
        if isinstance(node, ast.Name) and node.id in self.types:
            return self.types[node.id]
        return None

    # -- the walk ----------------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> set[Raised]:
        if isinstance(node, ast.Try):
            return self._try(node)
        found: set[Raised] = set()
        if isinstance(node, ast.Raise) and node.exc is not None:
            found |= self._raise(node.exc)
        if isinstance(node, ast.Call):
            found |= self._call(self.resolve(node.func))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            table = self.globals.get(node.id)
            if isinstance(table, dict):
                # A table of functions (a dispatch on a command's type): each may be called.
                for value in table.values():
                    if inspect.isfunction(value) and _ours(value):
                        found |= self.analysis.of(value)
        for child in ast.iter_child_nodes(node):
            found |= self.visit(child)
        return found

    def _try(self, node: ast.Try) -> set[Raised]:
        inside: set[Raised] = set()
        for statement in node.body:
            inside |= self.visit(statement)
        for handler in node.handlers:
            reraises = any(isinstance(n, ast.Raise) and n.exc is None for n in ast.walk(handler))
            caught = self._caught(handler.type)
            if not reraises:
                inside = {r for r in inside if not _is_caught(r, caught)}
            for statement in handler.body:
                inside |= self.visit(statement)
        for statement in node.orelse + node.finalbody:
            inside |= self.visit(statement)
        return inside

    def _caught(self, node: ast.AST | None) -> tuple[type, ...]:
        if node is None:
            return (BaseException,)
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        found = tuple(self.resolve(n) for n in items)
        return tuple(c for c in found if isinstance(c, type))

    def _raise(self, exc: ast.AST) -> set[Raised]:
        target = exc.func if isinstance(exc, ast.Call) else exc
        cls = self.resolve(target)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return set()
        if issubclass(cls, problems.Problem) and isinstance(exc, ast.Call):
            return {self._problem(exc)}
        return {Raised(cls.__name__, status_of(cls), self.where)}

    def _problem(self, call: ast.Call) -> Raised:
        code = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None
        status = next((k.value.value for k in call.keywords if k.arg == "status"), None)  # type: ignore[attr-defined]
        if status is None and code in problems.CATALOGUE:
            status = problems.CATALOGUE[code].status
        return Raised(f"Problem({code or '...'})", status or 400, self.where)

    def _call(self, called: Any) -> set[Raised]:
        if isinstance(called, type):
            init = called.__dict__.get("__init__")
            return set(self.analysis.of(init, called)) if init and _ours(called) else set()
        if inspect.isfunction(called) and _ours(called):
            return set(self.analysis.of(called))
        return set()


@functools.cache  # the walks of all the operations ask the same few classes
def _attribute_type(cls: type, name: str) -> Any:
    """The declared class of ``cls().name``: a class annotation, else ``self.name = param`` in
    ``__init__`` with the parameter's annotation."""
    for klass in cls.__mro__:
        if not _ours(klass):
            continue
        module = inspect.getmodule(klass)
        namespace = dict(vars(module)) if module else {}
        annotation = klass.__dict__.get("__annotations__", {}).get(name)
        if annotation is None and "__init__" in klass.__dict__:
            init = klass.__dict__["__init__"]
            try:
                source = textwrap.dedent(inspect.getsource(init))
            except (OSError, TypeError):
                continue
            tree = parse_python(source).body[0]
            assert isinstance(tree, ast.FunctionDef)
            params = {a.arg: a.annotation for a in tree.args.args + tree.args.kwonlyargs}
            for sub in ast.walk(tree):
                if (
                    isinstance(sub, ast.Assign)
                    and isinstance(sub.targets[0], ast.Attribute)
                    and sub.targets[0].attr == name
                    and isinstance(sub.value, ast.Name)
                    and params.get(sub.value.id) is not None
                ):
                    annotation = ast.unparse(params[sub.value.id])
        if annotation is None:
            continue
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)  # noqa: S307 - our own source
            except Exception:  # noqa: BLE001
                return None
        return annotation if isinstance(annotation, type) else None
    return None


def _is_caught(raised: Raised, caught: tuple[type, ...]) -> bool:
    cls = _CLASSES.get(raised.what)
    if cls is None:  # a Problem: caught only by a handler of Problem or a base of it
        return any(issubclass(problems.Problem, c) for c in caught)
    return any(issubclass(cls, c) for c in caught)


def _every_exception_class() -> dict[str, type]:
    found: dict[str, type] = {}
    stack = [BaseException]
    while stack:
        cls = stack.pop()
        if _ours(cls) or cls.__name__ not in found:  # ours win a clash of names
            found[cls.__name__] = cls
        stack.extend(cls.__subclasses__())
    return found


_CLASSES: dict[str, type] = {}

# -- the operations ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app():
    settings = Settings(key_prefix="raised", sweep_on_start=False)
    return create_app(settings, redis=fakeredis.FakeRedis(server=fakeredis.FakeServer()))


@pytest.fixture(scope="module")
def operations(app) -> dict[tuple[str, str], tuple[Callable, dict]]:
    """(method, OpenAPI path) -> (view function, its OpenAPI operation)."""
    _CLASSES.update(_every_exception_class())
    document = app.test_client().get("/api/v1/openapi.json").json
    found = {}
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            operation = document["paths"].get(path, {}).get(method.lower())
            if operation is not None:
                found[(method, path)] = (app.view_functions[rule.endpoint], operation)
    assert len(found) >= 18, sorted(found)
    return found


def _raised(view: Callable) -> set[Raised]:
    return set(Analysis().of(view))


# What the walk finds but cannot happen, each with the reason. The walk over-approximates where
# code dispatches on a value (the decider's table of commands): keep this short and explained.
CANNOT_HAPPEN: dict[tuple[str, str], dict[str, str]] = {
    ("POST", "/api/v1/games"): {
        "GameNotCreated": "reached through decide's table of every command; creating a game "
        "decides CreateGame (and its first Deal on the game it created) only",
        "NotYourSeat": "reached through decide's table; only ResumeSeat raises it",
    },
    ("POST", "/api/v1/games/{game_id}/seats"): {
        "NotYourSeat": "reached through decide's table; a join decides JoinGame (and a Deal)",
    },
    ("POST", "/api/v1/games/{game_id}/seats/{seat}/resume"): {
        "StaleVersion": "GameService.command raises it for an If-Match only; a resume sends none",
    },
    ("POST", "/api/v1/games/import"): {
        "GameNotFound": "Replay._existing reads the imported game only after the store said it "
        "exists (or the append found it there), and games are never deleted",
    },
}


def undocumented(operations: dict[tuple[str, str], tuple[Callable, dict]]) -> list[str]:
    """Each status an operation's code can raise that its OpenAPI operation does not name."""
    missing = []
    for (method, path), (view, operation) in sorted(operations.items()):
        documented = {int(s) for s in operation["responses"] if s.isdigit()}
        exempt = CANNOT_HAPPEN.get((method, path), {})
        raised_here = _raised(view)
        stale = set(exempt) - {r.what for r in raised_here}
        assert not stale, f"{method} {path}: CANNOT_HAPPEN names what is no longer raised: {stale}"
        for raised in sorted(raised_here, key=lambda r: (r.status or 0, r.what)):
            if raised.what in exempt:
                continue
            if raised.status is not None and raised.status not in documented:
                missing.append(
                    f"{method} {path}: {raised.status} ({raised.what}, raised in {raised.where})"
                )
    return missing


def test_every_raised_problem_is_documented_on_its_operation(operations) -> None:
    missing = undocumented(operations)
    assert not missing, "raised but not in the OpenAPI document:\n" + "\n".join(missing)


def test_a_status_left_out_of_the_document_is_named(operations) -> None:
    """The issue's case: an operation whose 409 is left out is caught whatever a fuzzer
    reaches (here the play operation, as if its @documented lacked 409)."""
    play = ("POST", "/api/v1/games/{game_id}/play")
    view, operation = operations[play]
    responses = {k: v for k, v in operation["responses"].items() if k != "409"}
    missing = undocumented({play: (view, {**operation, "responses": responses})})
    assert any(m.startswith("POST /api/v1/games/{game_id}/play: 409 (NotYourTurn") for m in missing)
    assert all(": 409 (" in m for m in missing), missing


def test_what_the_body_checks_answer_is_documented(operations) -> None:
    missing = []
    for (method, path), (_, operation) in sorted(operations.items()):
        documented = {int(s) for s in operation["responses"] if s.isdigit()}
        needed = set(problems.BODY) if "requestBody" in operation else set()
        missing += [f"{method} {path}: {s}" for s in sorted(needed - documented)]
    assert not missing, (
        "the body checks (factory._before, webargs) answer statuses the document omits:\n"
        + "\n".join(missing)
    )


def test_the_analysis_reaches_the_use_cases_and_the_rules(operations) -> None:
    """The walk is deep enough to mean something: what these views raise two or more calls
    down (in the use case, the store, the rules) is found."""
    play = {r.what for r in _raised(operations[("POST", "/api/v1/games/{game_id}/play")][0])}
    assert {"NotYourTurn", "StaleVersion", "TooManyConflicts", "Unauthorized"} <= play, play
    join = {r.what for r in _raised(operations[("POST", "/api/v1/games/{game_id}/seats")][0])}
    assert {"NameReserved", "GameFull", "SeatTaken", "GameNotFound"} <= join, join
    hand = operations[("GET", "/api/v1/games/{game_id}/hands/{number}")][0]
    assert "HandNotFound" in {r.what for r in _raised(hand)}
