"""hearts-verify against the attack today's audit misses: an insider rewrites a finished game in
Redis and recomputes every hash. Given a head the player's client kept during the game, or the
game's inclusion proof from an earlier checkpoint, the verifier reports the rewrite; without the
rewrite everything verifies clean."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hearts_client import verify as hv
from hearts_client.note import Verifier, open_head

from tests.api.helpers import Hearts, chosen_seed
from tests.replay.tamper import find, tamper
from tests.transparency.test_api import FAST, project


def play_keeping_heads(client, hearts: Hearts) -> tuple[str, list[str]]:
    """A human's game against bots; the client keeps every head it is given."""
    game_id, tokens = hearts.new_game(1, rules=FAST, seed=chosen_seed("kept heads"))
    heads = []
    for _ in range(6000):  # polls, a few ms apart: bots move in the background
        response = client.get(
            f"/api/v1/games/{game_id}", headers={"Authorization": f"Bearer {tokens[0]}"}
        )
        heads.append(response.headers["Hearts-Head"])
        view = response.get_json()
        if view["phase"] == "finished":
            return game_id, heads
        if 0 in view["awaiting"]:
            endpoint, body = hearts.move(view)
            moved = hearts.post(f"/api/v1/games/{game_id}/{endpoint}", body, tokens[0])
            assert moved.status_code == 200, moved.get_json()
            heads.append(moved.headers["Hearts-Head"])
        else:
            time.sleep(0.005)
    raise AssertionError("the game did not finish")


@pytest.fixture
def finished(client, hearts: Hearts, app, tmp_path):
    game_id, heads = play_keeping_heads(client, hearts)
    project(app)
    proof = client.get(f"/api/v1/log/games/{game_id}").get_json()  # kept by the player
    log_key = client.get("/.well-known/hearts-log-key").get_data(as_text=True).strip()
    (tmp_path / "proof.json").write_text(json.dumps(proof))
    (tmp_path / "heads.txt").write_text("\n".join(heads) + "\n")
    return game_id, heads, log_key


def export(client, game_id: str, path) -> dict:
    response = client.get(f"/api/v1/games/{game_id}/export")
    assert response.status_code == 200, response.get_json()
    path.write_text(response.get_data(as_text=True))
    return response.get_json()


def run(tmp_path, log_key: str, *extra: str) -> int:
    return hv.main([str(tmp_path / "game.json"), "--log-key", log_key, *extra])


