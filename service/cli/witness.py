"""``hearts witness``: cosign a hearts server's public log of games (docs/verify.md); and
``hearts log backfill``: append the finished games it does not hold yet.

    hearts witness --url https://hearts.example --log-key 'hearts.example/log+1a2b3c4d+AR...' \\
        --name witness.example/w1 --key witness.pem --state witness.json [--every 60]
    hearts witness --name witness.example/w1 --key witness.pem --print-key

Each round fetches the log's checkpoint, checks its signature and that it extends the last one
this witness cosigned (kept in ``--state``), cosigns it with ``--key`` (Ed25519, made on first
use) and posts the cosignature back. A log that forked or went back is refused: exit status 1.
The server keeps the cosignatures of the witnesses named in its HEARTS_LOG_WITNESSES (their
keys, as ``--print-key`` prints them). Exit status: 0 cosigned, 1 refused, 2 bad arguments or
the server could not be reached.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

OK, REFUSED, BAD = 0, 1, 2


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("witness", help="cosign a hearts server's public log of games")
    p.add_argument("--url", help="the server, e.g. http://127.0.0.1:8000")
    p.add_argument("--log-key", help="the log's verifier key (GET /.well-known/hearts-log-key)")
    p.add_argument("--name", required=True, help="this witness's name, e.g. example.com/w1")
    p.add_argument("--key", required=True, type=Path, help="its Ed25519 key (PEM; made if absent)")
    p.add_argument("--state", type=Path, help="where it remembers what it cosigned")
    p.add_argument("--every", type=float, help="seconds between rounds (default: one round)")
    p.add_argument("--print-key", action="store_true", help="print its verifier key and exit")
    p.set_defaults(func=run)
    log = subparsers.add_parser("log", help="the public log of games: backfill")
    actions = log.add_subparsers(dest="action", metavar="ACTION", required=True)
    backfill = actions.add_parser(
        "backfill", help="append every finished game not in the log yet (idempotent)"
    )
    backfill.set_defaults(func=run_backfill)


def run_backfill(args: argparse.Namespace) -> int:
    from service.app.transparency import Appender
    from service.cli.connection import open_store
    from service.settings import Settings

    with open_store() as store:
        appender = Appender(store, Settings.from_env().log_origin)
        added = appender.backfill()
        print(f"{added} games appended; the log holds {appender.tree.size()}")
    return OK


def run(args: argparse.Namespace) -> int:
    from hearts_client.note import COSIGNATURE, NoteError, Signer, Verifier
    from hearts_client.witness import WitnessRefused, witness_once

    from service.app.transparency import load_or_create_key

    try:
        signer = Signer(args.name, load_or_create_key(args.key), COSIGNATURE)
    except (NoteError, ValueError) as error:
        print(f"hearts witness: {error}", file=sys.stderr)
        return BAD
    if args.print_key:
        print(signer.verifier.vkey())
        return OK
    if not (args.url and args.log_key and args.state):
        print("hearts witness: --url, --log-key and --state are required", file=sys.stderr)
        return BAD
    try:
        log_key = Verifier.parse(args.log_key)
    except NoteError as error:
        print(f"hearts witness: --log-key: {error}", file=sys.stderr)
        return BAD
    base = args.url.rstrip("/")
    while True:
        try:
            cosigned = witness_once(_get(base), _post(base), args.state, signer, log_key)
        except WitnessRefused as error:
            print(f"hearts witness: refused: {error}", file=sys.stderr)
            return REFUSED
        except (OSError, ValueError) as error:
            print(f"hearts witness: {error}", file=sys.stderr)
            return BAD
        print(f"cosigned {cosigned.origin} at size {cosigned.size}")
        if not args.every:
            return OK
        time.sleep(args.every)


def _get(base: str):
    def get(path: str) -> str:
        with urllib.request.urlopen(base + path, timeout=30) as response:
            return response.read().decode("utf-8")

    return get


def _post(base: str):
    def post(path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            base + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    return post
