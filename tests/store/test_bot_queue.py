"""The bots' due queue (service/store/bot_queue.py) on fakeredis, a redis-server and a cluster:
how long until the first game is due, which the background runner sleeps for."""

from __future__ import annotations

from service.store.bot_queue import BotQueue


def test_next_due_is_none_empty_then_the_first_games_delay(redis_client, key_prefix):
    queue = BotQueue(redis_client, key_prefix)
    assert queue.next_due_ms() is None
    queue.hand_over("g1")
    assert queue.next_due_ms() == 0  # handed over: due now
    assert queue.take(lease_ms=60_000) == "g1"
    assert 59_000 <= queue.next_due_ms() <= 60_000  # leased: due when the lease ends
    queue.requeue("g1", delay_ms=400)
    assert 300 <= queue.next_due_ms() <= 400  # paced: due after its delay
    queue.hand_over("g2")
    assert queue.next_due_ms() == 0  # the first of them
    queue.done("g1")
    queue.done("g2")
    assert queue.next_due_ms() is None
