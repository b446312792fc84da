"""Player ratings: an OpenSkill model over the standings of rated games.

The model is OpenSkill's Bradley-Terry full-pairing model (every seat compared with every other
seat of the game), not its Plackett-Luce one: openskill.py 6.x's Plackett-Luce mis-rates tied
places (two seats tied first, the third place moves as much as they do; openskill.py issues
#155 and #173, fix proposed in PR #176), and equal totals are common in Hearts. Switching back
is one line (``_MODEL``) and a rebuild, once a release fixes it.

What is rated, and why (every rule here, so one module says it; docs/projections.md too):

- **The table.** A finished game is *rated* when every seat was joined with a registered
  player's key (each seat a different player), the game was played here (not imported), its
  deals were not arranged by its creator (a seed or explicit deals), and its score limit is at
  least :data:`MIN_RATED_SCORE_LIMIT` (a game of one hand is luck, and a quick one is a cheap
  source of games: the farm of issue 32 played seven a minute at a limit of 1), and it has a
  turn clock (a ``time_control`` other than ``off``: Lichess's rule, rated games always have a
  clock). A clockless game is unrated, so it cannot be stalled to save a rating: a rated game's
  silent player is timed out by its clock and, away after ``timeouts_until_away`` timeouts in a
  row, has left (below); only clockless games end as abandoned. A game with a
  guest or a seat created for a bot is not rated for anyone: a table of strategy bots would be
  a free source of points. A registered program that plays with its key is a player.
- **A seat handed to a bot has left.** A player who hands their seat to a bot (at any moment,
  even if they take it back), or whose seat the turn clock hands to its timeout bot (away after
  ``timeouts_until_away`` timeouts in a row), is ranked last in that game, whatever the bot
  scored (the Lichess rule for leaving a rated game, or running out of time: a loss).
  Several who left share the last place. A game every seat left is unrated (nobody played
  it), and a game only one player played out moves only the leavers: a win over players who
  left is no win, or three throw-away accounts leaving to a bot would hand the fourth a win a
  game.
- **Repeated tables stop counting.** A game in which two of the players already shared
  :data:`PAIR_LIMIT` counted games in the :data:`PAIR_WINDOW_US` before it moves nobody: a
  ring of accounts feeding one of them runs dry (per pair, so rotating which accounts sit
  does not reset it).
- **New and beaten accounts weigh little** (issue 42). Each counted game moves a player's
  rating by a *weight* from 0 to 1 (its mu and sigma move that share of the way the model says),
  the mean over the player's opponents at the table of what each is worth: an opponent's
  *trust*, its own weighted games so far over :data:`PROVISIONAL_GAMES` (at least
  :data:`NEW_WEIGHT`, at most 1), halved (:data:`REPEAT_DECAY`) for each of its losses to this
  player in the :data:`REPEAT_WINDOW_US` before, beyond :data:`REPEAT_FREE`. A farm's fresh accounts
  hand their main account wins worth a quarter of a game each, less as they keep losing to it.
- **Provisional.** A rating is *provisional* until the player's weighted games reach
  :data:`PROVISIONAL_GAMES` against :data:`PROVISIONAL_OPPONENTS` distinct opponents who played
  them out: an honest newcomer is established after 10 games against established players
  (each weighs 1 while none of them lost to it more than :data:`REPEAT_FREE` times in the
  week before);
  among newcomers only (a fresh server) it takes about 24 games. The leaderboard ranks
  established ratings only (Lichess lists established players only).
- **Fed players are flagged** (issue 42; the evidence is :mod:`projections.fairplay`'s). Each
  rated record carries, per seat, the tricks with points it could have ducked or taken and how
  many it took. A player who won a game adds up the other seats' figures; once they reach
  :data:`FLAG_TAKES` needless takes and :data:`FLAG_RATE` of the choices, the player is
  *flagged*: from that game on, no game with a flagged player at the table moves anyone, and a
  flagged player is off the leaderboard. An operator who finds the games honest clears the
  flag (``hearts players clear``): the evidence of games finished before the clearing no longer
  counts, so the fold counts their games again (an input of :func:`fold`, ``cleared``).

The projector records each rated table once (:class:`RatedGame`: its finish time, each seat's
player and final total, who left); everything else above is decided by :func:`fold`, a fold of
those records in one deterministic order (finish time, then game id), so a rebuild of the read
models gives the same ratings as the live projector, whatever order the partitions were applied
in. In Hearts the lowest total wins: the totals are the ranks given to the model (lower is
better), so tied totals are ties.

The figure shown and ranked by is the conservative rating ``mu - 3 sigma`` (OpenSkill's
``ordinal``): about 0 for a newcomer (mu 25, sigma 25/3), rising as games make the model surer.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from openskill.models import BradleyTerryFull

# The rules of what counts (see the module's docstring for why). Changing one changes the
# ratings of games already played: rebuild the read models after (hearts projections rebuild).
MIN_RATED_SCORE_LIMIT = 50  # a game with a lower score limit is unrated
PROVISIONAL_GAMES = 10  # counted games before a rating is established...
PROVISIONAL_OPPONENTS = 5  # ...against at least this many distinct opponents
PAIR_LIMIT = 5  # counted games two players may share within PAIR_WINDOW_US...
PAIR_WINDOW_US = 24 * 3600 * 1_000_000  # ...a day: later ones move nobody
NEW_WEIGHT = 0.25  # the least an opponent's result is worth (a brand-new account's)
REPEAT_FREE = 2  # losses to the same player in REPEAT_WINDOW_US that weigh in full...
REPEAT_DECAY = 0.5  # ...each one after them halves the loser's weight for that player
REPEAT_WINDOW_US = 7 * 24 * 3600 * 1_000_000  # a week
FLAG_TAKES = 15  # needless takes behind a player's wins before it is flagged...
FLAG_RATE = 0.8  # ...when they are at least this share of the choices

_MODEL = BradleyTerryFull()  # defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300


def rated_table(
    player_ids: Sequence[str | None],
    score_limit: int,
    *,
    seconds_per_decision: int,
    arranged: bool,
    imported: bool,
) -> bool:
    """Whether a finished game's table is rated: every seat a different registered player, a
    score limit of at least :data:`MIN_RATED_SCORE_LIMIT`, a turn clock (seconds per decision),
    played here on the service's deals."""
    if arranged or imported or score_limit < MIN_RATED_SCORE_LIMIT or seconds_per_decision <= 0:
        return False
    return None not in player_ids and len(set(player_ids)) == len(player_ids) >= 2


