"""Players' names: normalized as RFC 8266 nicknames (domain/names.py) and unique at a table as
compared, not as spelt; invisible, control and bidi characters refused (issue 22)."""

from __future__ import annotations

import pytest

from domain import CreateGame, JoinGame
from domain.errors import InvalidName, NameTaken
from domain.events import GameCreated, PlayerJoined
from domain.names import NameRules, display_name, name_key, same_name
from domain.rules import RuleOptions

from .given import GAME_ID, Story, created, given


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("Ann", "Ann"),  # case kept for display
        ("  Ann   Lee ", "Ann Lee"),  # trimmed, inner runs of spaces collapsed
        ("ＡＮＮ", "ANN"),  # full width folded (NFKC)
        ("Ann\u00a0Lee", "Ann Lee"),  # other spaces are ASCII spaces
        ("e\u0301mile", "émile"),  # composed (NFC)
        ("李小龙", "李小龙"),
        ("O'Brien", "O'Brien"),  # an apostrophe is in the identifier profile (UTS #39)
    ],
)
def test_a_name_is_stored_normalized(sent: str, stored: str) -> None:
    given(created()).when(JoinGame(sent)).then(PlayerJoined(0, stored))


def test_symbols_were_fine_in_a_nickname_and_games_created_then_keep_them() -> None:
    rules = RuleOptions()
    before = Story.of([GameCreated(GAME_ID, rules, (None,) * rules.players, NameRules.NICKNAME)])
    given(before).when(JoinGame("O'Brien 🂡")).then(PlayerJoined(0, "O'Brien 🂡"))
    given(created()).when(JoinGame("O'Brien 🂡")).raises(InvalidName, "U\\+1F0A1")


@pytest.mark.parametrize(
    "name",
    [
        "ann\u200b",  # zero-width space
        "a\u200dnn",  # zero-width joiner
        "\ufeffann",  # byte order mark
        "ann\u202egnp.exe",  # right-to-left override
        "\u2066ann\u2069",  # bidi isolates
        "ann\u200e",  # left-to-right mark
        "a\x1b[2Jb",  # ANSI: clear the screen
        "a\x1b]0;owned\x07",  # OSC: retitle the terminal
        "ann\r\nbob",  # a forged second line
        "ann\tbob",
        "\x00ann",
        "ann\x7f",
        "ann\x9b",  # C1 control sequence introducer
        "\ud800x",  # a lone surrogate
        "ann\u00ad",  # soft hyphen (invisible)
    ],
)
def test_control_invisible_and_bidi_characters_are_refused(name: str) -> None:
    given(created()).when(JoinGame(name)).raises(InvalidName, "may not contain U\\+")


@pytest.mark.parametrize("second", ["ann", "Ann", "ANN", " ann ", "ａｎｎ", "Ａnn"])
def test_given_ann_at_the_table_when_a_variant_of_ann_joins_then_the_name_is_taken(
    second: str,
) -> None:
    story = created().do(JoinGame("ann"))
    given(story).when(JoinGame(second)).raises(NameTaken, "already sits at this table")


def test_given_ann_at_the_table_when_ann_with_a_zero_width_space_joins_then_it_is_refused() -> None:
    story = created().do(JoinGame("ann"))
    given(story).when(JoinGame("ann\u200b")).raises(InvalidName)


def test_given_a_bot_seat_named_after_its_strategy_when_players_join_then_names_stay_free() -> None:
    # A bot's seat carries its strategy's name; uniqueness is among players (the service
    # reserves bot names for statistics, service/app/game_service.py).
    story = created(seats=("random", None, None, None))
    given(story).when(JoinGame("Ann")).then(PlayerJoined(1, "Ann"))


def test_given_a_name_stored_before_names_were_checked_then_it_still_compares() -> None:
    # An old game may hold a name the profile now refuses: it is compared as written.
    old = "\x1b[2Jann"
    story = created().then_(PlayerJoined(0, old))
    assert name_key(old) == old
    given(story).when(JoinGame("ann")).then(PlayerJoined(1, "ann"))


def test_names_compare_ignoring_case_and_width_but_not_letters() -> None:
    assert same_name("Ann", "ａｎｎ")
    assert not same_name("Ann", "Anne")
    assert display_name(display_name(" Ａnn  Lee ")) == display_name(" Ａnn  Lee ")  # idempotent


def _created_before_names_were_checked() -> Story:
    rules = RuleOptions()
    return Story.of([GameCreated(GAME_ID, rules, (None,) * rules.players, NameRules.AS_WRITTEN)])


def test_given_a_game_created_before_names_were_checked_when_joins_come_then_names_are_as_written():
    # Its audit decides its joins again: they must come out as they did when it was played.
    story = (
        given(_created_before_names_were_checked())
        .when(JoinGame(" ＡＮＮ "))
        .then(PlayerJoined(0, "ＡＮＮ"))
    )
    given(story).when(JoinGame("ann")).then(PlayerJoined(1, "ann"))
    given(story).when(JoinGame("ＡＮＮ")).raises(NameTaken)


def test_a_new_game_records_the_rfc_8266_and_uts_39_rule() -> None:
    (event,) = given().when(CreateGame(GAME_ID)).events()
    assert event.names is NameRules.IDENTIFIER
