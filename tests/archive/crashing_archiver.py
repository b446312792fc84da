"""``hearts archive run --once`` that SIGKILLs itself right after a named step of its first game
(``written``, ``checked``, ``recorded``, ``removed``): ``python -m tests.archive.crashing_archiver
STEP``. Its partition leases last half a second, so the next pass need not wait long for them."""

from __future__ import annotations

import os
import signal
import sys

from service.cli import build_parser
from service.cli.archive import run_once


def main() -> None:
    step = sys.argv[1]

    def crash(done: str, game_id: str) -> None:
        if done == step:
            os.kill(os.getpid(), signal.SIGKILL)

    args = build_parser().parse_args(["archive", "run", "--once", *sys.argv[2:]])
    raise SystemExit(run_once(args, on_step=crash, lease_ms=500))


if __name__ == "__main__":
    main()