@dataclass(frozen=True, slots=True)
class RatedGame:
    """A finished rated table as the ratings need it."""

    game_id: str
    finished_us: int  # the finish time, microseconds since the Unix epoch (the fold's order)
    finished_at: str  # the same, as recorded (ISO-8601 UTC)
    seats: tuple[tuple[str, int], ...]  # per seat: (player id, final total)
    left: frozenset[str] = frozenset()  # the players who handed their seat to a bot
    # Per seat: (needless takes, choices) of projections.fairplay; () when not recorded.
    plays: tuple[tuple[int, int], ...] = ()

    @property
    def order(self) -> tuple[int, str]:
        return (self.finished_us, self.game_id)

    def to_json(self) -> str:
        data: dict = {"g": self.game_id, "t": self.finished_at, "s": [list(s) for s in self.seats]}
        if self.left:  # absent when nobody left: such records read as they did before
            data["l"] = sorted(self.left)
        if self.plays:
            data["f"] = [list(p) for p in self.plays]
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str, finished_us: int) -> RatedGame:
        data = json.loads(raw)
        seats = tuple((str(p), int(t)) for p, t in data["s"])
        left = frozenset(str(p) for p in data.get("l", ()))
        plays = tuple((int(n), int(c)) for n, c in data.get("f", ()))
        return cls(data["g"], finished_us, data["t"], seats, left, plays)


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A player's rating right after one counted game."""

    game_id: str
    finished_at: str
    mu: float
    sigma: float
    rank: int  # the player's place in that game (1 = lowest total; ties share a place)
    players: int
    finished_us: int = 0
    table: tuple[str, ...] = ()  # every player of the game (the pair limit counts these)
    opponents: tuple[str, ...] = ()  # the others who played it out (provisional counts these)
    left: bool = False  # this player left it to a bot (ranked last)
    weight: float = 1.0  # the share of the model's move this game made (see NEW_WEIGHT)

    @property
    def rating(self) -> float:
        return conservative(self.mu, self.sigma)


