"""The JSON form of a typed structure, read from its declaration and written nowhere else.

A view (``domain/views.py``) is a frozen dataclass whose fields say their type; ``to_json`` turns
one into the dict the API sends, ``from_json`` reads that dict back, and ``wire_fields`` lists
the fields as the JSON names them, for the API's schema (``service/api/schemas.py`` generates
its view schemas from it) and the client's typed bodies (``tests/client/test_models.py`` checks
them against it). A field is declared once, with :func:`wire` when its JSON name differs, it
carries a description for the API document, or its fields belong to the enclosing object.

What a type becomes: ``int``, ``float``, ``str``, ``bool``, a ``Literal`` and ``dict[str, Any]``
as they are; a ``Card`` its text (``"QS"``); an enum its value; ``X | None`` null or ``X``;
``tuple[X, ...]`` a list; a dataclass or ``NamedTuple`` an object of its fields;
``RuleOptions`` its ``to_dict``.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

from .cards import Card
from .rules import RuleOptions

# The keys of a dataclass field's metadata that this module reads (set them with ``wire``).
_NAME, _DOC, _FLATTEN = "wire_name", "wire_doc", "wire_flatten"

Encoder = Callable[[Any], Any]


def wire(
    name: str | None = None,
    *,
    doc: str | None = None,
    flatten: bool = False,
    default: Any = dataclasses.MISSING,
) -> Any:
    """A dataclass field as JSON shows it: under ``name`` (else the attribute's), described by
    ``doc`` in the API document, or with ``flatten`` its own fields in the enclosing object."""
    metadata = {_NAME: name, _DOC: doc, _FLATTEN: flatten}
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True, slots=True)
class WireField:
    name: str  # in JSON
    attr: str  # in Python
    type: Any  # the resolved annotation
    doc: str | None
    flatten: bool  # a structure whose fields are the enclosing object's


def is_structure(tp: Any) -> bool:
    """A dataclass or a NamedTuple: an object in JSON."""
    return isinstance(tp, type) and (dataclasses.is_dataclass(tp) or _is_named_tuple(tp))


def _is_named_tuple(tp: type) -> bool:
    return issubclass(tp, tuple) and hasattr(tp, "_fields")


@functools.cache
def wire_fields(cls: type) -> tuple[WireField, ...]:
    """``cls``'s fields in declaration order, as JSON names them (flattened ones not expanded)."""
    hints = typing.get_type_hints(cls)
    if _is_named_tuple(cls):
        return tuple(WireField(n, n, hints[n], None, False) for n in cls._fields)
    out = []
    for f in dataclasses.fields(cls):
        meta = f.metadata
        name = meta.get(_NAME) or f.name
        out.append(
            WireField(name, f.name, hints[f.name], meta.get(_DOC), meta.get(_FLATTEN, False))
        )
    return tuple(out)


def json_fields(*parts: type) -> tuple[WireField, ...]:
    """The fields of the one JSON object that ``parts`` make together, flattened ones expanded."""
    out: list[WireField] = []
    for cls in parts:
        for f in wire_fields(cls):
            out.extend(json_fields(f.type) if f.flatten else (f,))
    names = [f.name for f in out]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise TypeError(f"{[p.__name__ for p in parts]}: {duplicated} declared twice")
    return tuple(out)


def optional_of(tp: Any) -> Any | None:
    """``X`` of ``X | None``; None if ``tp`` is not optional."""
    if get_origin(tp) in (Union, types.UnionType):
        args = get_args(tp)
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return rest[0]
        raise TypeError(f"{tp}: only X | None is a JSON type")
    return None


def item_of(tp: Any) -> Any | None:
    """``X`` of ``tuple[X, ...]``; None if ``tp`` is not one."""
    if get_origin(tp) is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
        raise TypeError(f"{tp}: only tuple[X, ...] is a JSON list")
    return None


def _same(value: Any) -> Any:
    return value


def _plain(tp: Any) -> bool:
    """A type whose values JSON holds as they are."""
    return (
        tp in (int, float, str, bool, Any)
        or get_origin(tp) is Literal
        or get_origin(tp) is dict
        or tp is dict
    )


@functools.cache
def encoder(tp: Any) -> Encoder:
    """The function from a value of type ``tp`` to its JSON form, compiled once per type to the
    code one would write by hand (a dict display per structure, a comprehension per list): the
    views are encoded on every read and every pushed notice."""
    source = f"def encode(v):\n    return {_expression(tp, 'v', 0)}\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<wire encoder of {tp}>", "exec"), namespace)  # noqa: S102
    return namespace["encode"]


def _expression(tp: Any, src: str, depth: int) -> str:
    """Python source for the JSON form of ``src``, an expression of type ``tp``."""
    if _plain(tp):
        return src
    inner = optional_of(tp)
    if inner is not None:
        some = _expression(inner, src, depth)
        return src if some == src else f"(None if {src} is None else {some})"
    inner = item_of(tp)
    if inner is not None:
        each = _expression(inner, f"_x{depth}", depth + 1)
        return f"list({src})" if each == f"_x{depth}" else f"[{each} for _x{depth} in {src}]"
    if tp is Card:
        return f"str({src})"
    if tp is RuleOptions:
        return f"{src}.to_dict()"
    if isinstance(tp, type) and issubclass(tp, Enum):
        return f"{src}.value"
    if is_structure(tp):
        items = []
        for i, f in enumerate(wire_fields(tp)):
            read = f"{src}[{i}]" if _is_named_tuple(tp) else f"{src}.{f.attr}"
            value = _expression(f.type, read, depth)
            items.append(f"**{value}" if f.flatten else f"{f.name!r}: {value}")
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"{tp}: no JSON form")


def to_json(value: Any) -> Any:
    """``value`` (a dataclass or NamedTuple of the types above) as JSON holds it."""
    return encoder(type(value))(value)


@functools.cache
def _decoder(tp: Any) -> Encoder:
    if _plain(tp):
        return _same
    inner = optional_of(tp)
    if inner is not None:
        some = _decoder(inner)
        return lambda v: None if v is None else some(v)
    inner = item_of(tp)
    if inner is not None:
        each = _decoder(inner)
        return lambda v: tuple(each(x) for x in v)
    if tp is Card:
        return Card
    if tp is RuleOptions:
        return lambda v: RuleOptions.from_dict(v, recorded=True)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    if is_structure(tp):
        return _structure_decoder(tp)
    raise TypeError(f"{tp}: no JSON form")


def _structure_decoder(cls: type) -> Encoder:
    plan = [(f.name, f.attr, _decoder(f.type), f.flatten) for f in wire_fields(cls)]

    def decode(data: dict[str, Any]) -> Any:
        values = {
            attr: dec(data) if flatten else dec(data[name])
            for name, attr, dec, flatten in plan
            if flatten or name in data
        }
        return cls(**values)

    return decode


def from_json(cls: type, data: Any) -> Any:
    """The ``cls`` whose JSON form is ``data`` (a field left out takes its default)."""
    return _decoder(cls)(data)
