"""Which Redis the service uses: no silent fallback to memory, and cluster URLs."""

from __future__ import annotations

import argparse

import pytest
import redis
import redis.cluster

from service.cli.serve import add_parser
from service.store import redis_server
from service.store.event_store import RedisEventStore


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["serve", *argv])


@pytest.fixture
def no_redis_anywhere(monkeypatch, tmp_path):
    """No REDIS_URL and no redis-server on PATH."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("HEARTS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(redis_server.shutil, "which", lambda name: None)


def test_without_redis_server_the_embedded_default_refuses(no_redis_anywhere, tmp_path):
    with pytest.raises(redis_server.NoRedis, match="REDIS_URL"):
        redis_server.start(tmp_path)


def test_serve_without_redis_refuses_to_start_and_says_why(no_redis_anywhere, capsys):
    args = _serve_args()
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert "no Redis to use" in err and "redis-server" in err and "--ephemeral" in err


def test_serve_ephemeral_with_a_redis_url_is_refused(monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    args = _serve_args("--ephemeral")
    assert args.func(args) == 2
    assert "exclude" in capsys.readouterr().err


def test_ephemeral_says_loudly_that_nothing_survives(capsys):
    assert redis_server.ephemeral().url == redis_server.FAKE_URL
    assert "NOTHING SURVIVES A RESTART" in capsys.readouterr().err


def test_a_cli_command_without_redis_exits_2(no_redis_anywhere, capsys):
    from service.cli.connection import UNUSABLE, open_store

    with pytest.raises(SystemExit) as exit_, open_store():
        pass
    assert exit_.value.code == UNUSABLE
    assert "no Redis to use" in capsys.readouterr().err


def test_a_cluster_url_gives_a_cluster_client_and_partitions_span_every_master(
    redis_cluster, key_prefix
):
    client = redis_server.client_for(redis_cluster.url)
    try:
        assert isinstance(client, redis.cluster.RedisCluster)
        assert redis_server.is_cluster(client)
        store = RedisEventStore(client, prefix=key_prefix)
        # The 16 partitions hash to slots of all three masters.
        masters = {
            redis_cluster.master_of_slot(client.keyslot(store.log_key(p))) for p in range(16)
        }
        assert len(masters) == 3
    finally:
        client.close()


def test_a_single_server_url_gives_a_plain_client(request):
    client = redis_server.client_for(request.getfixturevalue("redis_server"))
    assert isinstance(client, redis.Redis) and not redis_server.is_cluster(client)
    client.close()