@dataclass(frozen=True, slots=True)
class PlayerRating:
    player_id: str
    mu: float
    sigma: float
    games: int  # counted rated games
    history: tuple[RatingPoint, ...] = field(default=(), repr=False)
    weight: float = 0.0  # the counted games' weights summed: what provisional counts
    fed: tuple[int, int] = (0, 0)  # (needless takes, choices) behind its wins since cleared
    flagged: str | None = None  # the game that flagged it (None: not flagged)

    @property
    def rating(self) -> float:
        """The conservative rating, mu - 3 sigma."""
        return conservative(self.mu, self.sigma)

    @property
    def opponents(self) -> int:
        """Distinct opponents who played a counted game out with the player."""
        return len({other for point in self.history for other in point.opponents})

    @property
    def provisional(self) -> bool:
        # The weights are sums of halvings and quarters: a small tolerance for float error.
        established = self.weight >= PROVISIONAL_GAMES - 1e-9
        return not established or self.opponents < PROVISIONAL_OPPONENTS


def conservative(mu: float, sigma: float) -> float:
    return mu - 3 * sigma


def places(totals: tuple[int, ...]) -> list[int]:
    """Each seat's place: 1 for the lowest total, tied totals share the better place."""
    return [1 + sum(1 for other in totals if other < total) for total in totals]


def standings(game: RatedGame) -> tuple[int, ...]:
    """What each seat is ranked by: its total, or for a seat that left, a total worse than
    every seat that stayed (those who left tie for last)."""
    stayed = [total for player, total in game.seats if player not in game.left]
    last = max(stayed, default=0) + 1
    return tuple(last if player in game.left else total for player, total in game.seats)


def _over_pair_limit(game: RatedGame, history: dict[str, list[RatingPoint]]) -> bool:
    """Whether two of the game's players already shared PAIR_LIMIT counted games in the window
    before it (read from both players' histories: a game may have moved only one of them)."""
    since = game.finished_us - PAIR_WINDOW_US
    ids = [player for player, _ in game.seats]
    shared: dict[frozenset[str], set[str]] = defaultdict(set)
    for player in ids:
        for point in reversed(history.get(player, ())):
            if point.finished_us <= since:
                break  # the history is in fold order: everything before is older
            for other in point.table:
                if other != player and other in ids:
                    shared[frozenset((player, other))].add(point.game_id)
    return any(len(games) >= PAIR_LIMIT for games in shared.values())


def _trust(rating: PlayerRating | None) -> float:
    """What an opponent's result is worth before repeated losses: its weighted games so far
    over PROVISIONAL_GAMES, between NEW_WEIGHT and 1."""
    weight = rating.weight if rating is not None else 0.0
    return max(NEW_WEIGHT, min(1.0, weight / PROVISIONAL_GAMES))


def _losses(
    points: Iterable[tuple[str, RatingPoint]],
) -> dict[tuple[str, str], list[int]]:
    """(loser, winner) -> the finish times of the counted games where the loser placed below
    the winner, both moved by the game (from the players' rating points)."""
    games: dict[str, list[tuple[str, RatingPoint]]] = defaultdict(list)
    for player, point in points:
        games[point.game_id].append((player, point))
    losses: dict[tuple[str, str], list[int]] = defaultdict(list)
    for game in sorted(games.values(), key=lambda g: (g[0][1].finished_us, g[0][1].game_id)):
        _count_losses(game, losses)
    return losses


def _count_losses(
    game: list[tuple[str, RatingPoint]], losses: dict[tuple[str, str], list[int]]
) -> None:
    for loser, lost in game:
        for winner, won in game:
            if lost.rank > won.rank:
                losses[(loser, winner)].append(lost.finished_us)


def _weight(
    player: str,
    ids: Sequence[str],
    before: dict[str, PlayerRating | None],
    losses: dict[tuple[str, str], list[int]],
    now_us: int,
) -> float:
    """The share of the model's move a game makes for ``player`` (NEW_WEIGHT, REPEAT_*)."""
    since = now_us - REPEAT_WINDOW_US
    worth = []
    for other in ids:
        if other == player:
            continue
        lost = sum(1 for t in losses.get((other, player), ()) if t > since)
        worth.append(_trust(before[other]) * REPEAT_DECAY ** max(0, lost - REPEAT_FREE))
    return sum(worth) / len(worth)


