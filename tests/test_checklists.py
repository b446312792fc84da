"""docs/architecture.md's checklists, followed to the letter (issue 35).

Each test copies the source tree to a temporary folder, makes there one change a maintainer
makes often (a scoring option, a player figure merged by ``max``, a problem type, a view field)
as a scratch, touching only the files its checklist names, and runs the tests that show the
change works end to end: the option in the OpenAPI document and drawn by the property tests, the
figure folded and in the recorded examples, the problem answered by the API, the field in the
document, the client's models and every recorded view. A change that needs a file its checklist
does not name fails here, naming the file: then make the code need it no more, or say so in the
checklist.

The four scratches run at once (one thread each, each test waiting for its own), so the file
takes about as long as the slowest of them.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("domain", "bots", "projections", "service", "clients", "tests", "docs", "bench")
COPIED_FILES = ("README.md", "pyproject.toml")
# The compiled modules come along (copy2 keeps the sources' times, so they stay valid): a run in
# the copy compiles only what the scratch changed.
IGNORED = shutil.ignore_patterns(".pytest_cache", ".hypothesis")
PYTEST = (sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:randomly")
PYTEST += ("-p", "no:cacheprovider", "-x")


class Scratch:
    """A copy of the tree, the edits made to it, and what running its tests said."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.touched: set[str] = set()
        self.log: list[str] = []
        for name in COPIED:
            shutil.copytree(ROOT / name, root / name, ignore=IGNORED)
        for name in COPIED_FILES:
            shutil.copy2(ROOT / name, root / name)
        self.original = {p: (root / p).read_text() for p in ("service/api/examples.json",)}

    # -- edits ------------------------------------------------------------------------------

    def replace(self, path: str, old: str, new: str) -> None:
        file = self.root / path
        text = file.read_text()
        count = text.count(old)
        assert count == 1, f"{path}: the scratch's anchor is there {count} times, not once: {old!r}"
        file.write_text(text.replace(old, new))
        self.touched.add(path)

    def after(self, path: str, anchor: str, text: str) -> None:
        self.replace(path, anchor, anchor + text)

    def before(self, path: str, anchor: str, text: str) -> None:
        self.replace(path, anchor, text + anchor)

    def append(self, path: str, text: str) -> None:
        file = self.root / path
        assert file.exists(), path
        file.write_text(file.read_text() + text)
        self.touched.add(path)

    def create(self, path: str, text: str) -> None:
        file = self.root / path
        assert not file.exists(), path
        file.write_text(text)
        self.touched.add(path)

    # -- runs -------------------------------------------------------------------------------

    def run(self, *args: str, expect_ok: bool = True) -> str:
        env = {
            # Not this run's pytest-xdist worker (nor its current test): a process of its own.
            **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
            # The copy's packages, before the worktree's editable install.
            "PYTHONPATH": f"{self.root}{os.pathsep}{self.root / 'clients/python/src'}",
        }
        done = subprocess.run(
            args, cwd=self.root, env=env, capture_output=True, text=True, timeout=300
        )
        out = done.stdout + done.stderr
        self.log.append(f"$ {' '.join(args[2:] if args[0] == sys.executable else args)}\n{out}")
        if expect_ok:
            assert done.returncode == 0, "\n".join(self.log)[-6000:]
        else:
            assert done.returncode != 0, f"expected a failure:\n{out[-3000:]}"
        return out

    def pytest(self, *args: str, expect_ok: bool = True) -> str:
        return self.run(*PYTEST, *args, expect_ok=expect_ok)

    def record_examples(self, field: str, *, recorded: bool = False) -> None:
        """Record the examples again (unless ``recorded`` already); the diff adds lines naming
        ``field`` and nothing else."""
        if not recorded:
            self.run(sys.executable, "-m", "service.api.examples")
        path = "service/api/examples.json"
        before = self.original[path].splitlines()
        after = (self.root / path).read_text().splitlines()
        changed = [
            line
            for line in difflib.unified_diff(before, after, lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        assert changed, f"the examples recorded again do not show {field}"
        others = [line for line in changed if not line.startswith("+") or field not in line]
        assert not others, f"recording again changed more than {field}: {others[:10]}"
        self.touched.add(path)


def checklist(title: str) -> str:
    """The paragraph of docs/architecture.md's checklists that starts with ``**title**``."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Checklists") :]
    start = section.index(f"**{title}")
    end = section.find("\n\n**", start)
    return " ".join(section[start : end if end != -1 else None].split())


def named(path: str, words: str) -> bool:
    """Whether a checklist's ``words`` name ``path``: the path itself, one of its folders
    written as one (```tests/domain/```), or, for the README, its name."""
    parts = path.split("/")
    folders = ["/".join(parts[:i]) + "/" for i in range(1, len(parts))]
    return (
        path in words.replace("`", "")
        or any(f"`{folder}`" in words for folder in folders)
        or (path == "README.md" and "README" in words)
    )


def assert_followed(scratch: Scratch, title: str) -> None:
    words = checklist(title)
    unnamed = sorted(p for p in scratch.touched if not named(p, words))
    assert not unnamed, f"the checklist {title!r} does not name {unnamed}, which the change touched"


# -- the scratches --------------------------------------------------------------------------


def a_scoring_option(s: Scratch) -> None:
    """``queen_points``: the queen of spades counts 13, or what the table says."""
    s.after(
        "domain/rules.py",
        "    bonus_card: Card | None = None  # Omnibus: JD (or TD) counts minus 10\n",
        "    queen_points: int = 13  # the queen of spades' points (some tables count 10)\n",
    )
    s.before(
        "domain/rules.py",
        '    "shoot_the_sun": OptionSpec(',
        '    "queen_points": OptionSpec(\n'
        '        OptionKind.INTEGER, "Points of the queen of spades", minimum=1, maximum=13\n'
        "    ),\n",
    )
    s.replace(
        "domain/rules.py",
        "        if card is QUEEN_OF_SPADES:\n            return 13\n",
        "        if card is QUEEN_OF_SPADES:\n            return self.queen_points\n",
    )
    s.after("bench/arena_openspiel.py", '    "bonus_card": None,\n', '    "queen_points": 13,\n')
    bonus_row = next(
        line
        for line in (s.root / "docs/rules.md").read_text().splitlines()
        if line.startswith("| `bonus_card` |")
    )
    s.after(
        "docs/rules.md",
        bonus_row + "\n",
        "| `queen_points` | `13` | 1 to 13 | none: a table's habit "
        "| the queen of spades' points |\n",
    )
    s.create(
        "tests/domain/test_queen_points.py",
        '''"""The queen of spades' points as the rules say (tests/test_checklists.py's scratch)."""

from domain.cards import QUEEN_OF_SPADES, Suit
from domain.events import HandScored
from tests.domain.given import opts, seated
from tests.domain.test_play import D1


def test_a_hand_scores_the_queen_at_the_options_points() -> None:
    rules = opts(queen_points=10, pass_cycle="hold_always")
    assert rules.card_points(QUEEN_OF_SPADES) == 10 and rules.moon_points == 23
    story = seated(rules).deal(*D1).play_out()
    scored = story.events[-1]
    assert isinstance(scored, HandScored)
    assert scored.points_taken == tuple(
        sum(1 for c in taken if c.suit is Suit.HEARTS) + 10 * (QUEEN_OF_SPADES in taken)
        for taken in story.hand.taken
    )
''',
    )
    assert_followed(s, "A rule option")
    s.pytest(
        "tests/domain/test_queen_points.py",
        "tests/openapi/test_document.py::test_rule_options_are_the_domains_declaration",
        "tests/domain/test_option_drawing.py::"
        "test_every_value_of_every_option_is_drawn_in_a_valid_option_set",
        "tests/bots/test_simulation.py::test_simulation_scores_hands_as_the_domain_does",
        "tests/domain/test_rules.py::test_every_option_is_declared_once_in_field_order",
        "tests/test_docs_tables.py",
    )


def a_figure_merged_by_max(s: Scratch) -> None:
    """``most_taken_in_a_hand``: the most points a player took in one hand, the worst of all."""
    s.after(
        "projections/stats.py",
        '    "longest_clean_streak": Merge.MAX,\n',
        '    "most_taken_in_a_hand": Merge.MAX,  # points taken in one hand: the worst hand\n',
    )
    s.after(
        "projections/stats.py",
        '    "longest_clean_streak": "high",\n',
        '    "most_taken_in_a_hand": "low",\n',
    )
    s.after(
        "projections/scoreboard.py",
        '            StatDelta(name, "points_taken_sum", scored.points_taken[seat]),\n',
        '            StatDelta(name, "most_taken_in_a_hand", scored.points_taken[seat]),\n',
    )
    s.after(
        "docs/projections.md",
        "(a counter merged by `max`, not summed) | high |\n",
        "| `most_taken_in_a_hand` | the most points the player took in one hand (merged by "
        "`max`) | low |\n",
    )
    s.after(
        "service/web/static/boards.js",
        '  ["longest_clean_streak", "clean streak"],\n',
        '  ["most_taken_in_a_hand", "worst hand"],\n',
    )
    s.append(
        "tests/projections/test_folds.py",
        """

def test_the_most_points_taken_in_a_hand_is_the_worst_hand_not_a_sum():
    deltas = fold_game(_scripted_game()).deltas
    stats = apply_deltas({}, [*deltas, *deltas])  # the game counted twice: a max, not a sum
    assert stats["bob"].count("most_taken_in_a_hand") == 15
    assert stats["ann"].count("most_taken_in_a_hand") == 26  # the moon, at seat 3
    assert stats["random"].figure("most_taken_in_a_hand") == 3
""",
    )
    s.pytest(
        "tests/projections/test_folds.py::test_the_most_points_taken_in_a_hand_is_the_worst_hand"
        "_not_a_sum",
        "tests/projections/test_folds.py::test_the_longest_clean_streak_is_the_best_run_of_"
        "pointless_hands",
        "tests/test_docs_tables.py",
    )
    s.record_examples("most_taken_in_a_hand")
    assert_followed(s, "A new figure of an existing projection")


def a_problem_type(s: Scratch) -> None:
    """``wrong-hand``: a contribution to a hand other than the next (was ``wrong-phase``)."""
    s.before(
        "domain/errors.py",
        "class NotYourTurn(RuleViolation):",
        'class WrongHand(RuleViolation):\n    """A contribution to a hand other than the next: '
        'only the next hand\'s shuffle takes them."""\n\n    code = "wrong-hand"\n\n\n',
    )
    s.after("domain/decider.py", "from .errors import (\n", "    WrongHand,\n")
    s.replace(
        "domain/decider.py",
        'raise WrongPhase(f"contributions are to hand {following}\'s shuffle now")',
        'raise WrongHand(f"contributions are to hand {following}\'s shuffle now")',
    )
    s.after(
        "docs/api.md",
        "| 409 | `wrong-phase` | e.g. passing while playing |\n",
        "| 409 | `wrong-hand` | a contribution to a hand other than the next |\n",
    )
    s.replace(
        "tests/domain/test_contributions.py",
        '.raises(WrongPhase, "hand 1")',
        '.raises(WrongHand, "hand 1")',
    )
    s.replace(
        "tests/domain/test_contributions.py",
        "NotYourSeat, WrongPhase\n",
        "NotYourSeat, WrongHand\n",
    )
    s.replace(
        "tests/api/test_contributions.py",
        'assert wrong.status_code == 409 and wrong.get_json()["code"] == "wrong-phase"',
        'assert wrong.status_code == 409 and wrong.get_json()["code"] == "wrong-hand"\n'
        '    assert client.get("/problems/wrong-hand").status_code == 200',
    )
    assert_followed(s, "A problem type")
    s.pytest(
        "tests/domain/test_contributions.py",
        # Its one backend (tests/backends.py), whichever its name picks.
        "tests/api/test_contributions.py::test_the_servers_seed_is_committed_before_"
        "contributions_are_taken",
        "tests/test_docs_tables.py",
    )


