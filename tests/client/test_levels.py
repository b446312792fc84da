"""The client's bot levels are the server's (bots/levels.py): the client imports nothing of the
server, so its copy is checked here."""

from __future__ import annotations

import hearts_client

from bots.levels import DEFAULT_LEVEL, level_names


def test_the_client_names_the_servers_levels() -> None:
    assert list(hearts_client.LEVELS) == level_names()
    assert hearts_client.DEFAULT_LEVEL == DEFAULT_LEVEL