def test_an_untouched_game_verifies_clean(client, finished, tmp_path, capsys) -> None:
    game_id, heads, log_key = finished
    export(client, game_id, tmp_path / "game.json")
    status = run(
        tmp_path,
        log_key,
        "--head",
        str(tmp_path / "heads.txt"),
        "--proof",
        str(tmp_path / "proof.json"),
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "FAIL" not in out
    assert out.count("ok   head") == len(heads)
    assert "ok   log: the game is leaf 0" in out


def test_a_rewrite_with_every_hash_recomputed_is_reported(client, app, finished, tmp_path, capsys):
    game_id, heads, log_key = finished
    store = app.extensions["hearts"].store

    rewritten = []

    def rewrite(envelopes):  # the insider changes when the last hand was dealt
        at = find(envelopes, "HandDealt", -1)
        envelopes[at] = {**envelopes[at], "time": "2000-01-01T00:00:00.000000Z"}
        rewritten.append(envelopes[at]["seq"])
        return envelopes

    tamper(store, game_id, rewrite, rehash_chain=True)
    assert store.verify(game_id) == []  # the server's chain check is satisfied
    document = export(client, game_id, tmp_path / "game.json")
    key = Verifier.parse(log_key)
    assert all(f.ok for f in hv.check_chain(document))  # the chain alone cannot tell

    # The heads the player kept: every one from after the rewritten event says REWRITTEN.
    salt = json.loads((tmp_path / "proof.json").read_text())["head_salt"]
    status = run(tmp_path, log_key, "--head", str(tmp_path / "heads.txt"), "--salt", salt)
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL head: REWRITTEN" in out
    # Exactly the heads from the rewritten event on fail: the report says where.
    for head in heads:
        version = open_head(head, key).version
        assert hv.check_head(document, head, key, salt).ok is (version < rewritten[0])
    assert open_head(heads[0], key).version < rewritten[0] <= open_head(heads[-1], key).version
    # The inclusion proof in the earlier checkpoint: the logged game is not this export.
    status = run(tmp_path, log_key, "--proof", str(tmp_path / "proof.json"))
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL log: REWRITTEN" in out
    # And the server itself, asked about the kept head, says where.
    answer = client.post(f"/api/v1/games/{game_id}/verify", json={"head": heads[-1]})
    assert answer.status_code == 409
    assert answer.get_json()["code"] == "head-not-extended"


def test_a_forged_proof_or_head_is_refused(client, finished, tmp_path) -> None:
    game_id, heads, log_key = finished
    document = export(client, game_id, tmp_path / "game.json")
    proof = json.loads((tmp_path / "proof.json").read_text())
    key = Verifier.parse(log_key)
    other_key = "hearts.localhost/log+00000000+AR/4AchZY2DuT7Zyv7+pi4Kp43NaoVXylP5RdVEljifC"
    assert not hv.check_proof(document, {**proof, "index": proof["index"] + 1}, key, [], 0)[-1].ok
    assert not hv.check_head(document, heads[0][:-8] + "AAAAAAA=", key).ok
    with pytest.raises(ValueError):
        Verifier.parse(other_key)  # a key id that is not the key's
    assert not hv.check_proof(document, proof, key, [], 1)[0].ok  # a witness required, none


def test_an_export_with_a_name_twice_is_refused_not_read_one_way(
    client, finished, tmp_path, capsys
):
    game_id, _, log_key = finished
    export(client, game_id, tmp_path / "game.json")
    text = (tmp_path / "game.json").read_text()
    # The true card stays last, where Python reads it: the chain would check out, while a
    # reader that keeps the first of two names would show another card played.
    at = text.index('"card": "')
    (tmp_path / "game.json").write_text(text[:at] + '"card": "AS", ' + text[at:])
    assert run(tmp_path, log_key) == 2
    assert 'the name "card" appears twice in one object' in capsys.readouterr().err


@pytest.mark.parametrize(
    "text", ['{"a": NaN}', '{"a": [Infinity]}', '{"a": 1, "b": {"c": 1, "c": 1}}']
)
def test_json_that_readers_read_apart_is_refused(text):
    with pytest.raises(hv.AmbiguousJson):
        hv.read_json(text)
    assert hv.read_json('{"a": 1.5, "b": {"c": [1, "c"]}}') == {"a": 1.5, "b": {"c": [1, "c"]}}


CLIENT_SOURCE = Path(__file__).resolve().parents[2] / "clients" / "python"


def readme_command() -> str:
    """The verification command exactly as clients/python/README.md gives it (one shell line)."""
    text = (CLIENT_SOURCE / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(hearts-verify .*?)\n```", text, re.S)
    assert block is not None, "the README's hearts-verify example is gone"
    return block.group(1).replace("\\\n", " ")


def test_the_readme_command_runs_as_written_head_and_key_inline_or_in_files(
    client, finished, tmp_path
) -> None:
    """Issue 44: `--head "$(cat head.txt)"` put the head itself where a file name was tried, and
    the path check's ENAMETOOLONG ended the run (exit 2). The README's command, run by a shell
    in the directory of the files it names, with the head and the log key each inline and in a
    file; only the example key is replaced by the server's."""
    game_id, heads, log_key = finished
    export(client, game_id, tmp_path / "game.json")
    (tmp_path / "head.txt").write_text(heads[-1] + "\n")
    (tmp_path / "key.txt").write_text(log_key + "\n")
    assert len(heads[-1]) > 255  # longer than a file name may be: the case that failed
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "hearts-verify"  # the console script, on this checkout's client code
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hearts_client.verify "$@"\n')
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(CLIENT_SOURCE / "src"),
    }
    command = readme_command()
    example_key = re.search(r"--log-key ('[^']*')", command)
    assert example_key is not None and '--head "$(cat head.txt)"' in command
    # Both inline, as written, and both in files: each value is read the one way or the other
    # on its own (test_a_value_that_is_no_file_name_is_the_value), so the two mixes add nothing.
    for key, head in ((shlex.quote(log_key), '"$(cat head.txt)"'), ("key.txt", "head.txt")):
        line = command.replace(example_key.group(1), key).replace('"$(cat head.txt)"', head)
        done = subprocess.run(
            ["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        assert "ok   head" in done.stdout and "ok   log: the game is leaf" in done.stdout
        assert "FAIL" not in done.stdout


def test_a_value_that_is_no_file_name_is_the_value(tmp_path) -> None:
    """Whatever the path check raises, a value that names no file is taken as it is."""
    (tmp_path / "a-head").write_text("one\n\ntwo\n")
    assert hv.value_or_file("x" * 5000) == "x" * 5000  # ENAMETOOLONG
    assert hv.value_or_file("a\0b") == "a\0b"  # ValueError: embedded NUL
    assert hv.value_or_file(str(tmp_path / "nothing" / "here")) == str(tmp_path / "nothing/here")
    assert hv.value_or_file(str(tmp_path / "a-head")) == "one\n\ntwo\n"
