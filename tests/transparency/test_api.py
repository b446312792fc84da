"""Signed heads, the public log's endpoints and the projector's appends, through the API."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hearts_client import merkle
from hearts_client.note import COSIGNATURE, Checkpoint, Note, Signer, Verifier, open_head

from service.app.projector import Projector
from service.app.transparency import Appender
from service.settings import Settings
from service.store.read_models import ProjectionStore
from tests.api.helpers import PROBLEM, Hearts, chosen_seed
from tests.background import settle
from tests.replay.tamper import tamper

FAST = {"score_limit": 30}
BOTS = [{"bot": "random"}] * 4


def vkey(client) -> Verifier:
    response = client.get("/.well-known/hearts-log-key")
    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    return Verifier.parse(response.get_data(as_text=True))


def project(app) -> None:
    """Run the projector over every partition, as ``hearts project`` would."""
    log = app.extensions["hearts.log"]
    projections = ProjectionStore(log.store)
    projector = Projector(projections, public_log=Appender(log.store, log.origin))
    for partition in range(log.store.partitions):
        projector.catch_up(partition)


def finished_games(hearts: Hearts, n: int) -> list[str]:
    ids = []
    for i in range(n):
        game = hearts.create(BOTS, rules=FAST, seed=chosen_seed(f"log {i}"))
        hearts.wait_for(game["id"], lambda v: v["phase"] == "finished")  # bots: in the background
        ids.append(game["id"])
    return ids


def test_every_answer_about_a_game_carries_a_signed_head(client, hearts: Hearts, app) -> None:
    key = vkey(client)
    assert app.extensions["hearts.log"].vkey == key.vkey()
    openapi = client.get("/api/v1/openapi.json").get_json()
    assert openapi["info"]["x-hearts-log-key"] == key.vkey()
    game_id, tokens = hearts.new_game(1, rules=FAST)
    response = client.get(f"/api/v1/games/{game_id}")
    head = open_head(response.headers["Hearts-Head"], key)
    assert (head.game_id, head.version) == (game_id, response.get_json()["version"])
    # The hash at the head's version: the bots may have moved since the answer (a busy machine).
    chain_hash = app.extensions["hearts"].store.read(game_id)[head.version - 1].hash
    log = app.extensions["hearts.log"]
    # Blinded with the game's salt: a head never shows a chain hash while the game is played.
    assert head.blinded and head.hash != chain_hash
    assert head.matches(chain_hash, log.salt(game_id))
    assert not head.matches(chain_hash, log.salt("another game"))
    view = hearts.view(game_id, tokens[0])
    endpoint, body = hearts.move(view)
    moved = hearts.post(f"/api/v1/games/{game_id}/{endpoint}", body, tokens[0])
    assert open_head(moved.headers["Hearts-Head"], key).version == moved.get_json()["version"]


def test_a_kept_head_is_extended_until_the_log_is_rewritten(client, hearts: Hearts, app) -> None:
    game_id, tokens = hearts.new_game(1, rules=FAST)
    kept = client.get(f"/api/v1/games/{game_id}").headers["Hearts-Head"]
    final = hearts.play_out(game_id, tokens)
    ok = client.post(f"/api/v1/games/{game_id}/verify", json={"head": kept})
    assert ok.status_code == 200, ok.get_json()
    assert ok.get_json()["extends"] is True
    assert ok.get_json()["version"] == final["version"]
    assert "Hearts-Head" in ok.headers

    def rewrite(envelopes):  # an insider edits an early event; the chain is then recomputed
        envelopes[1] = {**envelopes[1], "time": "2000-01-01T00:00:00+00:00"}
        return envelopes

    store = app.extensions["hearts"].store
    tamper(store, game_id, rewrite, rehash_chain=True)
    assert store.verify(game_id) == []  # the chain alone cannot tell
    bad = client.post(f"/api/v1/games/{game_id}/verify", json={"head": kept})
    assert bad.status_code == 409
    assert bad.mimetype == PROBLEM
    problem = bad.get_json()
    assert problem["code"] == "head-not-extended"
    assert problem["seq"] == open_head(kept, vkey(client)).version
    assert problem["found_hash"] != problem["expected_hash"]


def test_heads_that_are_not_this_servers_are_refused(client, hearts: Hearts) -> None:
    game_id, _ = hearts.new_game(1, rules=FAST)
    other, _ = hearts.new_game(1, rules=FAST)
    kept = client.get(f"/api/v1/games/{other}").headers["Hearts-Head"]
    for head in (kept, "bm90IGEgaGVhZA==", base64.b64encode(b"x\n\n\xe2\x80\x94 a AAAAAAA=\n")):
        text = head if isinstance(head, str) else head.decode()
        response = client.post(f"/api/v1/games/{game_id}/verify", json={"head": text})
        assert response.status_code == 422
        assert response.get_json()["code"] == "invalid-head"
    missing = client.post("/api/v1/games/nosuchgame/verify", json={"head": kept})
    assert missing.status_code in (404, 422)


@pytest.mark.unlimited(
    "plays 5 games of bots to the end for the log within seconds "
    "(the default lets an address create 3 a minute)"
)
def test_finished_games_enter_the_public_log_once_with_proofs(client, hearts, app) -> None:
    key = vkey(client)
    empty = Note.parse(client.get("/api/v1/log/checkpoint").get_data(as_text=True))
    empty.verify(key)
    assert Checkpoint.parse(empty.text).size == 0
    first = finished_games(hearts, 3)
    project(app)
    old = Note.parse(client.get("/api/v1/log/checkpoint").get_data(as_text=True))
    old.verify(key)
    assert Checkpoint.parse(old.text).size == 3
    later = finished_games(hearts, 2)
    project(app)
    project(app)  # again: every game is appended once
    note = Note.parse(client.get("/api/v1/log/checkpoint").get_data(as_text=True))
    new = Checkpoint.parse(note.text)
    assert new.size == 5
    for game_id in first + later:
        proof = client.get(f"/api/v1/log/games/{game_id}").get_json()
        assert proof["head"].split("\n")[1] == f"game {game_id}"
        merkle.verify_inclusion(
            merkle.leaf_hash(proof["head"].encode()),
            proof["index"],
            new.size,
            [base64.b64decode(h) for h in proof["proof"]],
            new.root,
        )
    consistency = client.get("/api/v1/log/consistency?old=3&new=5").get_json()
    merkle.verify_consistency(
        3,
        5,
        Checkpoint.parse(old.text).root,
        new.root,
        [base64.b64decode(h) for h in consistency["proof"]],
    )
    at3 = client.get(f"/api/v1/log/games/{first[0]}?size=3").get_json()
    assert at3["checkpoint"] == old.serialize()
    for path, code in (
        ("/api/v1/log/checkpoint?size=6", "bad-tree-size"),
        ("/api/v1/log/consistency?old=5&new=3", "bad-tree-size"),
        (f"/api/v1/log/games/{later[0]}?size=3", "bad-tree-size"),
        ("/api/v1/log/games/nosuchgame", "game-not-in-log"),
    ):
        response = client.get(path)
        assert response.mimetype == PROBLEM
        assert response.get_json()["code"] == code, path


@pytest.fixture
def witness() -> Signer:
    return Signer("witness.test/w1", Ed25519PrivateKey.generate(), COSIGNATURE)


@pytest.fixture
def settings(key_prefix, witness):
    return Settings(key_prefix=key_prefix, log_witnesses=witness.verifier.vkey())


def test_a_known_witness_cosignature_is_kept_and_served(client, hearts, app, witness) -> None:
    finished_games(hearts, 2)
    project(app)
    served = client.get("/api/v1/log/checkpoint").get_data(as_text=True)
    note = Note.parse(served)
    cosigned = note.with_line(witness.cosign(note.text, 1_700_000_000)).serialize()
    response = client.post("/api/v1/log/checkpoint", json={"checkpoint": cosigned})
    assert response.status_code == 200, response.get_json()
    assert response.get_json() == {"kept": [witness.name]}
    again = Note.parse(client.get("/api/v1/log/checkpoint").get_data(as_text=True))
    assert again.verify(witness.verifier) == 1_700_000_000
    stranger = Signer("witness.test/w1", Ed25519PrivateKey.generate(), COSIGNATURE)
    for body in (
        note.with_line(stranger.cosign(note.text, 1)).serialize(),  # unknown key
        served,  # no cosignature
        "not a note",
    ):
        refused = client.post("/api/v1/log/checkpoint", json={"checkpoint": body})
        assert refused.status_code == 422
        assert refused.get_json()["code"] == "invalid-cosignature"


def test_a_log_cut_short_does_not_extend_a_head(client, hearts: Hearts, app) -> None:
    game_id, tokens = hearts.new_game(1, rules=FAST)
    hearts.act(game_id, 0, tokens[0])
    # The bots' replies are played in the background: the head kept is the game's at rest,
    # and the cut below is an insider's while nothing else writes (the runner once appended
    # after it, at the seq cut away, so a hash was found there: issue 34).
    settle(app, [game_id], stop=True)
    kept = client.get(f"/api/v1/games/{game_id}").headers["Hearts-Head"]
    version = open_head(kept, vkey(client)).version
    store = app.extensions["hearts"].store
    tamper(store, game_id, lambda envelopes: envelopes[: version - 1], rehash_chain=True)
    response = client.post(f"/api/v1/games/{game_id}/verify", json={"head": kept})
    assert response.status_code == 409
    problem = response.get_json()
    assert (problem["code"], problem["seq"], problem["found_hash"]) == (
        "head-not-extended",
        version,
        None,
    )
    assert "removed" in problem["detail"]


def test_a_checkpoint_waits_for_the_replicas_it_is_told_to(redis_server, key_prefix) -> None:
    from service.api.factory import create_app
    from service.store.redis_server import client_for

    settings = Settings(key_prefix=key_prefix, min_replicas=1, replica_timeout_ms=50)
    client = create_app(settings, redis=client_for(redis_server)).test_client()
    response = client.get("/api/v1/log/checkpoint")  # a lone redis-server has no replica
    assert response.status_code == 503
    assert response.get_json()["code"] == "not-replicated"


def test_the_checkpoint_served_is_published_at_an_interval(redis_client, key_prefix) -> None:
    """With HEARTS_CHECKPOINT_INTERVAL every reader gets the same checkpoint between two
    publications (hearts serve: 10 s); a size asked for is signed on request."""
    from service.api.factory import create_app

    app = create_app(Settings(key_prefix=key_prefix, checkpoint_interval=3600), redis=redis_client)
    try:
        client = app.test_client()
        hearts = Hearts(client)
        finished_games(hearts, 1)
        project(app)
        published = client.get("/api/v1/log/checkpoint").get_data(as_text=True)
        assert Checkpoint.parse(Note.parse(published).text).size == 1
        finished_games(hearts, 1)
        project(app)
        # Within the interval: the same checkpoint, though the tree has grown.
        assert client.get("/api/v1/log/checkpoint").get_data(as_text=True) == published
        asked = client.get("/api/v1/log/checkpoint?size=2").get_data(as_text=True)
        assert Checkpoint.parse(Note.parse(asked).text).size == 2
        # The interval over (as if an hour had passed): the next one is published.
        tree = app.extensions["hearts.log"].tree
        redis_client.hset(tree.published_key, "at", 0)
        again = client.get("/api/v1/log/checkpoint").get_data(as_text=True)
        assert Checkpoint.parse(Note.parse(again).text).size == 2
    finally:
        app.extensions["hearts.stop"]()
