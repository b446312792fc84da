"""``hearts players``: operators' checks of the registered players' names (issue 32).

    hearts players collisions    # accounts whose names look alike (UTS #39 skeletons)
    hearts players index-names   # index the skeletons of accounts registered before they were

Neither merges nor renames anyone. ``collisions`` exits 1 if it lists any (0 if none), so a
script can watch for them. ``index-names`` is the one migration step for accounts registered
before look-alikes were refused: until it runs, a look-alike of such an account is only found
at a table it sits at. Running it again changes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.store.accounts import AccountStore


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("players", help="check registered players' names for look-alikes")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("collisions", help="list accounts whose names look alike")
    listing.set_defaults(func=run_collisions)
    index = actions.add_parser(
        "index-names", help="index the look-alike keys of accounts registered before them"
    )
    index.set_defaults(func=run_index)


def run_collisions(args: argparse.Namespace) -> int:
    from service.app.players import collisions
    from service.app.safe_text import escape_controls

    with _accounts() as accounts:
        found = collisions(accounts.all_players())
    for collision in found:
        print(f"look alike ({escape_controls(collision.skeleton)!r}):")
        for player in collision.players:
            name = escape_controls(player.name)
            points = _code_points(player.name)  # what the eye cannot tell apart
            print(f"  {player.player_id}  {name!r}  (U+ {points})  registered {player.created}")
    print(f"{len(found)} group(s) of look-alike accounts")
    return 1 if found else 0


def run_index(args: argparse.Namespace) -> int:
    from service.app.players import index_names

    with _accounts() as accounts:
        count = index_names(accounts)
    print(f"indexed the names of {count} account(s)")
    return 0


def _code_points(name: str) -> str:
    return " ".join(f"{ord(ch):04X}" for ch in name)


@contextlib.contextmanager
def _accounts() -> Iterator[AccountStore]:
    from service.cli.connection import open_store
    from service.store.accounts import AccountStore

    with open_store() as store:
        yield AccountStore(store.redis, prefix=store.prefix)