def a_view_field(s: Scratch) -> None:
    """``hands_left``: the hands the hand limit still allows, in every view."""
    s.after(
        "domain/views.py",
        "    winners: tuple[int, ...]\n",
        "    hands_left: int | None = wire(\n"
        '        doc="Hands the hand limit still allows; null without one"\n'
        "    )\n",
    )
    s.after(
        "domain/views.py",
        "        winners=state.winners,\n",
        "        hands_left=None\n"
        "        if rules.hand_limit is None\n"
        "        else rules.hand_limit - state.hand_number,\n",
    )
    # The client's models are checked against the declaration: they lack the field until it is
    # written there too.
    out = s.run(sys.executable, "-c", LACKS)
    assert out.split() == ["models.PublicView", "lacks", "'hands_left':"], out
    s.after(
        "clients/python/src/hearts_client/models.py",
        "    winners: list[int]\n",
        "    hands_left: int | None  # the hands the hand limit still allows\n",
    )
    s.replace(
        "docs/api.md",
        "`winners`, `rules`, `clock`",
        "`winners`, `hands_left` (what the hand limit still allows), `rules`, `clock`",
    )
    s.append(
        "tests/domain/test_views_wire.py",
        """

def test_a_view_shows_the_hands_the_limit_still_allows() -> None:
    for state in _states(5, "standard"):
        assert public_view(state).hands_left == state.rules.hand_limit - state.hand_number
""",
    )
    assert_followed(s, "A view field")
    s.pytest(
        "tests/client/test_models.py",
        "tests/domain/test_views_wire.py",
        "tests/test_docs_tables.py::test_the_api_doc_views_list_names_every_view_field",
    )
    s.run(sys.executable, "-c", DOCUMENTED)  # the API document shows it
    s.record_examples("hands_left", recorded=True)


