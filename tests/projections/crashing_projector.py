"""A ``hearts project`` that SIGKILLs itself after applying k entries, before acknowledging them.

Test-only (the crash tests spawn it): ``python -m tests.projections.crashing_projector K ARGS``,
where ARGS are ``hearts project``'s own.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

from service.cli.projections import add_parser, run_project


def main(argv: list[str]) -> int:
    import argparse

    crash_after = int(argv[0])
    parser = argparse.ArgumentParser(prog="crashing-projector")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["project", *argv[1:]])

    def crash(applied: int) -> None:
        if applied >= crash_after:
            logging.getLogger(__name__).warning("applied %d entries: killing myself", applied)
            os.kill(os.getpid(), signal.SIGKILL)

    return run_project(args, on_applied=crash)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
