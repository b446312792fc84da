"""Named levels for people: ``beginner``, ``casual``, ``strong``, ``master``, weakest first.

A level is a name a person can choose a bot by, standing for one bot spec (``bots.specs``). The
one place the levels are defined; docs/bots.md has the ladder that orders them (each level
measured against the next on duplicate deals).

Every level's budget is work, never time: a seat's bot must play the same move for the same
state and seed wherever it runs (a replay, another worker), which a budget in milliseconds would
not. ``pace_ms`` is the CPU a decision may take at most, so that a table keeps a person's pace:
the level's work budget is chosen to stay well under it (its typical decision is far shorter;
docs/bots.md has the measured figures), and tests/bots/test_levels.py checks it in every preset.

The strategies' own names stay accepted everywhere a level is, and each has the level it plays
at (``level_of``): ``random`` is a beginner, ``heuristic`` casual, ``montecarlo`` strong.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Level:
    name: str
    spec: str  # the bot it stands for (bots/specs.py)
    about: str  # for a person choosing, one line
    pace_ms: float  # CPU per decision at most (a person's pace), on a quiet core


LEVELS: tuple[Level, ...] = (
    Level("beginner", "random", "plays any legal card", 50.0),
    Level("casual", "heuristic", "plays by rules of thumb, never looks ahead", 50.0),
    Level(
        "strong",
        "montecarlo",
        "plays every choice out over sampled deals (3,500 simulated plays a decision)",
        1000.0,
    ),
    Level(
        "master",
        "montecarlo:plays=7000:pass_deals=40",
        "twice the play-outs of strong, and weighs its pass over 40 sampled deals",
        2000.0,
    ),
)

# The level a person's table offers first: the second strongest.
DEFAULT_LEVEL = "strong"

_BY_NAME = {level.name: level for level in LEVELS}
# The strategies whose plain names a seat took before the levels: the level each plays at.
_STRATEGY_LEVEL = {level.spec: level.name for level in LEVELS if ":" not in level.spec}


def level_names() -> list[str]:
    """The levels, weakest first."""
    return [level.name for level in LEVELS]


def get_level(name: str) -> Level | None:
    return _BY_NAME.get(name)


def level_of(bot: str) -> str | None:
    """The level a seat's bot plays at: its own name if a level, its level if a strategy."""
    if bot in _BY_NAME:
        return bot
    return _STRATEGY_LEVEL.get(bot)
