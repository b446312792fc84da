"""OpenAPI links: where a response leads next (create -> join -> pass/play), so generated clients
and stateful testers (schemathesis) can follow a game the way a player does."""

from __future__ import annotations

from typing import Any

GAME = "/api/v1/games/{game_id}"


def _ref(path: str, method: str) -> str:
    # A JSON pointer into paths: '/' in a path is written '~1'.
    return "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method


def _link(path: str, method: str, description: str, game_id: str, **more: Any) -> dict[str, Any]:
    return {
        "operationRef": _ref(path, method),
        "description": description,
        "parameters": {"game_id": game_id},
        **more,
    }


def _cards(source: str, count: int) -> list[str]:
    return [f"{source}/{i}" for i in range(count)]


AFTER_CREATE = {
    "Join": _link(GAME + "/seats", "post", "Take a seat", "$response.body#/id"),
    "View": _link(GAME, "get", "The game's public view", "$response.body#/id"),
}

AFTER_JOIN = {
    "JoinNext": _link(
        GAME + "/seats", "post", "Another player takes a seat", "$request.path.game_id"
    ),
    "View": _link(GAME, "get", "Your seat's view (with your token)", "$request.path.game_id"),
    "Pass": _link(
        GAME + "/pass",
        "post",
        "Pass the first cards of your hand (with your token)",
        "$request.path.game_id",
        requestBody={"cards": _cards("$response.body#/view/legal_cards", 3)},
    ),
}

AFTER_MOVE = {
    "View": _link(GAME, "get", "Your seat's view", "$request.path.game_id"),
    "Play": _link(
        GAME + "/play",
        "post",
        "Play the first legal card",
        "$request.path.game_id",
        requestBody={"card": "$response.body#/view/legal_cards/0"},
    ),
}
