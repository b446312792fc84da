"""``hearts players``: operators' checks of the registered players (issues 32 and 42).

    hearts players collisions    # accounts whose names look alike (UTS #39 skeletons)
    hearts players index-names   # index the skeletons of accounts registered before they were
    hearts players flags         # players flagged as fed by their opponents (fair play)
    hearts players clear NAME    # clear a flag: the player's games count again

Neither merges nor renames anyone. ``collisions`` exits 1 if it lists any (0 if none), so a
script can watch for them. ``index-names`` is the one migration step for accounts registered
before look-alikes were refused: until it runs, a look-alike of such an account is only found
at a table it sits at. Running it again changes nothing.

``flags`` lists the players the ratings flag (docs/projections.md, "Fair play") and exits 1 if
it lists any. ``clear`` (a name in any spelling, or a player id) clears the evidence of every
game finished up to now: the player's games count again, from the next read of the ratings.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.store.accounts import AccountStore


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "players", help="check registered players: look-alike names, fair-play flags"
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("collisions", help="list accounts whose names look alike")
    listing.set_defaults(func=run_collisions)
    index = actions.add_parser(
        "index-names", help="index the look-alike keys of accounts registered before them"
    )
    index.set_defaults(func=run_index)
    flags = actions.add_parser("flags", help="list players flagged as fed by their opponents")
    flags.set_defaults(func=run_flags)
    clear = actions.add_parser("clear", help="clear a player's fair-play flag")
    clear.add_argument("player", help="the player's name (any spelling) or id")
    clear.set_defaults(func=run_clear)


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


def run_flags(args: argparse.Namespace) -> int:
    from service.app.fairplay import flags
    from service.app.safe_text import escape_controls
    from service.cli.connection import open_store
    from service.store.accounts import AccountStore
    from service.store.read_models import ProjectionStore

    with open_store() as store:
        found = flags(ProjectionStore(store), AccountStore(store.redis, prefix=store.prefix))
    for flag in found:
        name = escape_controls(flag.name)
        print(
            f"{flag.player_id}  {name!r}  flagged by game {flag.game_id}: its opponents took "
            f"{flag.needless} of {flag.choices} tricks with points they could have ducked"
        )
    print(f"{len(found)} flagged player(s)")
    return 1 if found else 0


def run_clear(args: argparse.Namespace) -> int:
    import time

    from service.app.fairplay import UnknownPlayer, clear
    from service.app.safe_text import escape_controls
    from service.cli.connection import open_store
    from service.store.accounts import AccountStore
    from service.store.fairplay import FairPlayStore

    with open_store() as store:
        accounts = AccountStore(store.redis, prefix=store.prefix)
        try:
            player_id = clear(
                FairPlayStore(store.redis, prefix=store.prefix),
                accounts,
                args.player,
                time.time_ns() // 1000,
            )
        except UnknownPlayer as error:
            print(escape_controls(str(error)))
            return 2
    print(f"cleared {player_id}: the games it finished until now count again")
    return 0


def _code_points(name: str) -> str:
    return " ".join(f"{ord(ch):04X}" for ch in name)


@contextlib.contextmanager
def _accounts() -> Iterator[AccountStore]:
    from service.cli.connection import open_store
    from service.store.accounts import AccountStore

    with open_store() as store:
        yield AccountStore(store.redis, prefix=store.prefix)
