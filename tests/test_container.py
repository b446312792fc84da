"""The image built and the compose stack run (issue 43): docker-compose.yml's services (Redis
with its append-only file on a volume, the API, a projector) on the image scripts/build-image
built with podman, run by podman-compose. A game played through the composed API survives a
SIGKILL of the API container, then of the Redis container (removed and made again on its
volume), and plays on to its end; the containers run as the unprivileged user.

The image is built outside the test (``scripts/build-image``, which ``.ci/run`` runs first):
without podman, podman-compose or the image this skips with the reason, unless
``HEARTS_REQUIRE_CONTAINER=1`` (set by ``.ci/run``), where it fails."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hearts_client import HeartsClient

from tests import podman_stack
from tests.podman_stack import Stack, podman

REQUIRE_ENV = "HEARTS_REQUIRE_CONTAINER"


@pytest.fixture
def stack():
    reason = podman_stack.missing()
    if reason is not None:
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set, but {reason}", pytrace=False)
        pytest.skip(reason)
    stack = Stack()
    try:
        stack.up()
        stack.wait_ready()
        yield stack
    finally:
        stack.down()
    assert (
        podman(
            "ps", "--all", "--quiet", "--filter", f"label=io.podman.compose.project={stack.project}"
        )
        == ""
    )


def all_events(hearts: HeartsClient, game_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        page = hearts.events(game_id, after=after)
        events += page["events"]
        if not page["more"]:
            return events
        after = page["next_after"]


def ids(event: dict[str, Any]) -> tuple:
    return event["seq"], event["type"], event["command_id"], event["time"]


def move(me) -> None:
    view = me.view
    if view["phase"] == "passing":
        me.pass_cards(view["legal_cards"][: view["cards_to_pass"]])
    elif view["phase"] == "moon_choice":
        me.choose_moon("add_to_others")
    else:
        me.play(view["legal_cards"][0])


def test_a_game_survives_the_api_and_redis_containers_killed(stack):
    # The image's user, in the running containers: not root.
    for service in ("api", "redis"):
        assert podman("exec", stack.container(service), "id", "-u") == "10001"
    # Redis keeps its data in an append-only file on the compose file's volume.
    redis = stack.container("redis")
    assert podman("exec", redis, "redis-cli", "config", "get", "appendonly").split() == [
        "appendonly",
        "yes",
    ]
    mounts = podman(
        "inspect", "--format", "{{range .Mounts}}{{.Name}}:{{.Destination}} {{end}}", redis
    )
    assert f"{stack.project}_redis-data:/data" in mounts.split()

    # The compose file's health checks pass (podman schedules none without systemd: run here).
    for service in ("redis", "api", "projector"):
        stack.wait_healthy(service)

    with HeartsClient(stack.url, retries=10) as hearts:
        # One open seat and three bots; a score limit of 1 ends the game after the first hand.
        game = hearts.create_game(
            seats=[None, "random", "random", "random"], rules={"score_limit": 1}
        )
        me = hearts.join(game["id"], "ann")
        for _ in range(4):  # the pass and a few tricks
            me.wait_for_turn()
            move(me)
        me.wait_for_turn()  # the bots have answered: nothing moves until this seat does
        before = all_events(hearts, game["id"])
        assert len(before) > 10

        # The API's container, killed and started again.
        podman("kill", stack.container("api"))
        podman("start", stack.container("api"))
        stack.wait_ready()
        assert all_events(hearts, game["id"]) == before

        # Redis killed, its container removed and made again by compose, on the same volume.
        podman("kill", redis)
        podman("rm", "--force", redis)
        stack.up("redis")
        stack.wait_ready()
        assert all_events(hearts, game["id"]) == before

        # And the game plays on to its end.
        me.refresh()
        while me.wait_for_turn()["phase"] != "finished":
            move(me)
        after = all_events(hearts, game["id"])
        # The same events (a finished game's public log reveals the hands' seeds: not the payloads).
        assert [ids(event) for event in after[: len(before)]] == [ids(event) for event in before]
        assert after[-1]["type"] == "GameEnded"
        assert me.view["winners"]
