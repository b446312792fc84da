"""The log's signing key: made once in its file (0600), the same for every process after; the
settings that name it, and the ones refused."""

from __future__ import annotations

import stat
from concurrent.futures import ThreadPoolExecutor

import fakeredis
import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from service.app.transparency import KEY_FILE, build_log, load_or_create_key
from service.settings import ConfigError, Settings
from service.store.event_store import RedisEventStore


def _public(key) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def test_the_key_is_made_once_and_kept(tmp_path) -> None:
    path = tmp_path / "sub" / "log-key.pem"
    with ThreadPoolExecutor(8) as pool:  # workers starting together agree on one key
        keys = list(pool.map(lambda _: load_or_create_key(path), range(8)))
    assert len({_public(k) for k in keys}) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _public(load_or_create_key(path)) == _public(keys[0])
    assert [p.name for p in path.parent.iterdir()] == ["log-key.pem"]  # no temporary left


def test_the_settings_choose_the_key_and_refuse_bad_names(tmp_path) -> None:
    store = RedisEventStore(fakeredis.FakeRedis(), prefix="k")
    in_dir = build_log(store, Settings(data_dir=str(tmp_path)), injected=True)
    assert (tmp_path / KEY_FILE).exists()
    again = build_log(store, Settings(data_dir=str(tmp_path)), injected=False)
    assert again.vkey == in_dir.vkey
    named = build_log(store, Settings(log_key_file=str(tmp_path / "k.pem")), injected=True)
    assert named.vkey != in_dir.vkey
    origin = build_log(store, Settings(log_origin="hearts.example/log"), injected=True)
    assert origin.vkey.startswith("hearts.example/log+")
    for bad in (Settings(log_origin="has space"), Settings(log_witnesses="not-a-vkey")):
        with pytest.raises(ConfigError):
            build_log(store, bad, injected=True)


def test_the_environment_names_the_settings() -> None:
    settings = Settings.from_env(
        {
            "HEARTS_LOG_ORIGIN": "hearts.example/log",
            "HEARTS_LOG_KEY_FILE": "/srv/k.pem",
            "HEARTS_LOG_WITNESSES": "a,b",
        }
    )
    assert (settings.log_origin, settings.log_key_file, settings.log_witnesses) == (
        "hearts.example/log",
        "/srv/k.pem",
        "a,b",
    )
