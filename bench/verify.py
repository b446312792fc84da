"""verify: hearts-verify on a finished game's export, against the server's own audit of it.

A game of four bots is played to its end in process (fakeredis) until it has at least
``--hands`` hands, with a head kept after every hand and the game appended to the public log;
then, in alternating rounds (CPU time):

- **hearts-verify**: ``hearts_client.verify.verify`` of the export: the chain recomputed, every
  kept head's signature and extension, the inclusion proof and the checkpoint's signature;
- **baseline**: ``service.app.audit.audit_events`` of the same events (the server's audit: chain,
  commitments, deals and every command decided again).

    python -m bench.verify                # a game of at least 10 hands
    python -m bench.verify --hands 20 --rounds 15
"""

from __future__ import annotations

import time

import fakeredis
from hearts_client.note import Verifier
from hearts_client.verify import verify

from bench.common import Report, alternate, median, parser
from service.api.factory import create_app
from service.app.audit import audit_events
from service.app.projector import Projector
from service.app.transparency import Appender
from service.settings import Settings
from service.store.envelope import canonical_json, decode_envelope
from service.store.read_models import ProjectionStore


def game(hands: int) -> tuple[dict, list[str], dict, str]:
    """(export, heads kept, inclusion proof, log key) of a finished game of >= ``hands`` hands."""
    for _attempt in range(50):
        app = create_app(Settings(key_prefix="bench"), redis=fakeredis.FakeRedis())
        client = app.test_client()
        # A high limit makes a long game; bots only, played by the app's background runner.
        # The service's own seeds: each hand's seed is committed ahead (SeedCommitted).
        created = client.post(
            "/api/v1/games",
            json={"seats": [{"bot": "random"}] * 4, "rules": {"score_limit": 100}},
        ).get_json()
        game_id = created["id"]
        deadline = time.monotonic() + 120
        while client.get(f"/api/v1/games/{game_id}").get_json()["phase"] != "finished":
            if time.monotonic() > deadline:
                raise SystemExit("the bench's game did not finish")
            time.sleep(0.05)
        app.extensions["hearts.stop"]()
        export = client.get(f"/api/v1/games/{game_id}/export").get_json()
        if export["hand_number"] < hands:
            continue
        log = app.extensions["hearts.log"]
        heads = [
            log.head(game_id, e["seq"], e["hash"])
            for e in export["events"]
            if e["type"] == "HandScored"
        ]
        projector = Projector(
            ProjectionStore(log.store), public_log=Appender(log.store, log.origin)
        )
        for partition in range(log.store.partitions):
            projector.catch_up(partition)
        proof = client.get(f"/api/v1/log/games/{game_id}").get_json()
        return export, heads, proof, log.vkey
    raise SystemExit(f"no game of {hands} hands in 50 seeds")


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=10)
    p.add_argument("--rounds", type=int, default=9)
    args = p.parse_args()
    export, heads, proof, vkey = game(args.hands)
    key = Verifier.parse(vkey)
    stored = [decode_envelope(canonical_json(e)) for e in export["events"]]

    def hearts_verify() -> float:
        started = time.process_time()
        findings = verify(export, key, heads=heads, proof=proof)
        assert all(f.ok for f in findings), [str(f) for f in findings if not f.ok]
        return time.process_time() - started

    def baseline() -> float:
        started = time.process_time()
        assert not audit_events(stored).discrepancies
        return time.process_time() - started

    results = alternate({"verify": hearts_verify, "audit": baseline}, args.rounds)
    v, a = median(results["verify"]), median(results["audit"])
    report = Report("verify")
    report.add("hands", export["hand_number"])
    report.add("events", len(export["events"]))
    report.add("heads checked", len(heads))
    report.add("hearts-verify", v * 1000, "ms CPU")
    report.add("server audit (baseline)", a * 1000, "ms CPU")
    report.add("ratio verify/audit", v / a if a else float("nan"))
    report.target("hearts-verify of the export", v < 1.0, "well under a second")
    report.emit(args.json)


if __name__ == "__main__":
    main()
