"""The client's typed bodies (clients/python/src/hearts_client/models.py) say, field by field and
type by type, what the domain's view types (domain/views.py) declare.

The client is its own package and imports nothing of the server, so its models are written out
there; this test is what keeps them the views' copy: a view field added, renamed or retyped in the
domain fails here, naming the field, until the client's model says the same.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, get_args, get_origin

import pytest
from hearts_client import models

from domain.cards import Card
from domain.rules import RuleOptions
from domain.views import (
    VIEWS,
    ClockView,
    Contribution,
    NextDeal,
    Play,
    SeatClock,
    SeatSummary,
    ShotView,
    TrickView,
)
from domain.wire import WireField, is_structure, item_of, json_fields, optional_of

# The client's model of each view structure (the client keeps its own names).
STRUCTURES: dict[type, type] = {
    Play: models.PlayedCard,
    TrickView: models.Trick,
    SeatSummary: models.SeatPublic,
    SeatClock: models.SeatClock,
    ClockView: models.Clock,
    Contribution: models.Contribution,
    NextDeal: models.NextDeal,
    ShotView: models.Shot,
}


def client_type(tp: Any) -> Any:
    """What the client's model should say for a view field of the domain's type ``tp``."""
    inner = optional_of(tp)
    if inner is not None:
        return client_type(inner) | None
    inner = item_of(tp)
    if inner is not None:
        return list[client_type(inner)]  # type: ignore[misc]
    if tp is Card:
        return str
    if tp is RuleOptions:
        return dict[str, Any]
    if is_structure(tp):
        return STRUCTURES[tp]
    return tp


def differences(model: type, declared: tuple[WireField, ...]) -> list[str]:
    """Each way ``model`` differs from the fields the domain declares, in words."""
    hints = typing.get_type_hints(model)
    wanted = {f.name: client_type(f.type) for f in declared}
    out = [
        f"models.{model.__name__} lacks {name!r}: the domain declares it ({_shown(tp)})"
        for name, tp in wanted.items()
        if name not in hints
    ]
    out += [
        f"models.{model.__name__} has {name!r}, which the domain's view does not declare"
        for name in hints
        if name not in wanted
    ]
    out += [
        f"models.{model.__name__}[{name!r}] is {_shown(hints[name])}, the domain's view says "
        f"{_shown(tp)}"
        for name, tp in wanted.items()
        if name in hints and not _same(hints[name], tp)
    ]
    return out


def _same(a: Any, b: Any) -> bool:
    if get_origin(a) is Literal or get_origin(b) is Literal:
        return get_origin(a) is get_origin(b) and set(get_args(a)) == set(get_args(b))
    if get_args(a) or get_args(b):
        args_a, args_b = get_args(a), get_args(b)
        return (
            _origin(a) == _origin(b)
            and len(args_a) == len(args_b)
            and all(_same(x, y) for x, y in zip(args_a, args_b, strict=True))
        )
    return a == b


def _origin(tp: Any) -> Any:
    origin = get_origin(tp)
    return typing.Union if origin is types.UnionType else origin


def _shown(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_the_clients_view_models_are_the_domains_views(name: str) -> None:
    assert differences(getattr(models, name), json_fields(*VIEWS[name])) == []


@pytest.mark.parametrize("structure", list(STRUCTURES), ids=lambda s: s.__name__)
def test_the_clients_models_of_the_views_parts_are_the_domains(structure: type) -> None:
    assert differences(STRUCTURES[structure], json_fields(structure)) == []


def test_a_field_the_client_lacks_or_types_otherwise_is_named() -> None:
    declared = json_fields(*VIEWS["PublicView"])
    extra = WireField("best_streak", "best_streak", int, None, False)
    retyped = tuple(
        WireField(f.name, f.attr, str, f.doc, f.flatten) if f.name == "hand_number" else f
        for f in declared
    )
    assert differences(models.PublicView, (*declared, extra)) == [
        "models.PublicView lacks 'best_streak': the domain declares it (int)"
    ]
    assert differences(models.PublicView, retyped) == [
        "models.PublicView['hand_number'] is int, the domain's view says str"
    ]
