"""``hearts replay|audit|export|import`` against a real redis-server; audit exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
import redis

from service.app.hand_records import decode_events, hand_records
from service.app.replay_text import render_hand, wants_colour
from service.cli import main
from service.cli.replay import sse_worker_class
from service.store.event_store import RedisEventStore
from tests.replay.helpers import play_game
from tests.replay.tamper import find, read_raw, tamper


@pytest.fixture
def store(redis_server, key_prefix, monkeypatch) -> RedisEventStore:
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)
    client = redis.Redis.from_url(redis_server)
    yield RedisEventStore(client, prefix=key_prefix)
    client.close()


@pytest.fixture
def game(store) -> str:
    play_game(store, "cli-game", seed="cli")
    return "cli-game"


def test_audit_exit_codes(store, game, capsys):
    assert main(["audit", game]) == 0
    assert "no discrepancies" in capsys.readouterr().out
    assert main(["audit", "no-such-game"]) == 2
    assert "no game" in capsys.readouterr().err
    envelopes = read_raw(store, game)
    i = find(envelopes, "TrickTaken", 7)

    def edit(envs):
        envs[i]["payload"]["winner"] = (envs[i]["payload"]["winner"] + 1) % 4
        return envs

    tamper(store, game, edit, rehash_chain=True)
    assert main(["audit", game]) == 1
    out = capsys.readouterr().out
    assert f"seq {i + 1} [domain]: TrickTaken" in out and "FAIL domain" in out
    assert main(["audit", game, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["discrepancies"][0]["seq"] == i + 1


def test_the_installed_command_exits_non_zero_on_a_discrepancy(store, game, redis_server):
    tamper(store, game, lambda envs: envs[:50] + envs[51:], rehash_chain=False)
    env = {"REDIS_URL": redis_server, "HEARTS_KEY_PREFIX": store.prefix, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "audit", game],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "seq gap" in done.stdout


def test_export_import_and_audit_a_file(store, game, tmp_path, capsys):
    path = tmp_path / "game.json"
    assert main(["export", game, "-o", str(path)]) == 0
    document = json.loads(path.read_text())
    assert document["game_id"] == game and document["phase"] == "finished"
    assert main(["audit", str(path)]) == 0
    capsys.readouterr()
    # An id the service would not make (nor the web table open) is refused before any work.
    assert main(["import", str(path), "--game-id", "cli-copy"]) == 2
    assert "g and 20 lowercase hex digits" in capsys.readouterr().err
    copy = "g" + "c0" * 10
    assert main(["import", str(path), "--game-id", copy]) == 0
    assert capsys.readouterr().out.strip() == copy
    assert [e.type for e in store.read(copy)] == [e.type for e in store.read(game)]
    assert main(["import", str(path), "--game-id", copy]) == 1  # exists already
    document["events"][40]["payload"]["seat"] = 9
    path.write_text(json.dumps(document))
    assert main(["audit", str(path)]) == 1
    capsys.readouterr()
    assert main(["import", str(path)]) == 1
    assert "import refused (export-fails-audit)" in capsys.readouterr().err
    assert main(["export", game, "--text"]) == 0
    assert "Hand 1 (finished)" in capsys.readouterr().out
    path.write_text("{not json")
    assert main(["import", str(path)]) == 2


def test_an_export_that_readers_would_read_apart_is_not_audited_nor_imported(
    store, game, tmp_path, capsys
):
    path = tmp_path / "game.json"
    assert main(["export", game, "-o", str(path)]) == 0
    text = path.read_text()
    # The true card last, where Python reads it: it would audit clean, while a reader keeping
    # the first of two names sees another card played.
    at = text.index('"card": "')
    path.write_text(text[:at] + '"card": "AS", ' + text[at:])
    capsys.readouterr()
    assert main(["audit", str(path)]) == 2
    assert 'the name "card" appears twice in one object' in capsys.readouterr().err
    assert main(["import", str(path)]) == 2
    assert 'the name "card" appears twice in one object' in capsys.readouterr().err


def test_replay_prints_hands_trick_by_trick(store, game, capsys):
    assert main(["replay", game, "--hand", "2"]) == 0
    out = capsys.readouterr().out
    assert "Hand 2 (finished)" in out and "Hand 1" not in out
    assert "\033[" not in out  # captured output is not a terminal: no colour
    assert " 13.  " in out and "♥" in out
    assert main(["replay", game]) == 0
    assert capsys.readouterr().out.count("Hand ") >= 2
    assert main(["replay", game, "--hand", "99"]) == 2
    assert main(["replay", "nope"]) == 2


def test_replay_of_a_hand_in_play_hides_what_the_viewer_may_not_see(store, capsys):
    play_game(store, "live", seed="cli-live", stop_after=30)
    assert main(["replay", "live"]) == 0
    public = capsys.readouterr().out
    assert "(hidden until the hand ends)" in public and public.count("(hidden)") >= 4
    assert main(["replay", "live", "--seat", "1"]) == 0
    as_seat = capsys.readouterr().out
    assert as_seat.count("(hidden)") < public.count("(hidden)")
    assert main(["replay", "live", "--all"]) == 0
    assert "(hidden)" not in capsys.readouterr().out


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(store):
    play_game(store, "colour", seed="colour", stop_after=80)
    record = hand_records(decode_events(store.read("colour")))[0]
    assert wants_colour(Tty(), {}) is True
    assert wants_colour(Tty(), {"NO_COLOR": "1"}) is False
    assert wants_colour(Tty(), {"NO_COLOR": ""}) is True  # set but empty: no effect
    assert wants_colour(io.StringIO(), {}) is False
    coloured = render_hand(record, colour=True)
    plain = render_hand(record, colour=False)
    assert "\033[31m" in coloured and "\033[" not in plain
    assert "♦" in plain and "♣" in plain


def test_the_worker_class(monkeypatch):
    assert sse_worker_class(None) == "gevent"
    assert sse_worker_class("gthread") == "gthread"
