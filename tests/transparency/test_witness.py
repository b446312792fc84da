"""The witness (hearts_client.witness, run by ``hearts witness``) against two logs of the same
origin and key that forked: it cosigns one, then refuses the other; it follows a log that grows."""

from __future__ import annotations

import uuid

import fakeredis
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hearts_client.note import COSIGNATURE, Checkpoint, Note, Signer, Verifier
from hearts_client.witness import WitnessRefused, witness_once

from service.api.factory import create_app
from service.cli import main
from service.settings import Settings
from tests.api.helpers import Hearts, chosen_seed
from tests.transparency.test_api import finished_games, project


@pytest.fixture
def witness() -> Signer:
    return Signer("witness.test/w1", Ed25519PrivateKey.generate(), COSIGNATURE)


def make_app(key_file, witness: Signer):
    settings = Settings(
        key_prefix=f"fork-{uuid.uuid4().hex[:8]}",
        log_key_file=str(key_file),
        log_witnesses=witness.verifier.vkey(),
    )
    return create_app(settings, redis=fakeredis.FakeRedis())


def transport(app):
    client = app.test_client()

    def get(path: str) -> str:
        response = client.get(path)
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.get_data(as_text=True)

    def post(path: str, body):
        response = client.post(path, json=body)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    return get, post


@pytest.mark.unlimited(
    "plays 4 games of bots on the fork's log within seconds "
    "(the default lets an address create 3 a minute)"
)
def test_the_witness_cosigns_a_growing_log_and_refuses_a_fork(tmp_path, witness) -> None:
    key_file = tmp_path / "log-key.pem"
    honest, fork = make_app(key_file, witness), make_app(key_file, witness)
    log_key = Verifier.parse(honest.extensions["hearts.log"].vkey)
    assert fork.extensions["hearts.log"].vkey == log_key.vkey()  # the same log, as far as keys go
    state = tmp_path / "witness.json"

    finished_games(Hearts(honest.test_client()), 2)
    project(honest)
    assert witness_once(*transport(honest), state, witness, log_key).size == 2
    served = Note.parse(honest.test_client().get("/api/v1/log/checkpoint").get_data(as_text=True))
    assert served.cosigners([witness.verifier]) == [witness.name]  # posted back and served

    finished_games(Hearts(honest.test_client()), 1)
    project(honest)
    assert witness_once(*transport(honest), state, witness, log_key).size == 3  # consistent

    # The fork: other games, so another tree, of the same size 3 (and then larger).
    other = Hearts(fork.test_client())
    for i in range(3):
        game = other.create(
            [{"bot": "random"}] * 4, rules={"score_limit": 30}, seed=chosen_seed(f"fork {i}")
        )
        other.wait_for(game["id"], lambda v: v["phase"] == "finished")  # bots: in the background
    project(fork)
    forked = Checkpoint.parse(
        Note.parse(fork.test_client().get("/api/v1/log/checkpoint").get_data(as_text=True)).text
    )
    assert forked.size == 3
    with pytest.raises(WitnessRefused, match="fork"):
        witness_once(*transport(fork), state, witness, log_key)
    game = other.create(
        [{"bot": "random"}] * 4, rules={"score_limit": 30}, seed=chosen_seed("fork 3")
    )
    other.wait_for(game["id"], lambda v: v["phase"] == "finished")
    project(fork)
    with pytest.raises(WitnessRefused, match="does not extend"):
        witness_once(*transport(fork), state, witness, log_key)
    # Still following the honest log.
    assert witness_once(*transport(honest), state, witness, log_key).size == 3


def test_hearts_witness_prints_its_key(tmp_path, capsys) -> None:
    key = tmp_path / "w.pem"
    assert main(["witness", "--name", "witness.test/w2", "--key", str(key), "--print-key"]) == 0
    printed = capsys.readouterr().out.strip()
    verifier = Verifier.parse(printed)
    assert (verifier.name, verifier.sig_type) == ("witness.test/w2", COSIGNATURE)
    assert main(["witness", "--name", "witness.test/w2", "--key", str(key), "--print-key"]) == 0
    assert capsys.readouterr().out.strip() == printed  # the same key, kept


def test_hearts_log_backfill_appends_finished_games_once(
    redis_server, key_prefix, monkeypatch, capsys
) -> None:
    from service.store.redis_server import client_for

    app = create_app(Settings(key_prefix=key_prefix), redis=client_for(redis_server))
    ids = finished_games(Hearts(app.test_client()), 2)  # no projector ran: not in the log
    assert app.extensions["hearts.log"].tree.size() == 0
    monkeypatch.setenv("REDIS_URL", redis_server)
    monkeypatch.setenv("HEARTS_KEY_PREFIX", key_prefix)
    assert main(["log", "backfill"]) == 0
    assert capsys.readouterr().out.startswith("2 games appended")
    assert main(["log", "backfill"]) == 0
    assert capsys.readouterr().out.startswith("0 games appended; the log holds 2")
    for game_id in ids:
        assert app.test_client().get(f"/api/v1/log/games/{game_id}").status_code == 200