def _feed(
    game: RatedGame,
    stayed: list[str],
    fed: dict[str, tuple[int, int]],
    flagged: dict[str, str],
    cleared: Mapping[str, int],
) -> None:
    """Add the game's fair-play figures behind its winners; flag whoever crosses the line."""
    if len(game.plays) != len(game.seats):
        return  # recorded without them
    ranked = places(standings(game))
    for i, (winner, _) in enumerate(game.seats):
        if ranked[i] != 1 or winner not in stayed or game.finished_us <= cleared.get(winner, -1):
            continue
        needless, choices = fed.get(winner, (0, 0))
        for j, (taken, chances) in enumerate(game.plays):
            if j != i:
                needless, choices = needless + taken, choices + chances
        fed[winner] = (needless, choices)
        if winner not in flagged and needless >= FLAG_TAKES and needless >= FLAG_RATE * choices:
            flagged[winner] = game.game_id


def fold(
    games: Iterable[RatedGame],
    start: dict[str, PlayerRating] | None = None,
    cleared: Mapping[str, int] | None = None,
) -> dict[str, PlayerRating]:
    """Every rated player's rating after ``games``, folded in (finish time, game id) order,
    onto ``start`` (the ratings after earlier games, folded with the same ``cleared``: every
    one of ``games`` must sort after them, so the result equals a fold of all from the
    beginning). ``cleared``: player id -> the finish time (microseconds) up to which an
    operator cleared the player's fair-play evidence."""
    cleared = cleared or {}
    ratings: dict[str, PlayerRating] = dict(start or {})
    history: dict[str, list[RatingPoint]] = {p: list(r.history) for p, r in ratings.items()}
    fed = {p: r.fed for p, r in ratings.items() if r.fed != (0, 0)}
    flagged = {p: r.flagged for p, r in ratings.items() if r.flagged is not None}
    losses = _losses((p, point) for p, points in history.items() for point in points)
    for game in sorted(games, key=lambda g: g.order):
        ids = [player for player, _ in game.seats]
        if len(set(ids)) != len(ids) or len(ids) < 2:
            continue  # not a rated table (the projector records none such; be safe)
        stayed = [p for p in ids if p not in game.left]
        if not stayed:
            continue  # nobody played it
        _feed(game, stayed, fed, flagged, cleared)
        if any(p in flagged for p in ids) or _over_pair_limit(game, history):
            continue  # a flagged player sat at it, or these players met too often lately
        # One player played it out: only the leavers' losses count (a win over them is none).
        moved = set(ids) if len(stayed) >= 2 else set(game.left)
        before = {p: ratings.get(p) for p in ids}
        teams = [
            [_MODEL.rating() if r is None else _MODEL.rating(mu=r.mu, sigma=r.sigma)]
            for r in before.values()
        ]
        ranked = standings(game)
        after = _MODEL.rate(teams, ranks=[float(t) for t in ranked])
        ranks = places(ranked)
        table = tuple(ids)
        recorded: list[tuple[str, RatingPoint]] = []
        for i, player in enumerate(ids):
            if player not in moved:
                continue
            old = before[player]
            weight = _weight(player, ids, before, losses, game.finished_us)
            mu0, sigma0 = (
                (old.mu, old.sigma) if old is not None else (teams[i][0].mu, teams[i][0].sigma)
            )
            mu = mu0 + weight * (after[i][0].mu - mu0)
            sigma = sigma0 + weight * (after[i][0].sigma - sigma0)
            point = RatingPoint(
                game.game_id,
                game.finished_at,
                mu,
                sigma,
                ranks[i],
                len(ids),
                game.finished_us,
                table,
                tuple(p for p in stayed if p != player),
                player in game.left,
                weight,
            )
            history.setdefault(player, []).append(point)
            recorded.append((player, point))
            played = old.games if old is not None else 0
            weighed = old.weight if old is not None else 0.0
            ratings[player] = PlayerRating(player, mu, sigma, played + 1, (), weighed + weight)
        _count_losses(recorded, losses)
    for player in fed.keys() | flagged.keys():
        if player not in ratings:  # flagged before any game moved it
            base = _MODEL.rating()
            ratings[player] = PlayerRating(player, base.mu, base.sigma, 0)
    return {
        p: PlayerRating(
            r.player_id,
            r.mu,
            r.sigma,
            r.games,
            tuple(history.get(p, ())),
            r.weight,
            fed.get(p, (0, 0)),
            flagged.get(p),
        )
        for p, r in ratings.items()
    }
