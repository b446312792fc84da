"""What each write request stores in Redis, in KiB: the cost it spends of its client's storage
budget (HEARTS_RATE_LIMIT_STORAGE, issue 42; docs/budget.md, "One storage budget").

Every figure was measured the same way (2026-11-28, ``hearts serve`` with two workers and the
rate limits off, on a throwaway redis-server): Redis ``used_memory`` after a batch of the same
request minus before, settled 1.5 s, divided by the batch (20 to 50 requests; all-bot games one
at a time to their end). A figure is rounded up: a cost a little above the bytes keeps the
bound, one below lets a flood of that path past it. Measured again with
``python -m bench.client_budget --paths mix`` (bench/README.md, "Issue 42").
"""

from __future__ import annotations

import math
from typing import Any

from domain.rules import InvalidRules, RuleOptions
from service.api.schemas import MAX_DEALS

# A waiting game, seats open (6.7-6.9 KB a create).
CREATE = 7
# A game with a bot seated is dealt as soon as its open seat is taken: create and that join
# were 14.9 KB (a create alone 6.7 KB), so 12 at the create and JOIN at the join.
CREATE_WITH_BOT = 12
# A seat taken: 0.4-3.2 KB, and the join that fills the table deals (6.2 KB); four joins of a
# game of open seats were 10.9 KB.
JOIN = 3
# A preset deal: 100 deals added ~33 KB to a create (40.4 KB against 6.9 KB): ~340 B each.
DEAL_BYTES = 340
# A game of bots only, played to its end at full speed: 7 KiB and ~73 KiB a hand (a one-hand
# game 85 KB; a 100-point game of 11 hands 819 KB). Hands of a game without a hand limit: a
# 100-point game took 11; ~9 points a hand to the leader.
BOT_HAND = 73
POINTS_A_HAND = 9
# A command of a seat (pass, play, moon, a seat taken back): its own event and the bots' moves
# it sets off (one each at most before the person's next turn). ~1.2 KiB an event in a game of
# bots only (64 events a hand for the 73 KiB above), but a one-hand game played by a person
# against three bots was ~108 KiB (``bench.client_budget --paths play``: 3,128 KiB for 29
# games): 15 for the create and the join, ~6.6 for each of its 14 commands, so 1.7 a move.
EVENT = 1.7
# A registered player (1.0 KB), a challenge sent (1.6 KB), a tournament entry (0.1 KB).
REGISTER = 1
CHALLENGE = 2
ENTRY = 1
# A seek (14.1 KB each: twenty seeks of twenty players matched as five dealt games).
SEEK = 14
# A hand's analysis, kept (service/store/analyses.py, KEPT_SECONDS): 18.9-21.0 KB of JSON for
# three one-hand games of bots at the default budget, a string of that length in Redis.
ANALYSIS = 24
# A tournament created (its log's first entries; its games are the entrants' to pay).
TOURNAMENT = 10
# An import keeps its events hot until the archiver's next pass: ~1.7 B of Redis a byte of
# the export (a 33 KB export of a one-hand game imported as 55 KB).
IMPORT_PER_BODY_BYTE = 1.7
# Any other request counted by the budget.
MINIMUM = 1


def kib(n_bytes: float) -> int:
    return max(MINIMUM, math.ceil(n_bytes / 1024))


def bot_game(rules: RuleOptions) -> int:
    """A game of bots only, to its end: its hand limit's hands, or as many as its score limit
    takes."""
    hands = math.ceil(rules.score_limit / POINTS_A_HAND) + 1
    if rules.hand_limit is not None:
        hands = min(hands, rules.hand_limit)
    return CREATE + BOT_HAND * max(1, hands)


def create(body: Any) -> int:
    """A create's cost from its body (as the app's hook parsed it): the game, its bots and
    its preset deals."""
    if not isinstance(body, dict):
        return CREATE
    seats = body.get("seats")
    deals = body.get("deals")
    cost = CREATE
    if isinstance(seats, list) and seats and all(s is not None for s in seats):
        try:
            cost = bot_game(RuleOptions.from_dict(body.get("rules")))
        except (InvalidRules, TypeError, ValueError):  # the view answers 422; counted as one
            cost = bot_game(RuleOptions())
    elif isinstance(seats, list) and any(isinstance(s, dict) for s in seats):
        cost = CREATE_WITH_BOT
    if isinstance(deals, list):
        cost += kib(min(len(deals), MAX_DEALS) * DEAL_BYTES)
    return cost


def command(bots: int) -> int:
    """A seat's command in a game where ``bots`` other seats are played by bots."""
    return max(MINIMUM, round(EVENT * (1 + bots)))


def imported(content_length: int | None) -> int:
    return kib((content_length or 0) * IMPORT_PER_BODY_BYTE)
