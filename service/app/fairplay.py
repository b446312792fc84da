"""Fair play for operators (issue 42): the players flagged as fed by their opponents, and the
operator's clearing of a flag (``hearts players flags`` / ``hearts players clear``).

A flag is a fold of the rated games (``projections.ratings``); clearing it stores one field
(``service/store/fairplay.py``) that the fold takes as an input, so the live read models and a
rebuild agree on it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.names import InvalidNameText, display_name, name_key
from service.store.accounts import AccountStore
from service.store.fairplay import FairPlayStore
from service.store.read_models import ProjectionStore

_PLAYER_ID = re.compile(r"p[0-9a-f]{20}")


class UnknownPlayer(LookupError):
    """No registered player has that name or id."""


@dataclass(frozen=True, slots=True)
class Flag:
    player_id: str
    name: str
    game_id: str  # the game whose evidence crossed the line
    needless: int  # the opponents' needless takes behind the player's wins since cleared
    choices: int


def flags(projections: ProjectionStore, accounts: AccountStore) -> list[Flag]:
    """The flagged players, by name."""
    ratings = projections.ratings(projections.as_of())
    flagged = {p: r for p, r in ratings.items() if r.flagged is not None}
    names = accounts.names(sorted(flagged))
    found = [
        Flag(p, names.get(p, "?"), str(r.flagged), r.fed[0], r.fed[1]) for p, r in flagged.items()
    ]
    return sorted(found, key=lambda f: (f.name, f.player_id))


def player_id_of(accounts: AccountStore, name_or_id: str) -> str:
    """The registered player named ``name_or_id`` (any spelling) or with that id."""
    if _PLAYER_ID.fullmatch(name_or_id) and accounts.get(name_or_id) is not None:
        return name_or_id
    try:
        holder = accounts.holder_of(name_key(display_name(name_or_id)))
    except InvalidNameText:
        holder = None
    if holder is None:
        raise UnknownPlayer(f"no registered player {name_or_id!r}")
    return holder


def clear(fairplay: FairPlayStore, accounts: AccountStore, name_or_id: str, now_us: int) -> str:
    """Clear the player's evidence of every game finished up to now; its id."""
    player_id = player_id_of(accounts, name_or_id)
    fairplay.clear(player_id, now_us)
    return player_id