# What the client's models lack of the public view (the first word of each difference).
LACKS = """
from hearts_client import models
from domain.views import VIEWS
from domain.wire import json_fields
from tests.client.test_models import differences
for line in differences(models.PublicView, json_fields(*VIEWS["PublicView"])):
    print(*line.split()[:3])
"""

# The views' schemas in the OpenAPI document show hands_left, described; then the examples are
# recorded again (in the same process: one start-up less).
DOCUMENTED = """
import fakeredis
from service.api import examples
from service.api.factory import create_app
from service.settings import Settings
app = create_app(Settings(key_prefix="c", sweep_on_start=False), redis=fakeredis.FakeRedis())
schemas = app.test_client().get("/api/v1/openapi.json").json["components"]["schemas"]
for view in ("PublicView", "SeatView"):
    shown = schemas[view]["properties"]["hands_left"]
    assert shown["type"] == "integer" and shown["nullable"] and shown["description"], shown
examples.main()
"""


SCRATCHES: dict[str, Callable[[Scratch], None]] = {
    "a scoring option": a_scoring_option,
    "a figure merged by max": a_figure_merged_by_max,
    "a problem type": a_problem_type,
    "a view field": a_view_field,
}


@pytest.fixture(scope="module")
def scratches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[None]]]:
    """Every scratch started at once, each in its own copy of the tree."""

    def made(name: str) -> None:
        SCRATCHES[name](Scratch(tmp_path_factory.mktemp(re.sub(r"\W+", "-", name))))

    with ThreadPoolExecutor(max_workers=len(SCRATCHES)) as pool:
        yield {name: pool.submit(made, name) for name in SCRATCHES}


@pytest.mark.parametrize("name", list(SCRATCHES))
def test_a_checklist_followed_to_the_letter_makes_a_working_change(
    scratches: dict[str, Future[None]], name: str
) -> None:
    scratches[name].result(timeout=600)


def test_a_file_a_checklist_does_not_name_is_named_in_the_failure() -> None:
    words = checklist("A problem type")
    assert named("domain/errors.py", words) and named("docs/api.md", words)
    assert named("tests/domain/test_contributions.py", words)  # by its folder
    assert not named("service/web/static/boards.js", words)
